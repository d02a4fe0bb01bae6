r"""Whether a job resumed from a checkpoint, and from where: read from Ray Train's own words in its logs.

A Ray Train run keeps its checkpoints under ``RunConfig(storage_path=..., name=...)`` (``s3://bucket/prefix``
and the run name). When a preempted job is admitted again, KubeRay starts a fresh cluster and submits the
same entrypoint; Ray Train finds the run's snapshot in that folder and hands the latest checkpoint to the
training function (``ray.train.get_checkpoint()``). Its controller logs
``A run snapshot was found in storage folder at: '<path>'`` [ray python/ray/train/v2/_internal/execution/
checkpoint/checkpoint_manager.py ``_maybe_load_state_from_storage``], and the job's logs carry that line.
:func:`find_resumption` reads it (and, when the training function says so, the epoch it starts at, as
codeflare-sdk's ``train_with_checkpoints.py`` prints ``RESUMING FROM CHECKPOINT - Starting at epoch N``);
:class:`ResumeWatch` asks the job's logs while it runs or after it ended, at most every
:data:`RECHECK_SECONDS` until it has an answer, so that ``RayJob.status()`` can say
"resumed from ..." without reading the logs at every poll.

Example:
    >>> logs = ("(TrainController pid=812) A run snapshot was found in storage folder at: "
    ...         "'ray-checkpoints/mnist-demo/mnist-checkpointing-run'\n"
    ...         "RESUMING FROM CHECKPOINT - Starting at epoch 3")
    >>> r = find_resumption(logs)
    >>> str(r)
    'resumed from the Ray Train run at ray-checkpoints/mnist-demo/mnist-checkpointing-run (epoch 3)'
    >>> find_resumption("NO CHECKPOINT FOUND - Starting fresh training from epoch 0") is None
    True
"""

from __future__ import annotations

import dataclasses
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from rayqueue_sdk.admission.cluster import JobPhase
from rayqueue_sdk.errors import RayQueueError
from rayqueue_sdk.job.status import RayJobStatus

__all__ = ["RECHECK_SECONDS", "ResumeWatch", "Resumption", "find_resumption", "with_resumption"]

log = logging.getLogger(__name__)

#: The phases in which a job's logs may tell of a resumption.
_WITH_LOGS = frozenset({JobPhase.RUNNING, JobPhase.SUCCEEDED, JobPhase.FAILED})

#: How often :class:`ResumeWatch` reads the logs again while it has no answer.
RECHECK_SECONDS = 10.0

_SNAPSHOT = re.compile(r"A run snapshot was found in storage folder at: '([^']+)'")
_EPOCH = re.compile(r"RESUMING FROM CHECKPOINT\W+Starting at epoch (\d+)", re.IGNORECASE)
_STORAGE = re.compile(r"^.*?Storage path: (\S+)\s*$", re.MULTILINE)
_RUN = re.compile(r"^.*?Run name: (\S+)\s*$", re.MULTILINE)
_CHECKPOINT_DIR = re.compile(r"\b(checkpoint_[0-9][0-9_.:-]*\d)\b")


@dataclass(frozen=True)
class Resumption:
    """A run that resumed: ``storage`` is Ray Train's run folder (storage path and run name), ``epoch`` the
    epoch the training function says it starts at, ``checkpoint`` the checkpoint folder when one is named."""

    storage: str
    epoch: int | None = None
    checkpoint: str | None = None

    def __str__(self) -> str:
        where = f"resumed from the Ray Train run at {self.storage}"
        details = [f"epoch {self.epoch}"] if self.epoch is not None else []
        if self.checkpoint:
            details.append(self.checkpoint)
        return where + (f" ({', '.join(details)})" if details else "")


