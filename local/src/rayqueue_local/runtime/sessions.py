"""Process sessions on Linux: who belongs to one (read from ``/proc``) and how to stop them all.

Every process the control plane starts leads its own session (``start_new_session=True``), so a
session id names a whole process tree, including members that moved to another process group.
Stopping goes in three steps: SIGTERM to each session leader alone (``ray start --block`` then shuts
its children down in order; a SIGTERM to the whole group at once leaves raylet and GCS waiting on
each other), after ``grace`` seconds SIGTERM to whatever is left, one more second, then SIGKILL.

Stdlib only: :mod:`rayqueue_local.runtime.watchdog` runs it in a bare interpreter.

Example:
    >>> os.getpid() in session_pids(os.getsid(0))
    True
    >>> stop_sessions([])
    {}
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterable
from pathlib import Path

__all__ = ["member_states", "session_pids", "signal_session", "stop_sessions"]


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
        >>> session_pids(-1)
        []
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


def member_states(sid: int, name: str) -> list[str]:
    """The states (``R``, ``S``, ``Z``, ...) of the members of session ``sid`` whose command is ``name``
    (``/proc/<pid>/comm``): ``Z`` for one that has exited and is not yet reaped by its parent.

    Example:
        >>> member_states(os.getsid(0), "no-such-command")
        []
    """
    states: list[str] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2 :].split()
        if len(fields) >= 4 and int(fields[3]) == sid and text[text.find("(") + 1 : text.rfind(")")] == name:
            states.append(fields[0])
    return states


def signal_session(sid: int, sig: int) -> None:
    """Send ``sig`` to the process group ``sid`` and to every member of session ``sid``.

    Example:
        >>> signal_session(-1, 0)  # nothing to signal: no error
    """
    if sid > 0:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(sid, sig)
    for pid in session_pids(sid):  # members that moved to another process group
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _wait_gone(sids: list[int], seconds: float, *, leaders_only: bool = False) -> None:
    """Wait up to ``seconds`` until every session in ``sids`` is empty (or has lost its leader)."""

    def gone(sid: int) -> bool:
        pids = session_pids(sid)
        return not pids or (leaders_only and sid not in pids)

    deadline = time.monotonic() + seconds
    while not all(gone(sid) for sid in sids) and time.monotonic() < deadline:
        time.sleep(0.05)


def stop_sessions(sids: Iterable[int], grace: float = 5.0) -> dict[int, list[int]]:
    """Stop every session in ``sids`` (all at once, as the module describes).

    Returns the pids that survived SIGKILL, by session (normally ``{}``).

    Example:
        >>> import subprocess, sys
        >>> child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"],
        ...                          start_new_session=True)
        >>> stop_sessions([child.pid], grace=1.0)
        {}
        >>> child.wait()
        -15
    """
    live = [sid for sid in sids if session_pids(sid)]
    for sid in live:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(sid, signal.SIGTERM)
    _wait_gone(live, grace, leaders_only=True)
    for sig, seconds in ((signal.SIGTERM, min(1.0, grace)), (signal.SIGKILL, 5.0)):
        live = [sid for sid in live if session_pids(sid)]
        for sid in live:
            signal_session(sid, sig)
        _wait_gone(live, seconds)
    return {sid: pids for sid in live if (pids := session_pids(sid))}
