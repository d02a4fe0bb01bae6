"""A :class:`~rayqueue_sdk.job.rayjob.RayJob` that owns its cluster: a ``ray.io/v1`` RayJob queued by Kueue.

:class:`OwnedClusterJob` is the I/O shell: it checks the LocalQueue and WorkloadPriorityClass before
anything is created, creates the RayJob (and, for a local ``working_dir``, the Secret that carries it,
owned by the RayJob so both go together; if the Secret cannot be made the RayJob is deleted again),
and reads the RayJob, its Kueue Workload and its queue position for
:func:`rayqueue_sdk.admission.cluster.assess_job`. Logs come from the job's own cluster (its real name is
``status.rayClusterName``) through Ray's job client. It is this mode's
:class:`~rayqueue_sdk.job.backend.JobBackend`.

Example:
    >>> from rayqueue_sdk.kube.session import KubeSession
    >>> job = OwnedClusterJob(KubeSession(namespace="ds"), name="final-training-run")
    >>> job.name, job.namespace
    ('final-training-run', 'ds')
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rayqueue_sdk.admission.cluster import PRIORITY_LABEL, QUEUE_LABEL, JobAssessment, JobPhase, assess_job
from rayqueue_sdk.admission.eta import AdmissionEstimate
from rayqueue_sdk.errors import AlreadyExistsError, ForbiddenError, NotFoundError, RayQueueError
from rayqueue_sdk.job.logs import follow_lines
from rayqueue_sdk.job.runtime_env import (
    PreparedRuntimeEnv,
    ship_working_dir,
    working_dir_secret_name,
    zip_working_dir,
)
from rayqueue_sdk.job.spec import JobFields, build_job_manifest
from rayqueue_sdk.job.status import RayJobStatus, status_from_assessment
from rayqueue_sdk.manifests.meta import name_of, uid_of

if TYPE_CHECKING:
    from ray.job_submission import JobSubmissionClient

    from rayqueue_sdk.kube.session import KubeSession

__all__ = ["OwnedClusterJob"]

log = logging.getLogger(__name__)


class OwnedClusterJob:
    """The job-owned-cluster backend (one per :class:`~rayqueue_sdk.job.rayjob.RayJob`).

    Example:
        >>> from rayqueue_sdk.kube.session import KubeSession
        >>> job = OwnedClusterJob(KubeSession(namespace="ds"), name="j")
        >>> job.last is None, job.keeps_logs
        (True, True)
    """

    keeps_logs = True

    def __init__(self, session: KubeSession, *, name: str) -> None:
        self.name = name
        self.session = session
        self.job_id: str | None = None
        self.last: RayJobStatus | None = None
        #: whether stop() asked Ray to stop the running job since the last submit (see job/settle.py)
        self.stop_asked = False
        self._jc: tuple[str, JobSubmissionClient] | None = None
        self._eta: AdmissionEstimate | None = None

    @property
    def namespace(self) -> str:
        """The RayJob's namespace (the session's: the client's current one unless given)."""
        return self.session.namespace

    # -- create -----------------------------------------------------------------------------------
    def submit(self, job: JobFields, env: PreparedRuntimeEnv) -> str:
        """Check the queue and priority class, then create the RayJob (and the Secret that carries a local
        working_dir); returns the RayJob's name. KubeRay picks the Ray job id (see :meth:`status`).

        Raises:
            ConfigError: the zipped working_dir does not fit in a Secret.
            QueueNotFoundError / PriorityClassNotFoundError: unknown queue or priority class.
            AlreadyExistsError: a RayJob of that name exists.
        """
        package = zip_working_dir(env.working_dir, env.excludes) if env.working_dir is not None else None
        self.check_queue_and_priority(job.local_queue, job.priority_class)
        manifest = build_job_manifest(job, env.runtime_env)
        secret = None
        if package is not None and env.runtime_env is not None:
            manifest, secret = ship_working_dir(manifest, env.runtime_env, package)
        self.create(manifest, secret)
        self.job_id = None
        self.stop_asked = False
        return self.name

    def check_queue_and_priority(self, queue: str | None, priority: str | None) -> None:
        """Refuse an unknown LocalQueue or WorkloadPriorityClass (the errors list what exists)."""
        from rayqueue_sdk.queues.local_queues import (  # lazy: submit's queue checks
            check_priority_class,
            check_queue,
            resolve_default_queue,
        )

        if queue is not None:
            check_queue(self.session, name=queue, namespace=self.namespace)
        elif resolve_default_queue(self.session, namespace=self.namespace) is None:
            log.warning(
                "RayJob %s/%s has no local_queue and the namespace has no default LocalQueue: "
                "Kueue will not manage it",
                self.namespace,
                self.name,
            )
        if priority is not None:
            check_priority_class(self.session, name=priority)

    def create(self, manifest: Mapping[str, Any], secret: Mapping[str, Any] | None) -> dict[str, Any]:
        """Create the RayJob, then the working-dir Secret owned by it; nothing is left half-made."""
        from rayqueue_sdk.kube.kinds import RAYJOBS  # lazy: API calls

        body = dict(manifest)
        body["metadata"] = {**dict(manifest["metadata"]), "namespace": self.namespace}
        try:
            created = self.session.create(RAYJOBS, body)
        except AlreadyExistsError as err:
            raise AlreadyExistsError(
                err.status,
                err.reason,
                f"RayJob {self.namespace}/{self.name} already exists: delete it (RayJob.delete()) or "
                f"choose another job_name",
            ) from None
        if secret is not None:
            try:
                self._create_secret(secret, created)
            except RayQueueError:
                self.delete()
                raise
        labels = body["metadata"].get("labels") or {}
        log.info(
            "created RayJob %s/%s (queue %s, priority %s)",
            self.namespace,
            self.name,
            labels.get(QUEUE_LABEL),
            labels.get(PRIORITY_LABEL),
        )
        return created

    def _create_secret(self, secret: Mapping[str, Any], owner: Mapping[str, Any]) -> None:
        from rayqueue_sdk.kube.kinds import kind_of  # lazy: API calls

        meta = owner["metadata"]
        body = dict(secret)
        body["metadata"] = {
            **dict(secret["metadata"]),
            "namespace": self.namespace,
            "ownerReferences": [
                {
                    "apiVersion": "ray.io/v1",
                    "kind": "RayJob",
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        }
        self.session.create(kind_of(body), body)

    # -- read -------------------------------------------------------------------------------------
    def observe(self) -> tuple[dict[str, Any] | None, JobAssessment]:
        """Read the RayJob, its Workload and (when queued) its position; assess them."""
        rayjob, _, assessment = self._observed(with_queue=True)
        return rayjob, assessment

    def _observed(
        self, *, with_queue: bool
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None, JobAssessment]:
        """The RayJob, its Workload (each read once) and their assessment; ``with_queue``: while queued,
        the position and the estimate too."""
        from rayqueue_sdk.kube.kinds import RAYJOBS  # lazy: API calls
        from rayqueue_sdk.kube.lookups import pick_workload  # lazy: API calls
        from rayqueue_sdk.queues.eta import estimate_around  # lazy: the queue reads of the estimate
        from rayqueue_sdk.queues.local_queues import queue_position  # lazy: submit's queue checks

        self._eta = None
        try:
            rayjob: dict[str, Any] | None = self.session.get(
                RAYJOBS, name=self.name, namespace=self.namespace
            )
        except NotFoundError:
            return None, None, assess_job(None, None)
        assert rayjob is not None
        workloads = self._workloads(rayjob)
        workload = pick_workload(workloads)
        assessment = assess_job(rayjob, workload)
        queued = assessment.phase in (JobPhase.QUEUED, JobPhase.REQUEUED)
        if with_queue and queued and workload is not None:
            queue = (workload.get("spec") or {}).get("queueName")
            if queue:
                wl_name = name_of(workload)
                position, why = queue_position(
                    self.session, local_queue=queue, workload_name=wl_name, namespace=self.namespace
                )
                assessment = assess_job(rayjob, workload, position=position, position_unavailable=why)
                # the estimate is read with the position, never on its own; the RayJob and its Workloads
                # in hand are left out of its LISTs, not read twice
                self._eta = estimate_around(self.session, rayjob, workloads, workload=wl_name, kind=RAYJOBS)
        return rayjob, workload, assessment

    def _workloads(self, rayjob: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The RayJob's Workloads (by Kueue's ``job-uid`` label; one LIST)."""
        from rayqueue_sdk.kube.lookups import find_workloads  # lazy: API calls

        uid = uid_of(rayjob) or ""
        return find_workloads(self.session, owner_uid=uid, namespace=self.namespace) if uid else []

    def status(self) -> RayJobStatus:
        """The job's typed status (``DELETED`` once the RayJob is gone)."""
        rayjob, assessment = self.observe()
        self.last = status_from_assessment(self.name, self.namespace, assessment, rayjob)
        if self._eta is not None and assessment.phase in (JobPhase.QUEUED, JobPhase.REQUEUED):
            self.last = replace(self.last, eta=self._eta)
        if self.last.job_id:
            self.job_id = self.last.job_id
        return self.last

    # -- logs -------------------------------------------------------------------------------------
    def _job_client(self, cluster_name: str) -> JobSubmissionClient:
        from rayqueue_sdk.cluster.dashboard import (  # lazy: the dashboard and Ray's job client
            cluster_dashboard_uri,
            ray_job_client,
        )

        if self._jc is None or self._jc[0] != cluster_name:
            uri = cluster_dashboard_uri(cluster_name, self.namespace, client=self.session)
            self._jc = (cluster_name, ray_job_client(uri, client=self.session))
        return self._jc[1]

    def _ids(self, status: RayJobStatus | None = None) -> tuple[str, str]:
        st = status if status is not None else self.status()
        if not st.cluster_name or not st.job_id or st.phase in (JobPhase.QUEUED, JobPhase.DELETED):
            raise RayQueueError(f"no logs for RayJob {self.namespace}/{self.name} yet: {st.explanation}")
        return st.cluster_name, st.job_id

    def logs(self, status: RayJobStatus | None = None) -> str:
        """The logs so far: from Ray on the job's cluster while it exists, else from the log of KubeRay's
        submitter pod (which followed them, and outlives the cluster until the RayJob is deleted).
        ``status``: the job's status when the caller has just read it (else it is read here).

        Raises:
            NotFoundError: neither source exists any more (the message names both).
        """
        from rayqueue_sdk.kube.pods import JOB_NAME_LABEL, submitter_log  # lazy: the submitter pod's logs

        cluster, job_id = self._ids(status)
        try:
            return str(self._job_client(cluster).get_job_logs(job_id))
        except (RuntimeError, ConnectionError, OSError, RayQueueError) as err:
            from_ray = f"{type(err).__name__}: {Exception.__str__(err)}"  # without the docs reference
        found = submitter_log(self.session, rayjob=self.name, namespace=self.namespace)
        if found is not None:
            log.info(
                "logs of %s from submitter pod %s (cluster %s: %s)", job_id, found.pod, cluster, from_ray
            )
            return str(found)
        raise NotFoundError(
            404,
            "NotFound",
            f"no logs left for RayJob {self.namespace}/{self.name}: Ray on RayCluster {cluster} cannot give "
            f"them ({from_ray}) and no submitter pod (label {JOB_NAME_LABEL}={self.name}) exists",
        )

    def follow(self, stop: threading.Event | None = None) -> Iterator[str]:
        """The job's log lines as they come."""
        cluster, job_id = self._ids()
        jc = self._job_client(cluster)
        return follow_lines(lambda: jc.tail_job_logs(job_id), stop=stop)

    # -- stop / delete ----------------------------------------------------------------------------
    def stop(self) -> bool:
        """Stop the job: a running Ray job is stopped through Ray (KubeRay then ends the RayJob and
        deletes its cluster); a job not running yet has its Kueue Workload deactivated
        (``spec.active=false``, Kueue's supported stop) so it leaves the queue. True if anything changed.
        """
        from rayqueue_sdk.kube.kinds import RAYJOBS  # lazy: API calls

        rayjob, workload, assessment = self._observed(with_queue=False)  # a stop needs no position
        if rayjob is None or assessment.phase.terminal:
            return False
        if assessment.phase is JobPhase.RUNNING and assessment.cluster_name and assessment.job_id:
            self.stop_asked = True  # Ray ends the job, then KubeRay the RayJob: not at once
            try:
                return bool(self._job_client(assessment.cluster_name).stop_job(assessment.job_id))
            except (RuntimeError, ConnectionError, OSError) as err:
                log.warning("stopping %s through Ray failed (%s); deactivating its Workload", self.name, err)
        if workload is None:
            self.session.patch(
                RAYJOBS, name=self.name, patch={"spec": {"suspend": True}}, namespace=self.namespace
            )
            return True
        wl_name = str(workload["metadata"]["name"])
        self.session.patch(
            self.session.kueue_kind("workloads"),
            name=wl_name,
            patch={"spec": {"active": False}},
            namespace=self.namespace,
        )
        log.info("deactivated Workload %s/%s of RayJob %s", self.namespace, wl_name, self.name)
        return True

    def resume(self) -> bool:
        """Undo a :meth:`stop` that left the RayJob in place: reactivate its deactivated Workload, or
        unsuspend a RayJob without one. True when the job is live again (or never stopped); False when it
        ended (a new submission is needed).

        Raises:
            NotFoundError: there is no such RayJob.
        """
        from rayqueue_sdk.kube.kinds import RAYJOBS  # lazy: API calls

        rayjob, workload, assessment = self._observed(with_queue=False)  # a resume needs no position
        if rayjob is None:
            raise NotFoundError(
                404, "NotFound", f"RayJob {self.namespace}/{self.name} does not exist: submit() it first"
            )
        if workload is not None and (workload.get("spec") or {}).get("active") is False:
            wl_name = str(workload["metadata"]["name"])
            workloads = self.session.kueue_kind("workloads")
            self.session.patch(
                workloads, name=wl_name, patch={"spec": {"active": True}}, namespace=self.namespace
            )
            log.info("reactivated Workload %s/%s of RayJob %s", self.namespace, wl_name, self.name)
            return True
        if workload is None and (rayjob.get("spec") or {}).get("suspend") is True:
            self.session.patch(
                RAYJOBS, name=self.name, patch={"spec": {"suspend": False}}, namespace=self.namespace
            )
            return True
        return not assessment.phase.terminal

    def remains(self) -> bool:
        """Whether the RayJob or its working-dir Secret still exists (a delete is still being carried out, so
        the name cannot be used again yet)."""
        from rayqueue_sdk.kube.kinds import RAYJOBS, kind_of  # lazy: API calls

        try:
            self.session.get(RAYJOBS, name=self.name, namespace=self.namespace)
            return True
        except NotFoundError:
            pass
        secret = working_dir_secret_name(self.name)
        try:
            self.session.get(
                kind_of({"apiVersion": "v1", "kind": "Secret"}), name=secret, namespace=self.namespace
            )
        except (NotFoundError, ForbiddenError):  # gone, or not ours to see (then submit() will say)
            return False
        return True

    def delete(self) -> bool:
        """Delete the RayJob (its cluster, Workload and Secret go with it). False if it was gone."""
        from rayqueue_sdk.kube.kinds import RAYJOBS  # lazy: API calls

        if not self.session.delete(
            RAYJOBS, name=self.name, namespace=self.namespace, propagation="Background"
        ):
            return False
        log.info("deleted RayJob %s/%s", self.namespace, self.name)
        return True
