"""A job submitted to a RayCluster that is still queued or starting: it waits for the cluster, then goes.

``RayJob(cluster_name=...).submit()`` on a cluster whose head is not up yet (Kueue holds it in its queue,
or KubeRay is starting it) does not fail: :class:`PendingSubmission` waits for the cluster on a background
thread with :func:`~rayqueue_sdk.cluster.wait.wait_for_cluster` (the same watch, the same words and the
same typed errors as ``Cluster.wait_ready()``), then submits the job through Ray's job client with the
submission id chosen up front. Until then the job's status says that it waits for its cluster, in Kueue's
words and with the queue position (:meth:`PendingSubmission.status`).

The wait is bounded (``cluster_timeout``, default
:data:`~rayqueue_sdk.cluster.status.DEFAULT_TIMEOUT`): past it, or when the cluster is deleted,
deactivated or cannot start, nothing is submitted and the job reads ``FAILED`` (``DELETED`` for a deleted
cluster); ``RayJob.wait()`` raises the wait's own error (:class:`~rayqueue_sdk.errors.AdmissionTimeout`,
:class:`~rayqueue_sdk.errors.ClusterDeletedError`, ...). ``stop()`` before the submission cancels it.

Why not KubeRay's way (a ``RayJob`` with ``clusterSelector``)? Kueue does not manage such a RayJob (it
skips it: it cannot queue work on a cluster that already holds its quota), so KubeRay would wait for the
cluster without a bound and without a reason to show, the cluster's deletion would leave it waiting
forever, and a local ``working_dir`` would have to fit a Secret; the job client the SDK already uses on an
existing cluster needs none of that. The price: the wait lives in this Python process. A script that ends
first waits for the submission at exit (bounded by the same timeout; Ctrl-C abandons it and submits
nothing); a notebook kernel that is shut down or restarted first submits nothing.

Example:
    >>> from rayqueue_sdk.admission.cluster import ClusterPhase
    >>> from rayqueue_sdk.cluster.status import ClusterStatus
    >>> queued = ClusterStatus("ws", "ds", ClusterPhase.QUEUED, False,
    ...     "queued in LocalQueue 'team-q' at position 0: couldn't assign flavors to pod set head: "
    ...     "insufficient quota for cpu in flavor default-flavor, 1 more needed",
    ...     reason="Pending", position=0)
    >>> st = waiting_status("j", "ds", "j-3f9a1c", queued, timeout=600)
    >>> st.phase, st.position, st.reason
    (<JobPhase.QUEUED: 'queued'>, 0, 'Pending')
    >>> print(st.explanation)  # doctest: +NORMALIZE_WHITESPACE
    waiting for RayCluster 'ws' (submitted once it is ready, at most 600 s): queued in LocalQueue
    'team-q' at position 0: couldn't assign flavors to pod set head: insufficient quota for cpu in flavor
    default-flavor, 1 more needed
"""

from __future__ import annotations

import atexit
import logging
import sys
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rayqueue_sdk.admission.cluster import ClusterPhase, ErrorKind, JobAssessment, JobPhase, Verdict
from rayqueue_sdk.cluster.status import DEFAULT_TIMEOUT, ClusterStatus
from rayqueue_sdk.display.environment import is_notebook
from rayqueue_sdk.errors import (
    AdmissionTimeout,
    ClusterDeletedError,
    ConnectionFailedError,
    DashboardNotFoundError,
)
from rayqueue_sdk.job.status import RayJobStatus, status_from_assessment

if TYPE_CHECKING:  # pragma: no cover
    from rayqueue_sdk.kube.session import KubeSession

__all__ = ["DEFAULT_CLUSTER_TIMEOUT", "ClusterWait", "PendingSubmission", "waiting_status"]

log = logging.getLogger(__name__)

#: Default limit of a job's wait for its queued or starting cluster (``submit(cluster_timeout=...)``):
#: the same as ``Cluster.wait_ready()``'s.
DEFAULT_CLUSTER_TIMEOUT = DEFAULT_TIMEOUT
#: Cluster phases at which a wait's first observation already fails (it raises at once).
_FAILING = (ClusterPhase.DEACTIVATED, ClusterPhase.FAILED, ClusterPhase.DELETED)
#: What a job stopped before its submission says.
_STOPPED = "stopped while it waited for its cluster"
#: Seconds between submission attempts while a ready cluster's dashboard does not answer yet.
_DASHBOARD_RETRY = 0.5


@dataclass(frozen=True)
class ClusterWait:
    """How a job submitted to a queued or starting cluster waits for it: ``RayJob.submit``'s
    ``cluster_timeout``, ``show`` and ``wait_for_cluster``, handed down as one.

    Attributes:
        timeout: the longest wait for the cluster, in seconds (``None``: no limit).
        show: the wait's progress line (``None``: in a notebook, one line on stderr elsewhere; ``False``:
            only ``logging``).
        block: return only once the job is submitted, raising the wait's error when it is not.

    Example:
        >>> ClusterWait() == ClusterWait(timeout=DEFAULT_CLUSTER_TIMEOUT, show=None, block=False)
        True
    """

    timeout: float | None = DEFAULT_CLUSTER_TIMEOUT
    show: bool | None = None
    block: bool = False


