"""What a job really is after :meth:`~rayqueue_sdk.job.rayjob.RayJob.stop`, before anything acts on it.

Ray stops a job asynchronously: ``stop()`` returns once Ray has been asked, and the job reads RUNNING
until Ray's supervisor has ended the driver (and, for a job-owned cluster, until KubeRay has seen that and
ended the RayJob). A ``resubmit()`` in the next notebook cell used to read that RUNNING as "live, nothing to
do", return True, and leave the job STOPPED for good. Here the decision is pure (:func:`settle`) and the
wait is a thin shell (:func:`await_stop`): bounded, said on stderr when it starts and ends, and an
:class:`~rayqueue_sdk.errors.AdmissionTimeout` when the stop does not land in time (nothing is resubmitted
then, and nothing returns True).

Example:
    >>> settle(JobPhase.RUNNING, stop_asked=True)
    <Settling.STOPPING: 'stopping'>
    >>> settle(JobPhase.RUNNING, stop_asked=False), settle(JobPhase.STOPPED, stop_asked=True)
    (<Settling.LIVE: 'live'>, <Settling.ENDED: 'ended'>)
"""

from __future__ import annotations

import enum
import logging
import sys
from collections.abc import Callable
from typing import Protocol

from rayqueue_sdk.admission.phases import JobPhase
from rayqueue_sdk.errors import AdmissionTimeout
from rayqueue_sdk.job.status import RayJobStatus

__all__ = ["STOP_LAND_TIMEOUT", "Settling", "StopAware", "await_stop", "settle"]

log = logging.getLogger(__name__)

#: The most seconds ``resubmit()`` waits for a stop asked through Ray to end the job (Ray ends the driver,
#: then KubeRay the RayJob: seconds; a loaded machine or a slow driver shutdown: tens of seconds).
STOP_LAND_TIMEOUT = 180.0

#: Phases in which a stop asked through Ray has not landed yet (the job still reads as running).
_IN_FLIGHT = frozenset({JobPhase.RUNNING, JobPhase.STARTING, JobPhase.UNKNOWN})


class Settling(enum.StrEnum):
    """Where a job stands for a resubmission: ``LIVE`` (running or queued, no stop in flight: nothing to
    run again), ``STOPPING`` (a stop was asked and the job does not read ended yet: wait) or ``ENDED``
    (terminal: a new run is needed)."""

    LIVE = "live"
    STOPPING = "stopping"
    ENDED = "ended"


def settle(phase: JobPhase, *, stop_asked: bool) -> Settling:
    """Where a job in ``phase`` stands, given whether this handle asked Ray to stop it.

    Example:
        >>> settle(JobPhase.QUEUED, stop_asked=True)   # a queued job is stopped by Kueue, at once
        <Settling.LIVE: 'live'>
    """
    if phase.terminal:
        return Settling.ENDED
    if stop_asked and phase in _IN_FLIGHT:
        return Settling.STOPPING
    return Settling.LIVE


class StopAware(Protocol):
    """A job backend that remembers whether it asked Ray to stop its job (since its last submission)."""

    stop_asked: bool

    def status(self) -> RayJobStatus:
        """The job's typed status."""
        ...


def _say(text: str) -> None:
    log.info("%s", text)
    print(text, file=sys.stderr, flush=True)


def await_stop(
    backend: StopAware,
    name: str,
    *,
    timeout: float = STOP_LAND_TIMEOUT,
    interval: float = 0.5,
    say: Callable[[str], None] = _say,
) -> JobPhase | None:
    """Wait, bounded and said, until a stop asked through Ray has ended the job; returns the phase it
    settled in (at once, saying nothing, when no stop is in flight; ``None`` when none was asked: then the
    job is not even read).

    Raises:
        AdmissionTimeout: the job still read as running after ``timeout`` seconds (``phase="stopping"``).
    """
    from rayqueue_sdk.kube.poll import poll_until  # lazy: only a stop in flight polls

    if not backend.stop_asked:
        return None
    phase = backend.status().phase
    if settle(phase, stop_asked=backend.stop_asked) is not Settling.STOPPING:
        return phase
    say(f"{name}: the stop asked through Ray has not landed yet ({phase}); waiting up to {timeout:g} s")
    last = [phase]

    def ended() -> JobPhase | None:
        last[0] = backend.status().phase
        return last[0] if settle(last[0], stop_asked=True) is not Settling.STOPPING else None

    settled = poll_until(ended, timeout=timeout, interval=interval, max_interval=2.0, wait_first=True)
    if settled is None:
        raise AdmissionTimeout(
            name,
            timeout,
            phase="stopping",
            reason=f"the job still reads {last[0]} after its stop; nothing was resubmitted",
            what="the stop to land",
        )
    say(f"{name}: stop landed ({settled})")
    return settled
