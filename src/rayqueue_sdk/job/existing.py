"""A :class:`~rayqueue_sdk.job.rayjob.RayJob` on an existing RayCluster: Ray's job-submission API, no
RayJob object.

Kueue cannot manage a RayJob on an existing cluster (a ``clusterSelector`` RayJob is not queued), and
the cluster already holds its admitted quota, so the job goes straight to the cluster's Ray dashboard
through Ray's ``JobSubmissionClient`` (address and auth header from :mod:`rayqueue_sdk.cluster.dashboard`).
A cluster that is still queued or starting has no dashboard yet: the job then waits for it
(:mod:`rayqueue_sdk.job.pending`, bounded by ``cluster_timeout``) and is submitted once it is ready.
The submission id is ``<job_name>-<6 hex>``: the job name alone would collide on re-submission.
:class:`ExistingClusterJob` is this mode's :class:`~rayqueue_sdk.job.backend.JobBackend`.

Example:
    >>> new_submission_id("quick-dev-test").startswith("quick-dev-test-")
    True
"""

from __future__ import annotations

import logging
import secrets
import sys
import threading
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from rayqueue_sdk.admission.cluster import ClusterPhase, ErrorKind, JobAssessment, JobPhase, Verdict
from rayqueue_sdk.cluster.status import ClusterStatus
from rayqueue_sdk.display.environment import is_notebook
from rayqueue_sdk.display.progress import NotebookProgress
from rayqueue_sdk.errors import (
    AdmissionTimeout,
    ClusterNotFoundError,
    ConnectionFailedError,
    DashboardNotFoundError,
    RayQueueError,
)
from rayqueue_sdk.job.logs import follow_lines
from rayqueue_sdk.job.pending import ClusterWait, PendingSubmission
from rayqueue_sdk.job.runtime_env import PreparedRuntimeEnv, check_package_size
from rayqueue_sdk.job.spec import JobFields
from rayqueue_sdk.job.status import (
    RayJobStatus,
    recreated_by_ray,
    status_from_assessment,
    status_from_ray,
)

if TYPE_CHECKING:  # pragma: no cover
    from ray.job_submission import JobSubmissionClient

    from rayqueue_sdk.kube.session import KubeSession

__all__ = ["JOB_NAME_METADATA", "ExistingClusterJob", "new_submission_id"]

log = logging.getLogger(__name__)

#: How long :meth:`ExistingClusterJob.delete` waits for a stopped job to end before deleting it.
_STOP_GRACE_SECONDS = 30.0
#: Metadata key carrying the job name on the Ray side.
JOB_NAME_METADATA = "rayqueue.job-name"

# Ray job clients by Kubernetes client and dashboard address: making one costs a round trip (Ray checks
# the dashboard's version), so a new RayJob on the same cluster reuses it. Dropped on connection errors.
_clients: weakref.WeakKeyDictionary[Any, dict[str, JobSubmissionClient]] = weakref.WeakKeyDictionary()
_clients_lock = threading.Lock()


def _cached_client(api: Any, dashboard: str) -> JobSubmissionClient:
    from rayqueue_sdk.cluster.dashboard import ray_job_client  # lazy: a running cluster's dashboard

    with _clients_lock:
        found = _clients.get(api, {}).get(dashboard)
    if found is not None:
        return found
    made = ray_job_client(dashboard, client=api)
    with _clients_lock:
        _clients.setdefault(api, {})[dashboard] = made
    return made


def _forget_client(api: Any, dashboard: str | None) -> None:
    with _clients_lock:
        _clients.get(api, {}).pop(dashboard or "", None)


def new_submission_id(job_name: str) -> str:
    """A fresh Ray submission id for ``job_name``: ``<job_name>-<6 hex>``.

    Example:
        >>> len(new_submission_id("j")) == len("j-") + 6
        True
    """
    return f"{job_name}-{secrets.token_hex(3)}"


def _ray_error(err: Exception, what: str, dashboard: str) -> RayQueueError:
    text = str(err)
    if isinstance(err, ConnectionError) or "Failed to connect" in text or "Connection" in type(err).__name__:
        return ConnectionFailedError(f"cannot reach the Ray dashboard at {dashboard} to {what}: {text}")
    return RayQueueError(f"Ray refused to {what} (dashboard {dashboard}): {text}")


