"""Process hygiene for the local control plane: start, track and reliably stop child processes.

Every long-lived process the control plane starts (Ray heads, Prometheus) is started through
:func:`spawn`, in **its own session and process group**, and recorded in one per-interpreter
:class:`ProcessRegistry`. A recorded process is stopped:

- by :meth:`ManagedProcess.stop` (SIGTERM to its process group, then SIGKILL to whatever of its
  session is left, then a check that nothing of it remains);
- at interpreter exit (``atexit``), which also covers Ctrl-C (``KeyboardInterrupt`` unwinds to exit);
- when the owning interpreter dies without running ``atexit`` (SIGTERM, SIGKILL, a segfault): a small
  **watchdog** subprocess, started with the first recorded process, holds the read end of a pipe whose
  write end only the owner holds. When the owner dies the pipe reaches EOF (or the watchdog sees its
  parent change) and the watchdog kills every recorded session, then exits.

``PR_SET_PDEATHSIG`` is not used: it fires when the *thread* that forked the child exits, and the
controllers start processes from worker threads.

Linux only (it reads ``/proc``), like the rest of the local control plane's process management.

Example:
    >>> proc = spawn(["sleep", "30"], name="demo-sleep")
    >>> proc.alive()
    True
    >>> proc.stop()
    []
    >>> proc.alive()
    False
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from rayqueue_local.errors import LocalControlPlaneError

log = logging.getLogger(__name__)

__all__ = [
    "ManagedProcess",
    "ProcessRegistry",
    "ProcessStartError",
    "free_port",
    "free_port_range",
    "free_ports",
    "registry",
    "session_pids",
    "spawn",
    "tree_memory",
]


class ProcessStartError(LocalControlPlaneError, RuntimeError):
    """A local process (Ray head, Prometheus) could not be started or did not become ready.

    Example:
        >>> isinstance(ProcessStartError("ray head: port in use"), RuntimeError)
        True
    """


# --------------------------------------------------------------------------------------------
# Ports
# --------------------------------------------------------------------------------------------


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct TCP ports that are free on ``host`` right now (all bound at once).

    Example:
        >>> a, b = free_ports(2)
        >>> a != b
        True
    """
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((host, 0))
            sockets.append(sock)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for sock in sockets:
            sock.close()


def free_port(host: str = "127.0.0.1") -> int:
    """One TCP port that is free on ``host`` right now.

    Example:
        >>> 0 < free_port() < 65536
        True
    """
    return free_ports(1, host)[0]


def _bindable(port: int, host: str) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_port_range(size: int, host: str = "127.0.0.1", low: int = 24000, high: int = 32000) -> range:
    """A run of ``size`` consecutive free ports below the kernel's ephemeral range (32768+).

    Ray workers bind ports from such a range; giving each head its own keeps heads apart. The
    default bounds stay clear of Ray's own defaults: worker ports 10002-19999 and the Ray client
    proxier's per-client servers 23000-23999.

    Example:
        >>> r = free_port_range(10)
        >>> len(r)
        10
    """
    rng = random.Random()
    for _ in range(200):
        base = rng.randrange(low, high - size)
        if all(_bindable(p, host) for p in range(base, base + size)):
            return range(base, base + size)
    raise ProcessStartError(f"no run of {size} free ports in [{low}, {high})")


# --------------------------------------------------------------------------------------------
# /proc
# --------------------------------------------------------------------------------------------


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Fields after "(comm)": state ppid pgrp session ...
    return text[text.rfind(")") + 2 :].split()


def session_pids(sid: int, *, include_zombies: bool = False) -> list[int]:
    """Pids of the processes whose session id is ``sid`` (read from ``/proc``).

    Example:
        >>> os.getpid() in session_pids(os.getsid(0))
        True
    """
    pids: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = _stat_fields(int(entry))
        if fields is None or len(fields) < 4:
            continue
        if int(fields[3]) != sid:
            continue
        if fields[0] == "Z" and not include_zombies:
            continue
        pids.append(int(entry))
    return pids


def _memory_of(pid: int) -> tuple[int, int]:
    """(RSS, PSS) in bytes for one process; (0, 0) if it is gone."""
    rss = pss = 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
                break
    except OSError:
        return 0, 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                pss = int(line.split()[1]) * 1024
                break
    except OSError:
        pss = rss
    return rss, pss


def tree_memory(pids: Iterable[int]) -> dict[str, int]:
    """Memory of a set of processes: ``rss`` (summed RSS, counts shared pages once per process),
    ``pss`` (proportional set size, shared pages split: the honest total) and ``processes``.

    Example:
        >>> tree_memory([os.getpid()])["processes"]
        1
    """
    rss = pss = count = 0
    for pid in pids:
        r, p = _memory_of(pid)
        if r or p:
            rss, pss, count = rss + r, pss + p, count + 1
    return {"rss": rss, "pss": pss, "processes": count}