def _words(error: BaseException) -> str:
    """An error's message without its troubleshooting reference."""
    return str(error).split(" (see docs/")[0]


def _seconds(timeout: float | None) -> str:
    return "no time limit" if timeout is None else f"at most {timeout:g} s"


def waiting_status(
    job_name: str, namespace: str, job_id: str, cluster: ClusterStatus, *, timeout: float | None
) -> RayJobStatus:
    """The status of a job that waits for its cluster (pure): ``QUEUED`` while Kueue holds the cluster,
    ``STARTING`` once it is admitted; the cluster's words, Kueue's reason and message, the position.

    Example:
        >>> from rayqueue_sdk.cluster.status import ClusterStatus
        >>> st = waiting_status("j", "ds", "j-1", ClusterStatus("ws", "ds", ClusterPhase.STARTING, False,
        ...                     "starting, 0/2 workers ready"), timeout=None)
        >>> st.phase, st.verdict, st.done
        (<JobPhase.STARTING: 'starting'>, <Verdict.WAIT: 'wait'>, False)
    """
    starting = cluster.phase in (ClusterPhase.ADMITTED, ClusterPhase.STARTING, ClusterPhase.READY)
    assessment = JobAssessment(
        JobPhase.STARTING if starting else JobPhase.QUEUED,
        Verdict.WAIT,
        f"waiting for RayCluster {cluster.name!r} (submitted once it is ready, {_seconds(timeout)}): "
        f"{cluster.explanation}",
        cluster.reason,
        cluster.message,
        cluster.position,
        cluster_name=cluster.name,
        job_id=job_id,
    )
    return status_from_assessment(job_name, namespace, assessment, owns_cluster=False)


def _failed_status(
    job_name: str, namespace: str, job_id: str, cluster: str, error: BaseException | None
) -> RayJobStatus:
    """The status of a job whose cluster wait failed (``error``) or was stopped (``None``): terminal,
    nothing was submitted."""
    if error is None:
        phase, kind, reason, words = JobPhase.STOPPED, ErrorKind.FAILED, "StoppedBeforeSubmission", _STOPPED
    elif isinstance(error, ClusterDeletedError):
        phase, kind, reason, words = JobPhase.DELETED, ErrorKind.DELETED, "ClusterDeleted", _words(error)
    else:
        phase, kind, reason, words = JobPhase.FAILED, ErrorKind.FAILED, type(error).__name__, _words(error)
    assessment = JobAssessment(
        phase,
        Verdict.FAIL,
        f"not submitted: {words}",
        reason,
        words,
        cluster_name=cluster,
        job_id=job_id,
        error_kind=kind,
    )
    return status_from_assessment(job_name, namespace, assessment, owns_cluster=False)


