"""An exclusive lock on a state directory, so that two control planes never share one.

Two ``rayqueue local up`` (or two ``LocalControlPlane``) on one state directory would each keep
their own copy of the objects in memory and append to the same log: a split brain that loses
writes. :class:`StateDirectoryLock` takes a ``flock(LOCK_EX | LOCK_NB)`` on ``<dir>/lock``
(``fcntl``, in the standard library; the kernel releases it when the process dies, so a crash
leaves no stale lock) and records the holder's pid in the file for the error message.

Example:
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> first = StateDirectoryLock(d).acquire()
    >>> try:
    ...     StateDirectoryLock(d).acquire()
    ... except StateDirectoryInUseError as err:
    ...     err.pid == os.getpid()
    True
    >>> first.release(); StateDirectoryLock(d).acquire().release()
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from rayqueue_local.errors import LocalControlPlaneError

__all__ = ["StateDirectoryInUseError", "StateDirectoryLock"]

_LOCK_FILE = "lock"


class StateDirectoryInUseError(LocalControlPlaneError):
    """Another control plane holds the state directory's lock.

    Example:
        >>> str(StateDirectoryInUseError("/s", 42)).split(":")[0]
        'the state directory /s is in use by another local control plane (pid 42)'
    """

    def __init__(self, state_dir: str | os.PathLike[str], pid: int | None) -> None:
        holder = f"pid {pid}" if pid else "pid unknown"
        super().__init__(
            f"the state directory {state_dir} is in use by another local control plane ({holder}): stop "
            "it (`rayqueue local down`) or choose another directory (--state-dir / state_dir=)"
        )
        self.state_dir = str(state_dir)
        self.pid = pid


class StateDirectoryLock:
    """The exclusive lock of one state directory (``acquire()`` / ``release()``, or ``with``).

    Example:
        >>> import tempfile
        >>> with StateDirectoryLock(tempfile.mkdtemp()) as lock:
        ...     lock.held
        True
    """

    def __init__(self, state_dir: str | os.PathLike[str]) -> None:
        self.state_dir = Path(state_dir)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock now."""
        return self._fd is not None

    def acquire(self) -> StateDirectoryLock:
        """Take the lock or raise :class:`StateDirectoryInUseError` at once (no waiting); returns self."""
        if self._fd is not None:
            return self
        fd = os.open(self.state_dir / _LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                holder = os.read(fd, 32).decode("ascii", "replace").strip()
            finally:
                os.close(fd)
            pid = int(holder) if holder.isdigit() else None
            raise StateDirectoryInUseError(self.state_dir, pid) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return self

    def release(self) -> None:
        """Give the lock back (closing the file releases the ``flock``)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> StateDirectoryLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
