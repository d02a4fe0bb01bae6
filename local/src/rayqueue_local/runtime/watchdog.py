"""The process watchdog: stops the owner's sessions when the owner dies without doing it itself.

:class:`~rayqueue_local.runtime.processes.ProcessRegistry` starts it with the first recorded process
as ``python -m rayqueue_local.runtime.watchdog OWNER_PID``, in a session of its own, and writes one
line per change to its stdin: ``+SID [CLEANUP_DIR]`` when a session starts, ``-SID`` when it was
stopped. Only the owner holds the write end of that pipe, so when the owner dies (SIGKILL, a crash)
the watchdog reads EOF, or notices that its parent changed; it then stops every session still
recorded (:func:`~rayqueue_local.runtime.sessions.stop_sessions`), removes their cleanup
directories and exits. An owner that stops its sessions itself closes the pipe with none recorded,
and the watchdog exits having nothing to do.

It ignores SIGINT (a Ctrl-C in the terminal is the owner's to handle). It imports only the stdlib
and :mod:`~rayqueue_local.runtime.sessions` (``import rayqueue_local`` is cheap), so it starts fast.

Example:
    >>> sessions = {}
    >>> apply_line(sessions, "+4242 /tmp/ray-x"); apply_line(sessions, "+4343")
    >>> apply_line(sessions, "-4242"); sessions
    {4343: ''}
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import sys
from collections.abc import Sequence

from rayqueue_local.runtime.sessions import stop_sessions

__all__ = ["apply_line", "main", "watch"]


def apply_line(sessions: dict[int, str], line: str) -> None:
    """Apply one ``+SID [DIR]`` or ``-SID`` line of the owner to ``sessions`` (sid -> cleanup dir).

    Example:
        >>> s = {}
        >>> apply_line(s, "+7"); apply_line(s, "bogus"); s
        {7: ''}
    """
    op, sid, path = line[:1], *line[1:].partition(" ")[::2]
    if not sid.isdigit():
        return
    if op == "+":
        sessions[int(sid)] = path
    elif op == "-":
        sessions.pop(int(sid), None)


def watch(owner: int, fd: int, *, poll: float = 1.0) -> dict[int, str]:
    """Read the owner's lines from ``fd`` until EOF or until our parent is no longer ``owner``;
    returns the sessions still recorded then (sid -> cleanup dir)."""
    sessions: dict[int, str] = {}
    buffer = b""
    while True:
        ready, _, _ = select.select([fd], [], [], poll)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                apply_line(sessions, line.decode(errors="replace"))
        if os.getppid() != owner:
            break
    return sessions


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m rayqueue_local.runtime.watchdog OWNER_PID``: watch stdin, then clean up."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1 or not args[0].isdigit():
        print("usage: python -m rayqueue_local.runtime.watchdog OWNER_PID", file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sessions = watch(int(args[0]), sys.stdin.fileno())
    stop_sessions(sessions)
    for path in sessions.values():
        if path:
            shutil.rmtree(path, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
