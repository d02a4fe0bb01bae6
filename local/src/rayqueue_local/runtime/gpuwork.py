"""Which emulated GPUs a local Ray head's work computes on, read from ``/proc`` (no GPU needed).

A real dcgm-exporter reports what the GPU does: a job that was given a GPU and runs kernels on it
makes it busy; a job that holds a GPU and sleeps, or a CPU-only job, does not. On a machine without a
GPU the local control plane stands in for that with what the job's processes really do:

- *given a GPU*: the process was started with ``CUDA_VISIBLE_DEVICES`` naming GPU ids, as Ray starts a
  job's entrypoint submitted with ``entrypoint_num_gpus`` (its supervisor holds the GPUs and the
  entrypoint inherits their ids); the ids are Ray's GPU ids on the head, ``0..n-1`` over the
  cluster's GPUs (head first, then the workers', as the local head advertises them all);
- *computes on it*: the process uses at least ``min_cpu_share`` (5 %) of a CPU core over the last
  sampling interval (1 s; its ``utime + stime`` from ``/proc/<pid>/stat``), the stand-in for launching
  kernels; a ``time.sleep`` uses none, and a busy loop keeps well above 5 % even on a machine whose
  cores are shared by many processes.

Processes are those of the head's session and every descendant (``/proc/*/stat``'s parent pid), so
an entrypoint that Ray starts in a session of its own is found too. The environment read is the
one a process was started with (``/proc/<pid>/environ``): a Ray worker that sets
``CUDA_VISIBLE_DEVICES`` for itself at run time (a ``@ray.remote(num_gpus=1)`` task) is not seen;
such work counts through the processes it starts. Linux only; elsewhere nothing is ever busy.

Example:
    >>> work = ProcessGpuWork()
    >>> work.busy_gpus([]) == set()
    True
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path

__all__ = ["ProcessGpuWork", "cpu_seconds", "descendants", "visible_gpus"]

_PROC = Path("/proc")
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat_fields(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` fields after the command name (which may hold spaces); None if gone."""
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system) a process has used, in seconds; None if it is gone.

    Example:
        >>> cpu_seconds(os.getpid()) >= 0
        True
    """
    fields = _stat_fields(pid)
    if fields is None or len(fields) < 13:
        return None
    return (int(fields[11]) + int(fields[12])) / _TICKS


def visible_gpus(pid: int) -> set[int]:
    """The GPU ids in the ``CUDA_VISIBLE_DEVICES`` a process was started with (none: empty).

    Example:
        >>> visible_gpus(-1)
        set()
    """
    try:
        raw = (_PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return set()
    for entry in raw.split(b"\0"):
        if entry.startswith(b"CUDA_VISIBLE_DEVICES="):
            ids = entry.split(b"=", 1)[1].decode(errors="replace")
            return {int(part) for part in ids.split(",") if part.strip().isdigit()}
    return set()


def descendants(roots: Iterable[int]) -> set[int]:
    """``roots`` and every live process below them (by parent pid).

    Example:
        >>> os.getpid() in descendants([os.getpid()])
        True
    """
    children: dict[int, list[int]] = {}
    try:
        entries = [int(p.name) for p in _PROC.iterdir() if p.name.isdigit()]
    except OSError:
        return set(roots)
    for pid in entries:
        fields = _stat_fields(pid)
        if fields is not None and len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(pid)
    found: set[int] = set()
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid in found:
            continue
        found.add(pid)
        todo.extend(children.get(pid, []))
    return found


class ProcessGpuWork:
    """Samples processes' CPU use to say which GPU ids they compute on (see the module's notes).

    ``busy_gpus(pids)`` looks at ``pids`` and their descendants; a process counts once it has been
    sampled twice at least ``interval`` apart (its interpreter's start-up is not work).
    Results are kept for ``interval`` seconds, so one scrape asking for many devices samples once.

    Example:
        >>> ProcessGpuWork(min_cpu_share=0.1).min_cpu_share
        0.1
    """

    def __init__(self, *, min_cpu_share: float = 0.05, interval: float = 1.0) -> None:
        self.min_cpu_share = min_cpu_share
        self.interval = interval
        self._lock = threading.Lock()
        self._samples: dict[int, tuple[float, float]] = {}  # pid -> (cpu seconds, monotonic time)
        self._shares: dict[int, float] = {}  # pid -> its share over the last whole interval
        self._cache: dict[frozenset[int], tuple[float, set[int]]] = {}

    def busy_gpus(self, pids: Iterable[int]) -> set[int]:
        """The GPU ids that some process under ``pids`` was given and computes on now."""
        roots = frozenset(pids)
        if not roots:
            return set()
        now = time.monotonic()
        with self._lock:
            cached = self._cache.get(roots)
            if cached is not None and now - cached[0] < self.interval:
                return set(cached[1])
            busy: set[int] = set()
            tree = descendants(roots)
            for pid in tree:
                gpus = visible_gpus(pid)
                if not gpus:
                    continue
                used = cpu_seconds(pid)
                if used is None:
                    continue
                share = self._share(pid, used, now)
                if share is not None and share >= self.min_cpu_share:
                    busy |= gpus
            self._cache[roots] = (now, busy)
            if len(self._samples) > 256:  # forget processes that are gone
                for pid in [p for p in self._samples if not (_PROC / str(p)).exists()]:
                    del self._samples[pid]
                    self._shares.pop(pid, None)
            return set(busy)

    def _share(self, pid: int, used: float, now: float) -> float | None:
        previous = self._samples.get(pid)
        if previous is None:  # first sight: the share shows from the next sample (start-up is no work)
            self._samples[pid] = (used, now)
            return None
        if now - previous[1] < self.interval:
            # asked again sooner (another scrape, another cluster's query): the last whole interval's
            # share; CPU time moves in 10 ms ticks, so a share over a few ms would read a busy loop as 0
            return self._shares.get(pid)
        self._samples[pid] = (used, now)
        self._shares[pid] = (used - previous[0]) / (now - previous[1])
        return self._shares[pid]