def _signal_session(sid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(sid, sig)
    for pid in session_pids(sid):  # members that moved to another process group
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _wait_gone(sid: int, seconds: float, *, leader_only: bool = False) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pids = session_pids(sid)
        if not pids or (leader_only and sid not in pids):
            return
        time.sleep(0.05)


def _kill_session(sid: int, grace: float) -> list[int]:
    """Stop a session; returns the pids that survived (normally none).

    SIGTERM goes to the session leader alone first: ``ray start --block`` then shuts its own
    children down in order (a SIGTERM to the whole group at once leaves raylet and GCS waiting on
    each other). Once the leader has exited (or after ``grace`` seconds), whatever is left gets
    SIGTERM, one more second, then SIGKILL.
    """
    if not session_pids(sid):
        return []
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(sid, signal.SIGTERM)
    _wait_gone(sid, grace, leader_only=True)
    if session_pids(sid):
        _signal_session(sid, signal.SIGTERM)
        _wait_gone(sid, min(1.0, grace))
    if session_pids(sid):
        _signal_session(sid, signal.SIGKILL)
        _wait_gone(sid, 5.0)
    return session_pids(sid)


# --------------------------------------------------------------------------------------------
# The watchdog (runs as `python -c`, so it must not import this package)
# --------------------------------------------------------------------------------------------

_WATCHDOG_SOURCE = r"""
import os, select, shutil, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
owner = int(sys.argv[1])
sessions = {}
def members(sid):
    out = []
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                t = open("/proc/%s/stat" % e).read()
            except OSError:
                continue
            f = t[t.rfind(")") + 2:].split()
            if int(f[3]) == sid and f[0] != "Z":
                out.append(int(e))
    return out
def hit(sid, sig):
    try:
        os.killpg(sid, sig)
    except OSError:
        pass
    for p in members(sid):
        try:
            os.kill(p, sig)
        except OSError:
            pass
buf = b""
fd = sys.stdin.fileno()
while True:
    ready, _, _ = select.select([fd], [], [], 1.0)
    if ready:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            sid, _, path = line[1:].decode().partition(" ")
            if line[:1] == b"+":
                sessions[int(sid)] = path
            elif line[:1] == b"-":
                sessions.pop(int(sid), None)
    if os.getppid() != owner:
        break
for sid in sessions:
    try:
        os.kill(sid, signal.SIGTERM)
    except OSError:
        pass
end = time.time() + 5
while time.time() < end and any(sid in members(sid) for sid in sessions):
    time.sleep(0.1)
for sid in sessions:
    hit(sid, signal.SIGTERM)
end = time.time() + 1
while time.time() < end and any(members(s) for s in sessions):
    time.sleep(0.1)
for sid in sessions:
    hit(sid, signal.SIGKILL)
time.sleep(0.5)
for path in sessions.values():
    if path:
        shutil.rmtree(path, ignore_errors=True)
"""


class ProcessRegistry:
    """Every session this interpreter started, and the means to stop them whatever happens.

    Use the process-wide instance from :func:`registry`; :func:`spawn` records into it.

    Example:
        >>> reg = registry()
        >>> isinstance(reg.sessions(), dict)
        True
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[int, str] = {}
        self._dirs: dict[int, str] = {}
        self._owner = os.getpid()
        self._watchdog: subprocess.Popen[bytes] | None = None
        atexit.register(self._at_exit)

    def sessions(self) -> dict[int, str]:
        """Recorded sessions: session id -> description."""
        with self._lock:
            return dict(self._sessions)

    def watchdog_pid(self) -> int | None:
        """Pid of the watchdog subprocess, once one is running."""
        return self._watchdog.pid if self._watchdog is not None else None

    def add(self, sid: int, what: str, cleanup_dir: Path | None = None) -> None:
        """Record session ``sid`` (a process started with ``start_new_session=True``).

        ``cleanup_dir`` (a temp dir of that process) is removed by the watchdog after a crash.
        """
        with self._lock:
            self._sessions[sid] = what
            self._dirs[sid] = str(cleanup_dir) if cleanup_dir is not None else ""
            self._tell_watchdog(f"+{sid} {self._dirs[sid]}".rstrip())

    def discard(self, sid: int) -> None:
        """Forget session ``sid`` (after it was stopped)."""
        with self._lock:
            self._sessions.pop(sid, None)
            self._dirs.pop(sid, None)
            self._tell_watchdog(f"-{sid}")

    def stop_all(self, grace: float = 5.0) -> None:
        """Stop every recorded session and remove its cleanup dir (used at exit; controllers stop
        their own first)."""
        for sid, what in self.sessions().items():
            left = _kill_session(sid, grace)
            if left:
                log.warning("processes of %s (session %d) survived SIGKILL: %s", what, sid, left)
                continue
            with self._lock:
                directory = self._dirs.get(sid, "")
            if directory:
                shutil.rmtree(directory, ignore_errors=True)
            self.discard(sid)

    # -- internals --------------------------------------------------------------------------
    def _tell_watchdog(self, line: str) -> None:
        if self._watchdog is None or self._watchdog.poll() is not None:
            self._watchdog = subprocess.Popen(
                [sys.executable, "-c", _WATCHDOG_SOURCE, str(os.getpid())],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # a Ctrl-C to the terminal's group must not reach it first
                close_fds=True,
            )
            assert self._watchdog.stdin is not None
            for sid in self._sessions:
                self._watchdog.stdin.write(f"+{sid} {self._dirs.get(sid, '')}".rstrip().encode() + b"\n")
        assert self._watchdog.stdin is not None
        try:
            self._watchdog.stdin.write(f"{line}\n".encode())
            self._watchdog.stdin.flush()
        except OSError:
            log.warning("process watchdog is gone; sessions are still stopped at exit")

    def _at_exit(self) -> None:
        if os.getpid() != self._owner:  # a forked child must not stop its parent's processes
            return
        self.stop_all()
        if self._watchdog is not None and self._watchdog.stdin is not None:
            with contextlib.suppress(OSError):
                self._watchdog.stdin.close()  # EOF: the watchdog exits (nothing left to kill)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._watchdog.wait(timeout=10)

    def _after_fork_in_child(self) -> None:
        self._lock = threading.Lock()
        self._sessions = {}
        self._dirs = {}
        self._owner = os.getpid()
        self._watchdog = None


_REGISTRY: ProcessRegistry | None = None
_REGISTRY_LOCK = threading.Lock()


def registry() -> ProcessRegistry:
    """The interpreter's :class:`ProcessRegistry` (created on first use).

    Example:
        >>> registry() is registry()
        True
    """
    global _REGISTRY
    with _REGISTRY_LOCK:
        if _REGISTRY is None:
            _REGISTRY = ProcessRegistry()
            os.register_at_fork(after_in_child=_REGISTRY._after_fork_in_child)
        return _REGISTRY


class ManagedProcess:
    """A child process started by :func:`spawn`: its own session, recorded in the registry.

    Example:
        >>> p = spawn([sys.executable, "-c", "import time; time.sleep(30)"], name="nap")
        >>> p.sid == p.pid
        True
        >>> p.stop()
        []
    """

    def __init__(self, popen: subprocess.Popen[bytes], name: str, log_path: Path | None) -> None:
        self.popen = popen
        self.name = name
        self.log_path = log_path
        self.pid = popen.pid
        self.sid = popen.pid  # start_new_session: the child leads its own session and group
        self._stopped = False

    def alive(self) -> bool:
        """Whether anything of this process's session is still running."""
        self.popen.poll()
        return bool(session_pids(self.sid))

    def pids(self) -> list[int]:
        """Pids of every live process of this session (the whole tree it started)."""
        return session_pids(self.sid)

    def memory(self) -> dict[str, int]:
        """:func:`tree_memory` over the session: ``rss``, ``pss`` (bytes) and ``processes``."""
        return tree_memory(self.pids())

    def log_tail(self, lines: int = 30) -> str:
        """The last ``lines`` lines of the process's stdout/stderr log, if it has one."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self, grace: float = 10.0) -> list[int]:
        """Stop the whole session (TERM, then KILL after ``grace`` s); returns survivors (none).

        Idempotent. Only this process's session is touched, never anything else on the machine.
        """
        left = _kill_session(self.sid, grace)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=5)
        if left:
            log.warning("%s: processes survived SIGKILL: %s", self.name, left)
        else:
            registry().discard(self.sid)
        self._stopped = True
        return left

    def __repr__(self) -> str:
        return f"ManagedProcess(name={self.name!r}, pid={self.pid})"


def spawn(
    args: Sequence[str],
    *,
    name: str,
    log_path: Path | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    cleanup_dir: Path | None = None,
) -> ManagedProcess:
    """Start ``args`` in a new session, recorded so that it is stopped whatever happens to us.

    stdout and stderr go to ``log_path`` (or are discarded). ``cleanup_dir`` is removed by the
    watchdog if this interpreter dies without stopping the process (the caller removes it otherwise).

    Example:
        >>> p = spawn(["true"], name="true")
        >>> p.popen.wait()
        0
        >>> p.stop()
        []
    """
    out: IO[Any] | int
    out = open(log_path, "ab") if log_path is not None else subprocess.DEVNULL  # noqa: SIM115
    reg = registry()
    try:
        popen = subprocess.Popen(
            list(args),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else None,
            cwd=str(cwd) if cwd is not None else None,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as err:
        raise ProcessStartError(f"{name}: could not start {args[0]!r}: {err}") from err
    finally:
        if not isinstance(out, int):
            out.close()
    reg.add(popen.pid, name, cleanup_dir)
    return ManagedProcess(popen, name, log_path)
