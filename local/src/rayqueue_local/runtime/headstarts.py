"""A record of the Ray heads started, one line each, for whoever counts them.

When the environment variable :data:`HEAD_STARTS_VAR` names a file, every :meth:`RayHead.start
<rayqueue_local.runtime.raylocal.RayHead.start>` appends a line to it: the time, the pid of the process
that started the head (a plane, a notebook's kernel) and the head's label (``namespace/name``). Planes
started by a process inherit the variable, so one file counts a whole run. The test suite sets it and
prints the count at the end of every run: a head costs some 18 CPU-seconds and 11 s to start on two
idle cores, so the count says what a run costs where its wall time on a shared machine cannot.

One ``write`` of a short line to a file opened for appending, so lines from several processes do not
interleave. A record that cannot be written is logged and skipped: it never fails a start.

Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "head-starts")
    >>> record_head_start("ns/a", {HEAD_STARTS_VAR: path})
    >>> record_head_start("ns/b", {HEAD_STARTS_VAR: path})
    >>> record_head_start("ns/c", {})  # not asked for: nothing written
    >>> [start.label for start in read_head_starts(path)]
    ['ns/a', 'ns/b']
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["HEAD_STARTS_VAR", "HeadStart", "read_head_starts", "record_head_start"]

log = logging.getLogger(__name__)

#: The environment variable naming the file that records head starts (unset: none are recorded).
HEAD_STARTS_VAR = "RAYQUEUE_LOCAL_HEAD_STARTS"


@dataclass(frozen=True)
class HeadStart:
    """One recorded head start: when (seconds since the epoch), by which process, which head.

    Example:
        >>> HeadStart.parse("1796683948.40 4242 ns/workspace")
        HeadStart(at=1796683948.4, pid=4242, label='ns/workspace')
    """

    at: float
    pid: int
    label: str

    @classmethod
    def parse(cls, line: str) -> HeadStart:
        """A record line read back (``<time> <pid> <label>``)."""
        at, pid, label = line.rstrip("\n").split(" ", 2)
        return cls(float(at), int(pid), label)


def record_head_start(label: str, environ: Mapping[str, str] | None = None) -> None:
    """Append a start of head ``label`` to the file ``environ[HEAD_STARTS_VAR]`` names (``os.environ``
    by default); nothing when the variable is unset."""
    path = (os.environ if environ is None else environ).get(HEAD_STARTS_VAR)
    if not path:
        return
    line = f"{time.time():.2f} {os.getpid()} {' '.join(label.split())}\n".encode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except OSError as err:
        log.warning("could not record the start of Ray head %s in %s: %s", label, path, err)


def read_head_starts(path: str) -> list[HeadStart]:
    """The head starts recorded in ``path``, in order; none when there is no such file."""
    try:
        with open(path, encoding="utf-8") as lines:
            return [HeadStart.parse(line) for line in lines if line.strip()]
    except FileNotFoundError:
        return []