class PendingSubmission:
    """One job waiting for its cluster on a background thread, then submitted by ``submit_now``.

    ``first`` is the cluster's status when the job was submitted; ``submit_now`` submits the job (it may
    raise :class:`~rayqueue_sdk.errors.ConnectionFailedError` while the ready cluster's dashboard does not
    answer yet: it is retried until the timeout). ``on_progress`` gets each new cluster status and
    ``on_end`` the outcome (``None``: submitted), e.g. a notebook's progress line. :meth:`start` runs
    it; :meth:`settle` waits for the first verdict.

    Example:
        >>> from rayqueue_sdk.cluster.status import ClusterStatus
        >>> first = ClusterStatus("ws", "ds", ClusterPhase.QUEUED, False, "queued in LocalQueue 'q'")
        >>> p = PendingSubmission(None, first, job_name="j", job_id="j-1", submit_now=lambda: None,
        ...                       timeout=60)
        >>> p.status().phase, p.submitted, p.failure is None
        (<JobPhase.QUEUED: 'queued'>, False, True)
    """

    def __init__(
        self,
        session: KubeSession | None,
        first: ClusterStatus,
        *,
        job_name: str,
        job_id: str,
        submit_now: Callable[[], None],
        timeout: float | None = DEFAULT_CLUSTER_TIMEOUT,
        on_progress: Callable[[ClusterStatus], None] | None = None,
        on_end: Callable[[BaseException | None], None] | None = None,
    ) -> None:
        self.job_name, self.job_id = job_name, job_id
        self.cluster = first
        self.session = session
        self.timeout = timeout
        self._submit_now = submit_now
        self._on_progress = on_progress
        self._on_end = on_end
        self._started = time.monotonic()
        self._cancel = threading.Event()
        self._done = threading.Event()
        self._progressed = threading.Event()
        self._lock = threading.Lock()  # submission vs cancellation
        self.submitted = False
        self.failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"rayqueue-submit-{job_id}", daemon=True)

    # -- life --------------------------------------------------------------------------------------
    def start(self) -> None:
        """Start waiting (on a daemon thread; a script's exit waits for it, see the module notes)."""
        _waiting.add(self)
        self._thread.start()

    def settle(self, limit: float = 30.0) -> None:
        """Wait for the wait's first reading (at most ``limit`` s); if that reading already fails (the
        cluster is deactivated, cannot start, is gone) or the cluster was ready, wait for the outcome, so
        that :meth:`~rayqueue_sdk.job.rayjob.RayJob.submit` raises or returns it at once."""
        self._progressed.wait(limit)
        if self.cluster.phase in _FAILING or self.cluster.phase is ClusterPhase.READY:
            self._done.wait(limit)

    @property
    def done(self) -> bool:
        """True once the job was submitted, or will not be (failed or cancelled)."""
        return self._done.is_set()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the outcome (at most ``timeout`` s, ``None``: until it comes); True when it came."""
        return self._done.wait(timeout)

    def cancel(self) -> bool:
        """Give up the submission if it has not happened yet: True when that stopped it."""
        with self._lock:
            if self.submitted or self.cancelled or self.failure is not None or self._done.is_set():
                return False
            self._cancel.set()
            return True

    @property
    def cancelled(self) -> bool:
        """True once :meth:`cancel` gave the submission up."""
        return self._cancel.is_set()

    def status(self) -> RayJobStatus:
        """The job's status while it waits (no I/O: the wait's last reading), or once the wait failed."""
        namespace = self.cluster.namespace
        if self.failure is not None or self.cancelled:
            why = None if self.cancelled else self.failure
            return _failed_status(self.job_name, namespace, self.job_id, self.cluster.name, why)
        return waiting_status(self.job_name, namespace, self.job_id, self.cluster, timeout=self.timeout)

    # -- the thread --------------------------------------------------------------------------------
    def _progress(self, st: ClusterStatus) -> None:
        self.cluster = st
        self._progressed.set()
        if self._on_progress is not None:
            try:
                self._on_progress(st)
            except Exception as err:  # a display must never stop the submission
                log.debug("progress display failed: %s", err)

    def _left(self) -> float | None:
        if self.timeout is None:
            return None
        return max(0.0, self.timeout - (time.monotonic() - self._started))

    def _run(self) -> None:
        from rayqueue_sdk.cluster.wait import wait_for_cluster  # lazy: a job sent before its cluster is ready

        try:
            wait_for_cluster(
                self.cluster.name,
                self.cluster.namespace,
                timeout=self._left(),
                client=self.session,
                on_progress=self._progress,
                cancel=self._cancel,
            )
            if not self._cancel.is_set():
                self._submit_when_dashboard_answers()
        except BaseException as err:  # kept: status() says it, RayJob.wait() raises it
            with self._lock:
                if not self._cancel.is_set():  # a stopped job reads STOPPED, whatever the wait saw after
                    self.failure = err
            log.info("%s: not submitted: %s", self.job_name, err)
        finally:
            self._progressed.set()
            self._done.set()
            _waiting.discard(self)
            if self._on_end is not None:
                try:
                    self._on_end(self.failure)
                except Exception as err:  # a display must never hide the outcome
                    log.debug("progress display failed: %s", err)

    def _submit_when_dashboard_answers(self) -> None:
        """The cluster is ready; its dashboard may need a moment more: retry until the time is up."""
        while True:
            with self._lock:
                if self._cancel.is_set():
                    return
                try:
                    self._submit_now()
                    self.submitted = True
                    return
                except (ConnectionFailedError, DashboardNotFoundError) as err:
                    left = self._left()
                    if left is not None and left <= 0:
                        raise AdmissionTimeout(
                            self.job_name,
                            self.timeout or 0.0,
                            phase=str(self.cluster.phase),
                            reason=f"RayCluster {self.cluster.name!r} is ready but its Ray dashboard "
                            f"does not answer: {_words(err)}",
                            what=f"RayCluster {self.cluster.name!r}",
                        ) from None
            self._cancel.wait(_DASHBOARD_RETRY)


# The submissions still waiting: a script's exit waits for them (see _at_exit).
_waiting: weakref.WeakSet[PendingSubmission] = weakref.WeakSet()


def _at_exit() -> None:
    """At interpreter exit, let waiting submissions happen (bounded by their timeout): a script that
    submits to a queued cluster and ends must not drop its job silently. Not in a notebook kernel (its
    shutdown means the user left); Ctrl-C gives up, and nothing is submitted then."""
    pending = [p for p in list(_waiting) if not p.done]
    if not pending or is_notebook():
        return
    try:
        for p in pending:
            print(
                f"rayqueue: {p.cluster.namespace}/{p.job_name} waits for RayCluster {p.cluster.name!r} "
                f"({_seconds(p._left())} more) before it is submitted; Ctrl-C gives up and submits nothing",
                file=sys.stderr,
                flush=True,
            )
            p.join()
    except KeyboardInterrupt:
        for p in pending:
            p.cancel()


atexit.register(_at_exit)