def find_resumption(logs: str) -> Resumption | None:
    r"""The last resumption the logs tell of (a run may be preempted more than once), or ``None``.

    Ray Train's snapshot line names the run folder; without it (Ray Train's controller logs at INFO, which
    a cluster may not forward) the training function's "RESUMING FROM CHECKPOINT" line is enough, and the
    run folder is the ``Storage path:`` and ``Run name:`` the peer's script prints first.

    Example:
        >>> find_resumption("A run snapshot was found in storage folder at: 'b/p/run'").storage
        'b/p/run'
        >>> str(find_resumption("Storage path: s3://b/p\nRun name: run\n"
        ...                     "RESUMING FROM CHECKPOINT - Starting at epoch 2"))
        'resumed from the Ray Train run at s3://b/p/run (epoch 2)'
    """
    snapshots = list(_SNAPSHOT.finditer(logs))
    epochs = list(_EPOCH.finditer(logs))
    if not snapshots and not epochs:
        return None
    if snapshots:
        storage, after = snapshots[-1].group(1), logs[snapshots[-1].end() :]
    else:
        path, run = _STORAGE.findall(logs), _RUN.findall(logs)
        storage = f"{path[-1].rstrip('/')}/{run[-1]}" if path and run else "its storage path"
        after = logs[epochs[-1].start() :]
    epoch = epochs[-1] if epochs else None
    checkpoint = _CHECKPOINT_DIR.search(after)
    return Resumption(
        storage=storage,
        epoch=int(epoch.group(1)) if epoch else None,
        checkpoint=checkpoint.group(1) if checkpoint else None,
    )


class ResumeWatch:
    """Reads a job's logs for a :class:`Resumption` at most every ``recheck`` seconds until it has a complete
    one: Ray Train's snapshot line comes before the training function says which epoch it starts at, so a
    resumption without an epoch is read again later (``clock`` is injectable for tests).

    Example:
        >>> calls = []
        >>> watch = ResumeWatch(recheck=10, clock=lambda: 0.0)
        >>> watch.check("raysubmit_1", lambda: calls.append(1) or "nothing yet") is None
        True
        >>> watch.check("raysubmit_1", lambda: calls.append(1) or "x"), len(calls)   # not again so soon
        (None, 1)
    """

    def __init__(
        self, *, recheck: float = RECHECK_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._recheck = recheck
        self._clock = clock
        self._found: dict[str, Resumption] = {}
        self._asked: dict[str, float] = {}

    def check(self, job_id: str, read_logs: Callable[[], str]) -> Resumption | None:
        """The resumption of Ray job ``job_id``: remembered once complete; else the logs read now, unless
        they were read less than ``recheck`` seconds ago (then what is known so far)."""
        known = self._found.get(job_id)
        if known is not None and known.epoch is not None:
            return known
        now = self._clock()
        last = self._asked.get(job_id)
        if last is not None and now - last < self._recheck:
            return known
        self._asked[job_id] = now
        found = find_resumption(read_logs()) or known
        if found is not None:
            self._found[job_id] = found
        return found


def with_resumption(status: RayJobStatus, watch: ResumeWatch, read_logs: Callable[[], str]) -> RayJobStatus:
    """``status`` with ``resumed_from`` and its explanation ending "; resumed from ...", when a job-owned
    job's logs say it resumed from a Ray Train checkpoint; ``status`` unchanged otherwise (or when the logs
    cannot be read now: that is for :meth:`~rayqueue_sdk.job.rayjob.RayJob.logs` to report).

    Example:
        >>> st = RayJobStatus("j", "ds", JobPhase.RUNNING, "running", job_id="raysubmit_1", owns_cluster=True)
        >>> logs = "A run snapshot was found in storage folder at: 'ckpt/run'"
        >>> with_resumption(st, ResumeWatch(), lambda: logs).explanation
        'running; resumed from the Ray Train run at ckpt/run'
    """
    if not status.owns_cluster or status.phase not in _WITH_LOGS or not status.job_id:
        return status  # only a job-owned RayJob is run again by Kueue after a preemption
    try:
        found = watch.check(status.job_id, read_logs)
    except RayQueueError as err:
        log.debug("no logs of %s to read for a resumption yet: %s", status.name, err)
        return status
    if found is None:
        return status
    return dataclasses.replace(status, resumed_from=str(found), explanation=f"{status.explanation}; {found}")
