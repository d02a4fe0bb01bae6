"""KubeRay's RayJob controller, emulated over the store; jobs really run on the local Ray head.

The deployment state machine follows KubeRay v1.7.0 [R controllers/ray/rayjob_controller.go]:

- ``""`` (New) -> ``Initializing``: ``jobId`` = ``spec.jobId`` or ``<job>-<rand5>``,
  ``rayClusterName`` = ``<job>-<rand5>``, ``jobStatus: PENDING``, ``startTime``;
- ``Initializing``: create the job-owned RayCluster from ``rayClusterSpec`` (labels copied from the
  RayJob plus ``ray.io/originated-from-*``, owned by the RayJob); once its ``state`` is ready, set
  ``dashboardURL``; in K8sJobMode (the default) with a real Ray head, create the ``batch/v1`` Job
  ``<rayjob>`` owned by the RayJob (:func:`.submitter.submitter_job`, from ``submitterPodTemplate``)
  -> ``Running``: the Job controller and the local kubelet (:mod:`rayqueue_local.controllers.pods`)
  run its pod, whose ``ray job submit --no-wait`` + ``ray job logs --follow`` submits the job and
  keeps its logs as the pod's log; the Job and its pod outlive the job's cluster until the RayJob is
  deleted; a submitter Job that fails before Ray knows the job fails the RayJob with
  ``SubmissionFailed``. With simulated heads the submitter pod is emulated
  (:class:`.submitter.SubmitterPods`: its Secret/ConfigMap/emptyDir volumes, its init containers
  run as local processes) and the entrypoint is submitted in-process with Ray's
  ``JobSubmissionClient`` (``runtimeEnvYAML`` parsed to a dict, its ``working_dir`` mapped from the
  submitter pod's mounts, ``submission_id`` = ``jobId``, ``entrypointNumCpus/Gpus/Resources``) ->
  ``Running``. A submission error or a failed init container ends ``Failed`` with reason
  ``SubmissionFailed``; a missing Secret/ConfigMap keeps it ``Initializing`` (pod Pending);
- ``Running``: ``jobStatus``/``message``/``startTime``/``endTime`` from Ray's job info;
  terminal -> ``Complete`` (``Failed`` with reason ``AppFailed`` when the job FAILED); with a real head in
  ``K8sJobMode``, only once the submitter Job has finished too (kuberay#1919: the cluster stays while
  the submitter still follows the logs);
- ``activeDeadlineSeconds`` (from ``startTime``) -> ``Failed``, reason ``DeadlineExceeded``;
- ``spec.suspend`` (Kueue) in ``Initializing``/``Running`` -> ``Suspending``: the cluster and the
  submitter pod are deleted (its Ray head stopped), status reset -> ``Suspended``; unsuspended ->
  New again, so a *new* cluster name on resume;
- ``Complete``/``Failed`` with ``shutdownAfterJobFinishes``: the cluster is deleted once
  ``ttlSecondsAfterFinished`` (default 0) has passed since ``endTime``.

``clusterSelector`` mode (an existing cluster) is supported for completeness: the job is submitted
to that cluster and nothing is deleted. Without Ray (``RayRuntime(enabled=False)``) the entrypoint
is not run: the job is reported RUNNING, then SUCCEEDED after ``simulated_job_seconds``.

Example:
    >>> RayJobController(RayRuntime(enabled=False)).watches
    ('rayjobs.ray.io', 'rayclusters.ray.io')
"""

from __future__ import annotations

import copy
import logging
import time
from typing import Any

from rayqueue_local.apimachinery.limits import load_yaml
from rayqueue_local.apimachinery.time import format_rfc3339, now_rfc3339, parse_rfc3339
from rayqueue_local.controllers.base import QueueController, get_or_none
from rayqueue_local.controllers.kuberay import resources as R
from rayqueue_local.controllers.kuberay.raycluster import RAYCLUSTERS
from rayqueue_local.controllers.kuberay.runtime import RayRuntime
from rayqueue_local.controllers.kuberay.submitter import (
    InitContainerFailed,
    PodPending,
    SubmitterPods,
    SubmitterRun,
    submitter_job,
)
from rayqueue_local.controllers.kuberay.validation import rayjob_problem
from rayqueue_local.controllers.pods.workloads import JOBS
from rayqueue_local.storage.store import StoreError