class ExistingClusterJob:
    """The job-submission backend on an existing cluster (one per :class:`~rayqueue_sdk.job.rayjob.RayJob`).

    The Ray job client is made once (first use) and reused.

    Example:
        >>> from rayqueue_sdk.kube.session import KubeSession
        >>> session = KubeSession(namespace="ds")
        >>> job = ExistingClusterJob(session, job_name="quick-dev-test", cluster_name="ws")
        >>> job.job_id is None, job.keeps_logs
        (True, False)
    """

    keeps_logs = False

    def __init__(
        self,
        session: KubeSession,
        *,
        job_name: str,
        cluster_name: str,
        dashboard_url: str | None = None,
        job_id: str | None = None,
    ) -> None:
        self.job_name = job_name
        self.cluster_name = cluster_name
        self.session = session
        self.dashboard_override = dashboard_url
        self.job_id = job_id
        self._client: JobSubmissionClient | None = None
        self.dashboard: str | None = None
        self._pending: PendingSubmission | None = None  # a submission waiting for its cluster
        #: whether stop() asked Ray to stop the job since the last submit (see job/settle.py)
        self.stop_asked = False

    # -- connection -------------------------------------------------------------------------------
    def job_client(self) -> JobSubmissionClient:
        """Ray's job client for the cluster (dashboard discovered once).

        Raises:
            ClusterNotFoundError: the cluster does not exist (lists the user's clusters).
            DashboardNotFoundError: the cluster has no dashboard address yet (queued, starting).
            ConnectionFailedError: the dashboard does not answer.
        """
        from rayqueue_sdk.cluster.dashboard import cluster_dashboard_uri  # lazy: a cluster's dashboard

        if self._client is None:
            self.dashboard = cluster_dashboard_uri(
                self.cluster_name,
                self.session.namespace,
                client=self.session,
                override=self.dashboard_override,
            )
            self._client = _cached_client(self.session.api, self.dashboard)
        return self._client

    def _forget(self) -> None:
        """Forget the client and the address (the cluster's head may have moved): rediscover next time."""
        _forget_client(self.session.api, self.dashboard)
        self._client = None

    def _require_id(self) -> str:
        if not self.job_id:
            raise RayQueueError(
                f"RayJob {self.job_name!r} has not been submitted yet (no job id): call submit() first"
            )
        return self.job_id

    # -- operations -------------------------------------------------------------------------------
    def submit(self, job: JobFields, env: PreparedRuntimeEnv, wait: ClusterWait | None = None) -> str:
        """Submit through Ray's job client (Ray uploads a local working_dir); returns the new submission id.

        A cluster that is queued or starting (no dashboard address yet, or one that does not answer) is
        waited for on a background thread, for at most ``wait.timeout`` s, and the job is submitted
        once it is ready (:class:`~rayqueue_sdk.job.pending.PendingSubmission`); this returns at once with
        the submission id the job will have. ``wait.show``: the wait's progress line; ``wait.block``:
        return only once the job is submitted, raising the wait's error (``AdmissionTimeout``, ...) when it
        is not (see :class:`~rayqueue_sdk.job.pending.ClusterWait`; ``None``: its defaults).

        Raises:
            ConfigError: the zipped working_dir reaches Ray's package limit.
            ClusterNotFoundError: no such cluster (lists those that exist).
            ScaledToZeroError: the cluster's idle policy scaled it to zero (``cluster.resume()`` first).
            PreemptedError / ClusterFailedError: the cluster is deactivated or its head cannot start.
        """
        runtime_env = env.runtime_env
        if env.working_dir is not None and runtime_env is not None:
            check_package_size(env.working_dir, env.excludes)
            runtime_env["working_dir"] = str(env.working_dir)
        submission_id = new_submission_id(self.job_name)
        kwargs: dict[str, Any] = {
            "entrypoint": job.entrypoint,
            "submission_id": submission_id,
            "runtime_env": dict(runtime_env) if runtime_env else None,
            "metadata": {JOB_NAME_METADATA: self.job_name},
        }
        self.stop_asked = False
        try:
            self._submit_now(kwargs)
        except (DashboardNotFoundError, ConnectionFailedError) as err:
            if self.dashboard_override:  # an explicit address: there is no cluster to wait for
                raise
            self._defer(kwargs, err, wait or ClusterWait())
            return submission_id
        self._pending = None
        self.job_id = submission_id
        log.info(
            "submitted %s to RayCluster %s/%s as %s",
            self.job_name,
            self.session.namespace,
            self.cluster_name,
            submission_id,
        )
        return submission_id

    def _submit_now(self, kwargs: dict[str, Any]) -> None:
        try:
            try:
                self.job_client().submit_job(**kwargs)
            except (ConnectionError, OSError) as err:  # a reused client to an address that moved
                log.debug("submitting through a reused Ray client failed (%s); reconnecting", err)
                self._forget()
                self.job_client().submit_job(**kwargs)
        except (RuntimeError, ConnectionError, OSError) as err:
            self._forget()
            raise _ray_error(err, f"submit {self.job_name!r}", self.dashboard or "?") from None

    def _defer(self, kwargs: dict[str, Any], err: RayQueueError, wait: ClusterWait) -> None:
        """No dashboard to submit to: wait for a queued or starting cluster, then submit (or raise)."""
        from rayqueue_sdk.cluster.observe import observe_one  # lazy: the read path, loaded on first use

        first, _ = observe_one(self.session, name=self.cluster_name, namespace=self.session.namespace)
        if first.ready:
            raise err  # a ready cluster whose dashboard fails: waiting would not help
        if first.phase is ClusterPhase.DEACTIVATED:
            first.refuse_if_scaled_to_zero()
        submission_id = str(kwargs["submission_id"])
        progress = None if wait.show is False else _Progress(first, every_change=wait.block)
        pending = PendingSubmission(
            self.session,
            first,
            job_name=self.job_name,
            job_id=submission_id,
            submit_now=lambda: self._submit_now(kwargs),
            timeout=wait.timeout,
            on_progress=progress.update if progress is not None else None,
            on_end=progress.finish if progress is not None else None,
        )
        before = self.job_id, self._pending
        self._pending, self.job_id = pending, submission_id
        pending.start()
        pending.settle()
        if wait.block:
            pending.join()
        if pending.failure is not None and (wait.block or not isinstance(pending.failure, AdmissionTimeout)):
            # known at once (deactivated, cannot start, deleted), or a blocking submit: said now, and the
            # job stays unsubmitted; otherwise a timeout, however short, is status()'s and wait()'s to say
            self.job_id, self._pending = before
            raise pending.failure
        if pending.submitted:
            log.info("submitted %s to RayCluster %s as %s", self.job_name, self.cluster_name, submission_id)
            return
        log.info("%s (%s)", pending.status(), submission_id)

    @property
    def submission_failure(self) -> BaseException | None:
        """Why a job that waited for its cluster was not submitted (the wait's typed error), or None.

        ``None`` too when it was stopped before its submission (its status says ``STOPPED``).
        """
        pending = self._pending
        if pending is None or pending.submitted or not isinstance(pending.failure, RayQueueError):
            return None
        return pending.failure

    def _waiting(self) -> PendingSubmission | None:
        """The pending submission, while the job has not reached Ray (waiting, failed or cancelled)."""
        pending = self._pending
        return pending if pending is not None and not pending.submitted else None

    def status(self) -> RayJobStatus:
        """Ray's view of the job, typed; ``DELETED`` when the cluster or the job is gone, ``PREEMPTED`` or
        ``DEACTIVATED`` (a failed verdict) when Kueue took the cluster away under it. A job waiting for its
        cluster reads ``QUEUED``/``STARTING`` with the cluster's words (Kueue's reason, the position)."""
        pending = self._waiting()
        if pending is not None:
            return pending.status()
        job_id = self._require_id()
        try:
            info = self.job_client().get_job_info(job_id)
        except ClusterNotFoundError as err:
            return self._gone(f"the RayCluster no longer exists ({err.message})")
        except (RuntimeError, ConnectionError, OSError) as err:
            if "does not exist" in str(err) or "404" in str(err):
                return self._gone("Ray does not know the job (deleted?)")
            lost = self._cluster_lost()
            if lost is not None:
                return lost
            raise _ray_error(err, f"read the status of {job_id}", self.dashboard or "?") from None
        if recreated_by_ray(getattr(info, "entrypoint", None)):
            return self._gone("deleted (the record Ray shows was written back by its job monitor afterwards)")
        return status_from_ray(
            self.job_name,
            self.session.namespace,
            job_id,
            self.cluster_name,
            str(getattr(info.status, "value", info.status)),
            info.message,
            error_type=getattr(info, "error_type", None),
        )

    def _cluster_lost(self) -> RayJobStatus | None:
        """When the dashboard does not answer: was the cluster evicted or deleted under the job?

        Kueue may preempt or deactivate the cluster (its pods are deleted, so the Ray job dies with
        the head); a requeued cluster comes back empty, so the job is lost either way and nothing
        reruns it: the verdict is ``FAIL``.
        """
        from rayqueue_sdk.cluster.observe import observe_cluster  # lazy: the read path, loaded on first use

        try:
            cluster = observe_cluster(
                self.cluster_name, self.session.namespace, self.session, with_position=False
            )
        except ClusterNotFoundError:
            return self._gone(f"the RayCluster {self.cluster_name!r} was deleted")
        except RayQueueError:
            return None
        if cluster.phase in (ClusterPhase.READY, ClusterPhase.STARTING, ClusterPhase.ADMITTED):
            self._forget()
            return None
        phase = JobPhase.DEACTIVATED if cluster.phase is ClusterPhase.DEACTIVATED else JobPhase.PREEMPTED
        return self._reading(
            phase,
            f"the RayCluster {self.cluster_name!r} is {cluster.phase}, the job was lost with its head: "
            f"{cluster.explanation}",
            ErrorKind.EVICTED,
            reason=cluster.reason or str(cluster.phase),
            message=cluster.message or cluster.explanation,
        )

    def _gone(self, why: str) -> RayJobStatus:
        return self._reading(JobPhase.DELETED, why, ErrorKind.DELETED)

    def _reading(
        self,
        phase: JobPhase,
        explanation: str,
        kind: ErrorKind,
        *,
        reason: str | None = None,
        message: str | None = None,
    ) -> RayJobStatus:
        assessment = JobAssessment(
            phase,
            Verdict.FAIL,
            explanation,
            reason,
            message,
            cluster_name=self.cluster_name,
            job_id=self.job_id,
            error_kind=kind,
        )
        return status_from_assessment(self.job_name, self.session.namespace, assessment, owns_cluster=False)

    def logs(self, status: RayJobStatus | None = None) -> str:
        """The job's logs so far (none while it waits for its cluster; ``status`` is not needed here)."""
        if self._waiting() is not None:
            return ""
        job_id = self._require_id()
        try:
            return str(self.job_client().get_job_logs(job_id))
        except (RuntimeError, ConnectionError, OSError) as err:
            raise _ray_error(err, f"read the logs of {job_id}", self.dashboard or "?") from None

    def follow(self, stop: threading.Event | None = None) -> Iterator[str]:
        """The job's log lines as they come (ends when the job ends); a job waiting for its cluster first
        waits for its submission (raising the wait's error when it is not submitted)."""
        pending = self._waiting()
        if pending is not None:
            return self._follow_after(pending, stop)
        job_id = self._require_id()
        jc = self.job_client()
        return follow_lines(lambda: jc.tail_job_logs(job_id), stop=stop)

    def _follow_after(self, pending: PendingSubmission, stop: threading.Event | None) -> Iterator[str]:
        while not pending.join(0.25):
            if stop is not None and stop.is_set():
                return
        if not pending.submitted:
            if self.submission_failure is not None:
                raise self.submission_failure
            return
        yield from self.follow(stop)

    def stop(self) -> bool:
        """Ask Ray to stop the job; True if it was running. A job still waiting for its cluster is not
        submitted at all (True)."""
        pending = self._waiting()
        if pending is not None:
            if pending.cancel():
                return True
            if not pending.submitted:
                return False
        job_id = self._require_id()
        self.stop_asked = True  # Ray ends the driver after this returns
        try:
            return bool(self.job_client().stop_job(job_id))
        except (RuntimeError, ConnectionError, OSError) as err:
            raise _ray_error(err, f"stop {job_id}", self.dashboard or "?") from None

    def delete(self) -> bool:
        """Delete the job's record and logs from the cluster, stopping it first if it still runs (Ray only
        deletes finished jobs). False when there was nothing to delete. A job still waiting for its
        cluster is not submitted at all (True)."""
        pending = self._waiting()
        if pending is not None:
            if pending.cancel():
                return True
            if not pending.submitted:
                return False
        st = self.status()
        if st.phase is JobPhase.DELETED:
            return False
        if not st.done:
            from rayqueue_sdk.kube.poll import poll_until  # lazy: only a delete of a running job polls

            self.stop()
            poll_until(lambda: self.status().done, timeout=_STOP_GRACE_SECONDS, interval=0.2)
        job_id = self._require_id()
        try:
            return bool(self.job_client().delete_job(job_id))
        except ClusterNotFoundError:
            return False
        except (RuntimeError, ConnectionError, OSError) as err:
            if "does not exist" in str(err):
                return False
            raise _ray_error(err, f"delete {job_id}", self.dashboard or "?") from None


class _Progress:
    """The wait's progress for a job waiting for its cluster: ``Cluster.wait_ready()``'s line in a notebook
    (updated in place from the waiting thread, ending with the error when the wait fails); elsewhere the
    first reading on stderr, and every change when ``submit()`` blocks (then ``logging`` only)."""

    def __init__(self, first: ClusterStatus, *, every_change: bool) -> None:
        self.line: Any = None
        self.every_change = every_change
        if is_notebook():
            self.line = NotebookProgress()
            self.line.update(first)
        else:
            self._print(first)

    @staticmethod
    def _print(st: ClusterStatus) -> None:
        print(f"{st.namespace}/{st.name}: {st.explanation}", file=sys.stderr, flush=True)

    def update(self, st: ClusterStatus) -> None:
        if self.line is not None:
            self.line.update(st)
        elif self.every_change:
            self._print(st)

    def finish(self, error: BaseException | None) -> None:
        if self.line is not None:
            self.line.finish(error)
