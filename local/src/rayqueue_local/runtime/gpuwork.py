"""Which emulated GPUs a local Ray head's work computes on, read from ``/proc`` (no GPU needed).

A real dcgm-exporter reports what the GPU does: a job that was given a GPU and runs kernels on it
makes it busy; a job that holds a GPU and sleeps, or a CPU-only job, does not. On a machine without a
GPU the local control plane stands in for that with what the job's processes really do:

- *given a GPU*: Ray handed the process GPU ids, as it does a worker running a
  ``@ray.remote(num_gpus=1)`` task, an actor with GPUs or a Ray Train worker (the caller passes what
  the raylet says, :class:`~rayqueue_local.runtime.raygpus.RayletGpuHolders`), or the process was
  started with ``CUDA_VISIBLE_DEVICES`` naming GPU ids, as Ray starts a job's entrypoint submitted
  with ``entrypoint_num_gpus`` (its supervisor holds the GPUs and the entrypoint inherits their ids),
  and as any process a GPU worker starts inherits the ids Ray set for it; the ids are Ray's GPU ids
  on the head, ``0..n-1`` over the cluster's GPUs (head first, then the workers', as the local head
  advertises them all);
- *computes on it*: over the last sampling interval (1 s) the process used at least
  ``min_cpu_share`` (5 %) of a CPU core (``utime + stime`` of ``/proc/<pid>/stat``), or one of its
  threads wanted at least ``min_thread_demand`` (half) of a core: it ran or waited runnable for one
  (``/proc/<pid>/task/*/schedstat``: on-CPU plus run-queue time). That is the stand-in for launching
  kernels. A busy loop wants a whole core however many processes share the machine's cores, where
  the CPU time it *gets* falls to a few percent on a machine loaded twentyfold; a ``time.sleep``
  wants none, and the idle threads of a Ray worker that holds a GPU want under a tenth of a core
  each even then (measured at a load average of 18: at most 0.09, against 0.98 to 1.0 for a thread
  in a busy loop).

Processes are those of the head's session and every descendant (``/proc/*/stat``'s parent pid), so
an entrypoint that Ray starts in a session of its own is found too. The environment read is the
one a process was started with (``/proc/<pid>/environ``), which is why a Ray worker that sets
``CUDA_VISIBLE_DEVICES`` for itself at run time needs the raylet's word (``held``). A process that
holds a GPU and sleeps is idle, as DCGM would read it. Linux only; elsewhere nothing is ever busy.

Example:
    >>> work = ProcessGpuWork()
    >>> work.busy_gpus([]) == set()
    True
    >>> work.busy_gpus([os.getpid()], held={os.getpid(): {1}})  # first sight: start-up is no work
    set()
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ProcessGpuWork", "cpu_seconds", "descendants", "thread_demand_seconds", "visible_gpus"]

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


def thread_demand_seconds(pid: int) -> dict[int, float]:
    """Thread id -> seconds that thread ran or waited runnable for a core (empty: gone, or no schedstat).

    From ``/proc/<pid>/task/<tid>/schedstat`` (on-CPU and run-queue time, in nanoseconds).

    Example:
        >>> threads = thread_demand_seconds(os.getpid())
        >>> threads == {} or os.getpid() in threads
        True
        >>> thread_demand_seconds(-1)
        {}
    """
    try:
        tasks = list((_PROC / str(pid) / "task").iterdir())
    except OSError:
        return {}
    demand: dict[int, float] = {}
    for task in tasks:
        try:
            fields = (task / "schedstat").read_text().split()
        except OSError:  # a thread that ended meanwhile, or a kernel without schedstat
            continue
        if len(fields) >= 2 and task.name.isdigit():
            demand[int(task.name)] = (int(fields[0]) + int(fields[1])) / 1e9
    return demand


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


@dataclass(frozen=True)
class _Sample:
    """One look at a process: its CPU time used, each thread's demand, and when (monotonic)."""

    used: float
    threads: dict[int, float]
    at: float


class ProcessGpuWork:
    """Samples processes' CPU use and demand to say which GPU ids they compute on (module's notes).

    ``busy_gpus(pids)`` looks at ``pids`` and their descendants; a process counts once it has been
    sampled twice at least ``interval`` apart (its interpreter's start-up is not work).
    Results are kept for ``interval`` seconds, so one scrape asking for many devices samples once.

    Example:
        >>> ProcessGpuWork(min_cpu_share=0.1).min_cpu_share
        0.1
    """

    def __init__(
        self, *, min_cpu_share: float = 0.05, min_thread_demand: float = 0.5, interval: float = 1.0
    ) -> None:
        self.min_cpu_share = min_cpu_share
        self.min_thread_demand = min_thread_demand
        self.interval = interval
        self._lock = threading.Lock()
        self._samples: dict[int, _Sample] = {}
        self._computes: dict[int, bool] = {}  # pid -> whether it computed over the last whole interval
        self._cache: dict[frozenset[int], tuple[float, set[int]]] = {}

    def busy_gpus(self, pids: Iterable[int], held: Mapping[int, Iterable[int]] | None = None) -> set[int]:
        """The GPU ids that some process under ``pids`` was given and computes on now.

        ``held`` maps the pids of Ray workers to the GPU ids Ray handed them at run time (what the
        raylet says); a process's start-up ``CUDA_VISIBLE_DEVICES`` counts as well.
        """
        roots = frozenset(pids)
        if not roots:
            return set()
        given = {pid: set(ids) for pid, ids in (held or {}).items()}
        now = time.monotonic()
        with self._lock:
            cached = self._cache.get(roots)
            if cached is not None and now - cached[0] < self.interval:
                return set(cached[1])
            busy: set[int] = set()
            for pid in descendants(roots):
                gpus = visible_gpus(pid) | given.get(pid, set())
                if gpus and self._computes_now(pid, now):
                    busy |= gpus
            self._cache[roots] = (now, busy)
            if len(self._samples) > 256:  # forget processes that are gone
                for pid in [p for p in self._samples if not (_PROC / str(p)).exists()]:
                    del self._samples[pid]
                    self._computes.pop(pid, None)
            return set(busy)

    def _computes_now(self, pid: int, now: float) -> bool:
        used = cpu_seconds(pid)
        if used is None:
            return False
        previous = self._samples.get(pid)
        if previous is None:  # first sight: it shows from the next sample (start-up is no work)
            self._samples[pid] = _Sample(used, thread_demand_seconds(pid), now)
            return False
        if now - previous.at < self.interval:
            # asked again sooner (another scrape, another cluster's query): the last whole interval's
            # answer; CPU time moves in 10 ms ticks, so a share over a few ms would read a busy loop as 0
            return self._computes.get(pid, False)
        sample = _Sample(used, thread_demand_seconds(pid), now)
        self._samples[pid] = sample
        elapsed = now - previous.at
        wanted = max(
            (
                demand - previous.threads[tid]
                for tid, demand in sample.threads.items()
                if tid in previous.threads
            ),
            default=0.0,
        )
        computes = (
            used - previous.used
        ) / elapsed >= self.min_cpu_share or wanted / elapsed >= self.min_thread_demand
        self._computes[pid] = computes
        return computes