log = logging.getLogger(__name__)

__all__ = ["RAYJOBS", "RayJobController"]

RAYJOBS = "rayjobs.ray.io"  # the resource key of RayJobs
_TERMINAL_JOB = ("STOPPED", "SUCCEEDED", "FAILED")
_TERMINAL_DEPLOYMENT = ("Complete", "Failed", "ValidationFailed")


def _stamp(epoch_ms: int | float | None) -> str | None:
    """A Ray job's start/end time (milliseconds since the epoch) as a Kubernetes timestamp."""
    return format_rfc3339(float(epoch_ms) / 1000) if epoch_ms else None


def _submission_failed(status: dict[str, Any], reason: str, message: str) -> None:
    """End the RayJob ``Failed`` with KubeRay's reason ``SubmissionFailed``."""
    status["jobDeploymentStatus"] = "Failed"
    status["reason"] = "SubmissionFailed"
    status["message"] = f"Job submission has failed. Reason: {reason}. Message: {message}"
    status["endTime"] = now_rfc3339()
    status["failed"] = int(status.get("failed") or 0) + 1


class RayJobController(QueueController):
    """Reconciles RayJobs: job-owned clusters, submission, status, deadlines, suspension, TTL."""

    name = "kuberay-rayjob"
    watches = (RAYJOBS, RAYCLUSTERS)
    resync_seconds = 1.0

    def __init__(self, runtime: RayRuntime, *, simulated_job_seconds: float = 1.0) -> None:
        super().__init__()
        self.runtime = runtime
        self.simulated_job_seconds = simulated_job_seconds
        self._simulated: dict[tuple[str, str], float] = {}  # (ns, jobId) -> submitted at
        self.submitters = SubmitterPods()

    def stop(self) -> None:
        """Stop the worker thread, then remove the submitter pods' local filesystems."""
        super().stop()
        self.submitters.stop()

    def keys_for(self, event: Any) -> list[Any]:
        meta = event.object.get("metadata", {})
        if event.key == RAYJOBS:
            return [(meta.get("namespace"), meta.get("name"))]
        owners = [o for o in meta.get("ownerReferences") or [] if o.get("kind") == "RayJob"]
        return [(meta.get("namespace"), o["name"]) for o in owners]

    def resync(self) -> list[Any]:
        if self.store is None:
            return []
        items = []
        clusters = {
            (c["metadata"].get("namespace"), c["metadata"]["name"]) for c in self.store.list(RAYCLUSTERS)
        }
        jobs = self.store.list(RAYJOBS)
        self.submitters.sweep(
            clusters, {(j["metadata"].get("namespace"), j["metadata"]["name"]) for j in jobs}
        )
        for job in jobs:
            status = job.get("status") or {}
            namespace = job["metadata"].get("namespace")
            active = status.get("jobDeploymentStatus") not in _TERMINAL_DEPLOYMENT + ("Suspended",)
            ttl_pending = (
                status.get("jobDeploymentStatus") in ("Complete", "Failed")
                and (job.get("spec") or {}).get("shutdownAfterJobFinishes")
                and (namespace, status.get("rayClusterName")) in clusters
            )
            if active or ttl_pending:
                items.append((namespace, job["metadata"]["name"]))
        return items

    # -- reconcile --------------------------------------------------------------------------------
    def reconcile(self, item: tuple[str, str]) -> None:
        namespace, name = item
        job = get_or_none(self.store, RAYJOBS, namespace, name)
        if job is None or job["metadata"].get("deletionTimestamp"):
            return
        status = copy.deepcopy(job.get("status") or {})
        spec = job.get("spec") or {}
        phase = status.get("jobDeploymentStatus", "")
        problem = rayjob_problem(job) if phase != "ValidationFailed" else None
        if problem is not None:  # KubeRay fails the job at once: a Warning Event and ValidationFailed
            reason, error = problem
            self.store.record_event(
                job,
                type="Warning",
                reason=reason,
                message=f"{namespace}/{name}: {error}",
                source="kuberay-operator",
            )
            status.update(jobDeploymentStatus="ValidationFailed", reason="ValidationFailed", message=error)
        elif phase == "":
            self._initialize(job, status)
        elif phase == "Initializing":
            if not (self._suspending(spec, status) or self._deadline(spec, status)):
                self._initializing(job, status)
        elif phase == "Running":
            if not (self._suspending(spec, status) or self._deadline(spec, status)):
                self._running(job, status)
        elif phase == "Suspending":
            self._suspend(job, status)
        elif phase == "Suspended":
            if not spec.get("suspend"):
                status["jobStatus"] = ""
                status["jobDeploymentStatus"] = ""
        elif phase in ("Complete", "Failed"):
            self._finished(job, status)
        finished = status.get("jobDeploymentStatus") in ("Complete", "Failed")
        if finished and phase not in ("Complete", "Failed"):
            self.submitters.finish(self.store, job, status, succeeded=status.get("jobStatus") == "SUCCEEDED")
        if status != (job.get("status") or {}):
            fresh = dict(job)
            fresh["status"] = status
            try:
                self.store.update_status(RAYJOBS, fresh)
            except StoreError as err:
                if err.code != 409:
                    raise
            self.enqueue(item)

    def _initialize(self, job: dict[str, Any], status: dict[str, Any]) -> None:
        spec, name = job.get("spec") or {}, job["metadata"]["name"]
        if not status.get("jobId"):
            status["jobId"] = spec.get("jobId") or f"{name}-{R.rand5()}"
        if not status.get("rayClusterName"):
            selected = (spec.get("clusterSelector") or {}).get("ray.io/cluster")
            status["rayClusterName"] = selected or f"{name}-{R.rand5()}"
        if not status.get("jobStatus"):
            status["jobStatus"] = "PENDING"
        status["jobDeploymentStatus"] = "Initializing"
        status["startTime"] = now_rfc3339()
        status.setdefault("succeeded", 0)
        status.setdefault("failed", 0)

    def _suspending(self, spec: dict[str, Any], status: dict[str, Any]) -> bool:
        if not spec.get("suspend") or spec.get("clusterSelector"):
            return False
        status["jobDeploymentStatus"] = "Suspending"
        return True

    def _deadline(self, spec: dict[str, Any], status: dict[str, Any]) -> bool:
        deadline = spec.get("activeDeadlineSeconds")
        started = parse_rfc3339(status.get("startTime"))
        if deadline is None or started is None or time.time() < started + int(deadline):
            return False
        status["jobDeploymentStatus"] = "Failed"
        status["reason"] = "DeadlineExceeded"
        status["message"] = (
            f"The RayJob has passed the activeDeadlineSeconds. StartTime: {status.get('startTime')}. "
            f"ActiveDeadlineSeconds: {int(deadline)}"
        )
        status["endTime"] = now_rfc3339()
        status["failed"] = int(status.get("failed") or 0) + 1
        return True

    def _cluster(self, job: dict[str, Any], status: dict[str, Any]) -> dict[str, Any] | None:
        namespace = job["metadata"].get("namespace")
        existing = get_or_none(self.store, RAYCLUSTERS, namespace, status["rayClusterName"])
        if existing is not None:
            return existing
        spec = job.get("spec") or {}
        if spec.get("clusterSelector") or not spec.get("rayClusterSpec"):
            return None
        labels = dict(job["metadata"].get("labels") or {})
        labels.update(
            {
                "ray.io/originated-from-cr-name": job["metadata"]["name"],
                "ray.io/originated-from-crd": "RayJob",
                "ray.io/job-submission-mode": spec.get("submissionMode") or "K8sJobMode",
            }
        )
        cluster = {
            "apiVersion": "ray.io/v1",
            "kind": "RayCluster",
            "metadata": {
                "name": status["rayClusterName"],
                "namespace": namespace,
                "labels": labels,
                "annotations": dict(job["metadata"].get("annotations") or {}),
                "ownerReferences": [R.owner_reference({**job, "kind": "RayJob", "apiVersion": "ray.io/v1"})],
            },
            "spec": copy.deepcopy(spec["rayClusterSpec"]),
        }
        created = self.store.create(RAYCLUSTERS, cluster)
        self._event(job, "CreatedRayCluster", f"Created RayCluster {namespace}/{status['rayClusterName']}")
        return dict(created)

    def _initializing(self, job: dict[str, Any], status: dict[str, Any]) -> None:
        cluster = self._cluster(job, status)
        if cluster is None:
            return
        cluster_status = cluster.get("status") or {}
        status["rayClusterStatus"] = cluster_status
        if cluster_status.get("state") != "ready":
            return
        namespace = job["metadata"].get("namespace", "")
        handle = self.runtime.find(namespace, cluster["metadata"]["name"])
        if handle is None or handle.state != "ready":
            return
        status["dashboardURL"] = f"127.0.0.1:{handle.endpoints()['dashboard']}"
        run: SubmitterRun | None = None
        k8s_job_mode = ((job.get("spec") or {}).get("submissionMode") or "K8sJobMode") == "K8sJobMode"
        if k8s_job_mode and handle.head is not None:  # a real head: the submitter Job runs `ray job submit`
            self._ensure_submitter_job(job, status)
            status["jobDeploymentStatus"] = "Running"
            return
        if k8s_job_mode:
            try:
                run = self.submitters.ensure(self.store, job, status, status["dashboardURL"])
            except PodPending as err:  # the kubelet waits for the volume's source (FailedMount)
                log.info("RayJob %s/%s: submitter pod pending: %s", namespace, job["metadata"]["name"], err)
                return
            except InitContainerFailed as err:  # the Job's pod fails: BackoffLimitExceeded upstream
                _submission_failed(
                    status, "BackoffLimitExceeded", f"Job has reached the specified backoff limit; {err}"
                )
                return
            except ValueError as err:  # a template the API server would have refused
                _submission_failed(status, "Invalid", str(err))
                return
        try:
            self._submit(job, status, handle.dashboard_url, simulated=handle.head is None, run=run)
        except Exception as err:  # the submission failed: KubeRay reports SubmissionFailed
            _submission_failed(status, type(err).__name__, str(err))
            return
        status["jobDeploymentStatus"] = "Running"

    def _ensure_submitter_job(self, job: dict[str, Any], status: dict[str, Any]) -> None:
        """Create the ``batch/v1`` Job ``<rayjob>`` whose pod submits and follows the Ray job."""
        meta = job["metadata"]
        if get_or_none(self.store, JOBS, meta.get("namespace"), meta["name"]) is not None:
            return
        made = submitter_job(
            job,
            (job.get("spec") or {}).get("submitterPodTemplate"),
            dashboard=status["dashboardURL"],
            job_id=status["jobId"],
        )
        self.store.create(JOBS, made)
        # KubeRay's utils.CreatedRayJobSubmitter
        self._event(
            job, "CreatedRayJobSubmitter", f"Created Kubernetes Job {meta.get('namespace')}/{meta['name']}"
        )

    def _event(self, job: dict[str, Any], reason: str, message: str) -> None:
        """A Normal Event about ``job`` from KubeRay's RayJob controller."""
        self.store.record_event(
            job, type="Normal", reason=reason, message=message, source="rayjob-controller"
        )

    def _submitter(self, job: dict[str, Any]) -> dict[str, Any] | None:
        """The RayJob's submitter Job (named as the RayJob), or None when there is none."""
        meta = job["metadata"]
        return get_or_none(self.store, JOBS, meta.get("namespace"), meta["name"])

    def _submitter_finished(self, job: dict[str, Any]) -> bool:
        """Whether the submitter Job has finished (a ``Complete`` or ``Failed`` condition), or is gone."""
        submitter = self._submitter(job)
        if submitter is None:
            return True
        return any(
            c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
            for c in (submitter.get("status") or {}).get("conditions") or []
        )

    def _submitter_failure(self, job: dict[str, Any]) -> str | None:
        """Why the submitter Job failed (its condition, plus the last pod's failure), if it did."""
        submitter = self._submitter(job)
        if submitter is None:
            return None
        failed = next(
            (
                c
                for c in (submitter.get("status") or {}).get("conditions") or []
                if c.get("type") == "Failed" and c.get("status") == "True"
            ),
            None,
        )
        if failed is None:
            return None
        detail = ""
        uid = submitter["metadata"].get("uid")
        namespace = submitter["metadata"].get("namespace")
        for pod in self.store.list("pods", namespace, label_selector=f"controller-uid={uid}"):
            for entry in (pod.get("status") or {}).get("initContainerStatuses") or []:
                term = (entry.get("state") or {}).get("terminated") or {}
                if term.get("exitCode"):
                    detail = f'; init container "{entry.get("name")}" exited with code {term["exitCode"]}'
        return f"{failed.get('reason')}. Message: {failed.get('message')}{detail}"

    def _submit(
        self,
        job: dict[str, Any],
        status: dict[str, Any],
        dashboard: str,
        *,
        simulated: bool,
        run: SubmitterRun | None = None,
    ) -> None:
        spec = job.get("spec") or {}
        runtime_env = load_yaml(spec.get("runtimeEnvYAML") or "") or None
        if runtime_env is not None and not isinstance(runtime_env, dict):
            raise ValueError("runtimeEnvYAML must be a YAML mapping")
        if run is not None and runtime_env and isinstance(runtime_env.get("working_dir"), str):
            runtime_env["working_dir"] = run.localise(runtime_env["working_dir"])  # as the pod sees it
        if simulated:
            self._simulated[(job["metadata"].get("namespace", ""), status["jobId"])] = time.monotonic()
            return
        from ray.job_submission import JobSubmissionClient  # lazy: ray is ~500 ms, only with real heads

        client = JobSubmissionClient(dashboard, headers=run.headers() if run is not None else None)
        existing = {j.submission_id for j in client.list_jobs()}
        if status["jobId"] in existing:  # submitted before (e.g. a retried reconcile)
            return
        kwargs: dict[str, Any] = {}
        if spec.get("entrypointNumCpus") is not None:
            kwargs["entrypoint_num_cpus"] = float(spec["entrypointNumCpus"])
        if spec.get("entrypointNumGpus") is not None:
            kwargs["entrypoint_num_gpus"] = float(spec["entrypointNumGpus"])
        if spec.get("entrypointResources"):
            resources = spec["entrypointResources"]
            kwargs["entrypoint_resources"] = load_yaml(resources) if isinstance(resources, str) else resources
        if spec.get("metadata"):
            kwargs["metadata"] = dict(spec["metadata"])
        client.submit_job(
            entrypoint=spec.get("entrypoint", ""),
            submission_id=status["jobId"],
            runtime_env=runtime_env,
            **kwargs,
        )

    def _job_info(
        self, job: dict[str, Any], status: dict[str, Any], dashboard: str, simulated: bool
    ) -> dict[str, Any]:
        if simulated:
            since = self._simulated.get((job["metadata"].get("namespace", ""), status["jobId"]))
            done = since is None or time.monotonic() - since >= self.simulated_job_seconds
            return {"status": "SUCCEEDED" if done else "RUNNING", "message": "simulated (Ray is disabled)"}
        from ray.job_submission import JobSubmissionClient  # lazy: ray is ~500 ms, only with real heads

        info = JobSubmissionClient(dashboard).get_job_info(status["jobId"])
        return {
            "status": str(getattr(info.status, "value", info.status)),
            "message": info.message or "",
            "start_time": info.start_time,
            "end_time": info.end_time,
        }

    def _running(self, job: dict[str, Any], status: dict[str, Any]) -> None:
        cluster = self._cluster(job, status)
        namespace = job["metadata"].get("namespace", "")
        handle = self.runtime.find(namespace, status.get("rayClusterName", ""))
        if cluster is None or handle is None or handle.state != "ready":
            return
        try:
            info = self._job_info(job, status, handle.dashboard_url, handle.head is None)
        except Exception as err:  # Ray's job client raises RuntimeError, requests' and its own errors
            failure = self._submitter_failure(job) if handle.head is not None else None
            if failure is not None:  # KubeRay: the submitter Job failed before Ray knew the job
                reason, _, message = failure.partition(". Message: ")
                _submission_failed(status, reason, message)
                return
            log.debug("RayJob %s/%s: job info not available yet: %s", namespace, job["metadata"]["name"], err)
            return
        status["rayClusterStatus"] = cluster.get("status") or {}
        status["jobStatus"] = info["status"]
        status["message"] = info.get("message", "")
        status.pop("reason", None)
        if info.get("start_time"):
            status["startTime"] = status.get("startTime") or _stamp(info["start_time"])
        # KubeRay (ray-project/kuberay#1919, rayjob_controller.go): in K8sJobMode a terminal Ray job is
        # terminal for the RayJob only once the submitter Job has finished too, so the cluster is not
        # deleted under the submitter while it still follows the job's logs.
        k8s_job_mode = ((job.get("spec") or {}).get("submissionMode") or "K8sJobMode") == "K8sJobMode"
        terminal = info["status"] in _TERMINAL_JOB
        if terminal and k8s_job_mode and handle.head is not None and not self._submitter_finished(job):
            return
        if terminal:
            failed = info["status"] == "FAILED"
            status["jobDeploymentStatus"] = "Failed" if failed else "Complete"
            if failed:
                status["reason"] = "AppFailed"
                status["failed"] = int(status.get("failed") or 0) + 1
            elif info["status"] == "SUCCEEDED":
                status["succeeded"] = int(status.get("succeeded") or 0) + 1
            status["endTime"] = _stamp(info.get("end_time")) or now_rfc3339()

    def _delete_cluster(self, job: dict[str, Any], status: dict[str, Any]) -> bool:
        """Delete the job-owned cluster; True once it is gone."""
        name = status.get("rayClusterName")
        if not name or (job.get("spec") or {}).get("clusterSelector"):
            return True
        try:
            self.store.delete(RAYCLUSTERS, job["metadata"].get("namespace"), name)
        except StoreError as err:
            if err.code != 404:
                raise
            return True
        return False

    def _suspend(self, job: dict[str, Any], status: dict[str, Any]) -> None:
        self.submitters.delete(self.store, job, status)
        try:  # KubeRay deletes the submitter Job (its pods go with it)
            self.store.delete(JOBS, job["metadata"].get("namespace"), job["metadata"]["name"])
        except StoreError as err:
            if err.code != 404:
                raise
        if not self._delete_cluster(job, status):
            return  # deleted now; the next pass sees it gone
        for key in ("rayClusterName", "dashboardURL", "jobId", "message", "reason", "startTime", "endTime"):
            status.pop(key, None)
        status["rayClusterStatus"] = {}
        status["jobStatus"] = ""
        status["jobDeploymentStatus"] = "Suspended"

    def _finished(self, job: dict[str, Any], status: dict[str, Any]) -> None:
        spec = job.get("spec") or {}
        if not spec.get("shutdownAfterJobFinishes") or not status.get("rayClusterName"):
            return
        ended = parse_rfc3339(status.get("endTime")) or time.time()
        if time.time() < ended + int(spec.get("ttlSecondsAfterFinished") or 0):
            return
        if self._delete_cluster(job, status):
            status["rayClusterStatus"] = {}
            log.info(
                "RayJob %s/%s: RayCluster %s deleted",
                job["metadata"].get("namespace"),
                job["metadata"]["name"],
                status["rayClusterName"],
            )
