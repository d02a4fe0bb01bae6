"""Process hygiene for the local control plane: start, track and reliably stop child processes.

Every long-lived process the control plane starts (Ray heads, Prometheus) is started through
:func:`spawn`, in **its own session and process group**, and recorded in one per-interpreter
:class:`ProcessRegistry`. A recorded process is stopped:

- by :meth:`ManagedProcess.stop` (SIGTERM to its process group, then SIGKILL to whatever of its
  session is left, then a check that nothing of it remains);
- at interpreter exit (``atexit``), which also covers Ctrl-C (``KeyboardInterrupt`` unwinds to exit);
- when the owning interpreter dies without running ``atexit`` (SIGTERM, SIGKILL, a segfault): a small
  **watchdog** subprocess (:mod:`rayqueue_local.runtime.watchdog`), started with the first recorded
  process, holds the read end of a pipe whose write end only the owner holds. When the owner dies
  the pipe reaches EOF (or the watchdog sees its parent change) and the watchdog kills every
  recorded session, then exits.

Sessions are found and stopped by :mod:`rayqueue_local.runtime.sessions`.

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
import socket
import subprocess
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from rayqueue_local.apimachinery.crilog import format_record, parse_record
from rayqueue_local.errors import LocalControlPlaneError
from rayqueue_local.runtime.sessions import session_pids, stop_sessions

log = logging.getLogger(__name__)

#: The directory holding the ``rayqueue_local`` package (the watchdog must import this same copy).
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]

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
# Memory (from /proc)
# --------------------------------------------------------------------------------------------


def _memory_of(pid: int) -> tuple[int, int]:
    """(RSS, PSS) in bytes for one process; (0, 0) if it is gone."""
    try:
        rss = _proc_kib(pid, "status", "VmRSS:")
    except OSError:
        return 0, 0
    try:
        pss = _proc_kib(pid, "smaps_rollup", "Pss:")
    except OSError:
        pss = rss
    return rss, pss


def _proc_kib(pid: int, name: str, key: str) -> int:
    """The ``key`` line of ``/proc/<pid>/<name>`` (a size in kB) in bytes; 0 without that line."""
    for line in Path(f"/proc/{pid}/{name}").read_text().splitlines():
        if line.startswith(key):
            return int(line.split()[1]) * 1024
    return 0


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


def _kill_session(sid: int, grace: float) -> list[int]:
    """Stop one session (:func:`~rayqueue_local.runtime.sessions.stop_sessions`); returns survivors."""
    return stop_sessions([sid], grace).get(sid, [])


def _watchdog_env() -> dict[str, str]:
    """Our environment, with this copy of rayqueue_local first on the child's import path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_PACKAGE_ROOT), env.get("PYTHONPATH")) if p)
    return env


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
                [sys.executable, "-m", "rayqueue_local.runtime.watchdog", str(os.getpid())],
                env=_watchdog_env(),
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

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        name: str,
        log_path: Path | None,
        pumps: Sequence[threading.Thread] = (),
    ) -> None:
        self.popen = popen
        self.name = name
        self.log_path = log_path
        #: whether the log is in the CRI format (:mod:`rayqueue_local.apimachinery.crilog`)
        self.cri_log = bool(pumps)
        self.pid = popen.pid
        self.sid = popen.pid  # start_new_session: the child leads its own session and group
        self._pumps = list(pumps)
        self._stopped = False

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the process to exit and its output to be written; returns its exit status.

        Raises ``subprocess.TimeoutExpired`` after ``timeout`` seconds.
        """
        code = self.popen.wait(timeout=timeout)
        self.flush_log()
        return code

    def flush_log(self, timeout: float = 5.0) -> None:
        """Wait (up to ``timeout`` s) until everything the process printed is in its log file."""
        for pump in self._pumps:
            pump.join(timeout=timeout)

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
        if not self.cri_log:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        text = b"".join(
            r.text for r in map(parse_record, self.log_path.read_bytes().splitlines(keepends=True)) if r
        )
        return "\n".join(text.decode(errors="replace").splitlines()[-lines:])

    def stop(self, grace: float = 10.0) -> list[int]:
        """Stop the whole session (TERM, then KILL after ``grace`` s); returns survivors (none).

        Idempotent. Only this process's session is touched, never anything else on the machine.
        """
        left = _kill_session(self.sid, grace)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=5)
        self.flush_log()
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
    cri_log: bool = False,
) -> ManagedProcess:
    """Start ``args`` in a new session, recorded so that it is stopped whatever happens to us.

    stdout and stderr go to ``log_path`` (or are discarded): as they are, or with ``cri_log`` as a
    container runtime writes them (one timestamped record per line and stream,
    :mod:`rayqueue_local.apimachinery.crilog`), through two pipes read by threads of this
    interpreter. ``cleanup_dir`` is removed by the watchdog if this interpreter dies without stopping
    the process (the caller removes it otherwise).

    Example:
        >>> p = spawn(["true"], name="true")
        >>> p.popen.wait()
        0
        >>> p.stop()
        []
    """
    out: IO[Any] | int
    piped = cri_log and log_path is not None
    if piped:
        out = subprocess.PIPE
    elif log_path is not None:
        out = open(log_path, "ab")  # noqa: SIM115 - closed below, once the child has it
    else:
        out = subprocess.DEVNULL
    reg = registry()
    try:
        popen = subprocess.Popen(
            list(args),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.PIPE if piped else subprocess.STDOUT,
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
    pumps: list[threading.Thread] = []
    if piped:
        assert log_path is not None and popen.stdout is not None and popen.stderr is not None
        pumps = _start_pumps(name, log_path, {"stdout": popen.stdout, "stderr": popen.stderr})
    return ManagedProcess(popen, name, log_path, pumps)


#: A line longer than this is written as partial records, as container runtimes split long lines.
_MAX_RECORD = 16 * 1024


def _start_pumps(name: str, log_path: Path, streams: Mapping[str, IO[bytes]]) -> list[threading.Thread]:
    """One thread per stream copying what the process prints into ``log_path`` as CRI records."""
    sink = open(log_path, "ab", buffering=0)  # noqa: SIM115 - closed by the last pump
    lock = threading.Lock()
    left = [len(streams)]

    def pump(stream_name: str, source: IO[bytes]) -> None:
        pending = b""
        try:
            while True:
                chunk = os.read(source.fileno(), 65536)
                if not chunk:
                    break
                pending += chunk
                lines = pending.split(b"\n")
                pending = lines.pop()
                records = [format_record(None, stream_name, line) for line in lines]
                while len(pending) >= _MAX_RECORD:
                    records.append(format_record(None, stream_name, pending[:_MAX_RECORD], partial=True))
                    pending = pending[_MAX_RECORD:]
                if records:
                    with lock:
                        sink.write(b"".join(records))
            if pending:  # the last bytes, without a newline: a full record, as containerd writes it
                with lock:
                    sink.write(format_record(None, stream_name, pending))
        except OSError:
            log.debug("%s: reading its %s ended with an error", name, stream_name, exc_info=True)
        finally:
            source.close()
            with lock:
                left[0] -= 1
                if left[0] == 0:
                    sink.close()

    threads = [
        threading.Thread(target=pump, args=(n, s), name=f"log-{name}-{n}", daemon=True)
        for n, s in streams.items()
    ]
    for thread in threads:
        thread.start()
    return threads
