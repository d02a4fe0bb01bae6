"""Machine-wide slots for starting Ray heads: at most ``count`` starts of all a machine's planes at once.

A head's start is seconds of CPU: its ~20 processes each import Ray (18 CPU-seconds measured for one head
on the 2-core development machine, 11 s to ready with the machine otherwise idle). And ``ray start`` gives
its raylet a hard-coded 30 s to register with the GCS (Ray's ``_private/node.py``), which the raylet does
only once its dashboard agent has imported and answered. Each plane limits its own starts
(``max_starting_heads``), but several planes on one machine (two notebooks, two pytest workers, the demo
beside a notebook) each had their own limit, so four or more heads could start at once on two cores, and a
start under that load missed Ray's 30 s ("The current node timed out during startup").

The slots are lock files in a directory of the user's own under the temp dir; a slot is held with
``flock``, so a plane that dies gives its slot back at once. Where the directory cannot be used, the
start goes ahead without a slot (the plane's own limit still holds) and says so once in the log.

Example:
    >>> import tempfile
    >>> slots = StartSlots(1, Path(tempfile.mkdtemp()))
    >>> with slots.held() as got:
    ...     got, StartSlots(1, slots.directory).try_acquire()
    (True, None)
"""

from __future__ import annotations

import fcntl
import logging
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

__all__ = ["StartSlots"]

log = logging.getLogger(__name__)

#: How often a start waiting for a slot looks again.
_POLL_SECONDS = 0.2


def _default_directory() -> Path:
    return Path(tempfile.gettempdir()) / f"rayqueue-local-start-slots-{os.getuid()}"


class StartSlots:
    """``count`` slots shared by every plane of this user on this machine (by ``directory``).

    ``count`` defaults to the machine's cores: more starts at once than cores makes each slower, not the
    whole sooner.
    """

    def __init__(self, count: int | None = None, directory: Path | None = None) -> None:
        self.count = max(1, count if count is not None else (os.cpu_count() or 1))
        self.directory = directory or _default_directory()
        self._warned = False

    def __repr__(self) -> str:
        return f"StartSlots({self.count}, {str(self.directory)!r})"

    def try_acquire(self) -> IO[bytes] | None:
        """A free slot's open lock file (held until closed), or ``None`` when all are taken.

        Raises ``OSError`` when the directory cannot be used.
        """
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        for index in range(self.count):
            handle = open(self.directory / f"slot-{index}.lock", "ab")  # noqa: SIM115 (held past return)
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            return handle
        return None

    @contextmanager
    def held(self, cancelled: Callable[[], bool] = lambda: False) -> Iterator[bool]:
        """Hold a slot for the ``with`` block, waiting for one; yields ``False`` when ``cancelled()``
        became true while waiting (the block should then start nothing). Where the directory cannot be
        used it yields ``True`` holding nothing (see the module docstring)."""
        handle: IO[bytes] | None = None
        try:
            while True:
                try:
                    handle = self.try_acquire()
                except OSError as err:
                    if not self._warned:
                        log.warning(
                            "start slots in %s unusable (%s): starting without one", self.directory, err
                        )
                        self._warned = True
                    yield True
                    return
                if handle is not None:
                    yield True
                    return
                if cancelled():
                    yield False
                    return
                time.sleep(_POLL_SECONDS)
        finally:
            if handle is not None:
                handle.close()  # closing the file gives the flock back
