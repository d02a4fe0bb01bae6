"""The Kueue controller of the local control plane: jobs -> Workloads -> admission -> jobs.

It plays the parts of Kueue's job reconciler (jobframework/reconciler.go), workload controller
(core/workload_controller.go), scheduler (an :func:`~.engine.admission_pass` whenever something
changed, and every ``resync_seconds``) and queue controllers, writing through the store:

* a managed RayCluster/RayJob (queue label, not owned by a queued RayJob) gets its Workload;
  a job whose pod sets change is stopped and its Workload replaced;
* admission writes ``status.admission``, ``QuotaReserved``/``Admitted`` and the ``QuotaReserved``
  and ``Admitted`` events, then unsuspends the job with the flavors' nodeLabels and tolerations;
* evictions (preemption, ``spec.active=false``, a draining queue) set ``Evicted`` (and
  ``Preempted``) with upstream's reasons, messages and events, suspend the job, and, once the job
  is no longer active, clear the reservation and set ``Requeued``;
* ``spec.active=true`` after a deactivation sets ``Requeued=True`` (``Reactivated``);
* ``PodsReady`` follows the job (RayCluster ``status.state``, RayJob ``rayClusterStatus.state``);
  a RayJob whose ``jobDeploymentStatus`` is Complete/Failed finishes its Workload;
* ClusterQueue and LocalQueue status (counts, flavor usage, ``Active``) are kept current;
* the webhooks (:mod:`.webhook`) and the visibility API (:mod:`.visibility`) are installed at start.

Example:
    >>> KueueController().name, "workloads.kueue.x-k8s.io" in KueueController.watches
    ('kueue', True)
"""

from __future__ import annotations

import copy
import logging
import time
from typing import Any

from rayqueue_sdk.local.controllers.base import QueueController
from rayqueue_sdk.local.controllers.kueue import conditions as cond
from rayqueue_sdk.local.controllers.kueue import messages as msg
from rayqueue_sdk.local.controllers.kueue import queue_status, visibility, webhook
from rayqueue_sdk.local.controllers.kueue.engine import PassResult, admission_pass
from rayqueue_sdk.local.controllers.kueue.snapshot import WorkloadInfo, parse_time
from rayqueue_sdk.local.controllers.kueue.workloads import (
    JOB_UID_LABEL,
    PRIORITY_CLASS_LABEL,
    QUEUE_LABEL,
    RESOURCE_IN_USE_FINALIZER,
    apply_admission,
    build_workload,
    job_pod_sets,
    pod_sets_match,
    restore_pod_templates,
)

__all__ = ["KueueController"]

log = logging.getLogger(__name__)

WORKLOADS = "workloads.kueue.x-k8s.io"
CLUSTER_QUEUES = "clusterqueues.kueue.x-k8s.io"
LOCAL_QUEUES = "localqueues.kueue.x-k8s.io"
COHORTS = "cohorts.kueue.x-k8s.io"
FLAVORS = "resourceflavors.kueue.x-k8s.io"
PRIORITY_CLASSES = "workloadpriorityclasses.kueue.x-k8s.io"
JOB_KINDS = {"rayclusters.ray.io": "RayCluster", "rayjobs.ray.io": "RayJob"}
SCHEDULE = ("schedule",)
ADMISSION = "kueue-admission"
JOB_CONTROLLER = "kueue-job-controller"
WORKLOAD_CONTROLLER = "kueue-workload-controller"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


def _job_active(job: dict[str, Any]) -> bool:
    """Kueue's IsActive: pods may still run (RayCluster ready; RayJob neither new nor suspended)."""
    status = job.get("status") or {}
    if job.get("kind") == "RayJob":
        return status.get("jobDeploymentStatus") not in (None, "", "Suspended", "New")
    return status.get("state") == "ready"


def _pods_ready(job: dict[str, Any]) -> bool:
    status = job.get("status") or {}
    if job.get("kind") == "RayJob":
        return (status.get("rayClusterStatus") or {}).get("state") == "ready"
    return status.get("state") == "ready"


class KueueController(QueueController):
    """Kueue for the local control plane; ``cp`` (optional) gets the visibility routes.

    Example:
        >>> ctrl = KueueController()
        >>> ctrl.keys_for(type("E", (), {"key": "clusterqueues.kueue.x-k8s.io", "object": {}})())
        [('schedule',)]
    """

    name = "kueue"
    watches = (
        *JOB_KINDS,
        WORKLOADS,
        CLUSTER_QUEUES,
        LOCAL_QUEUES,
        COHORTS,
        FLAVORS,
        PRIORITY_CLASSES,
        "namespaces",
    )
    resync_seconds = 2.0
    #: re-check every job on every n-th resync (events drive them otherwise)
    job_resync_every = 10
    #: run a pass at least this often even when nothing was written
    idle_pass_seconds = 30.0

    def __init__(self, cp: Any = None) -> None:
        super().__init__()
        self.cp = cp
        self._dirty = True
        self._ticks = 0
        self._last_pass = 0.0

    # -- wiring ----------------------------------------------------------------------------------
    def start(self, store: Any) -> None:
        """Install the webhooks and the visibility API, then start reconciling."""
        webhook.install(store)
        if self.cp is not None and hasattr(self.cp, "add_route"):
            visibility.register(self.cp, store)
        super().start(store)

    def keys_for(self, event: Any) -> list[Any]:
        """Work items for a store event: the job, the Workload (and its owner), and a pass."""
        self._dirty = True
        meta = _meta(event.object)
        if event.key in JOB_KINDS:
            return [("job", event.key, meta.get("namespace"), meta.get("name")), SCHEDULE]
        if event.key == WORKLOADS:
            items: list[Any] = [("workload", meta.get("namespace"), meta.get("name"))]
            for ref in meta.get("ownerReferences") or ():
                for key, kind in JOB_KINDS.items():
                    if ref.get("kind") == kind:
                        items.append(("job", key, meta.get("namespace"), ref.get("name")))
            return [*items, SCHEDULE]
        return [SCHEDULE]

    def resync(self) -> list[Any]:
        """A pass (skipped by :meth:`schedule` when nothing changed), the running Workloads that have
        a maximum execution time, and every job on every ``job_resync_every``-th call."""
        self._ticks += 1
        items: list[Any] = []
        if self._ticks % self.job_resync_every == 1:
            for key in JOB_KINDS:
                for job in self.store.list(key):
                    items.append(("job", key, _meta(job).get("namespace"), _meta(job).get("name")))
        for wl in self.store.list(WORKLOADS):
            if (wl.get("spec") or {}).get("maximumExecutionTimeSeconds") and cond.is_true(wl, msg.ADMITTED):
                items.append(("workload", _meta(wl).get("namespace"), _meta(wl).get("name")))
        return [*items, SCHEDULE]

    def reconcile(self, item: Any) -> None:
        """Dispatch one work item; a write conflict re-queues it."""
        from rayqueue_sdk.local.store import StoreError

        try:
            if item == SCHEDULE:
                try:
                    self.schedule()
                except Exception:
                    self._dirty = True  # retry on the next resync
                    raise
            elif item[0] == "workload":
                self.reconcile_workload(item[1], item[2])
            else:
                self.reconcile_job(item[1], item[2], item[3])
        except StoreError as exc:
            if exc.code == 409:
                self.enqueue(item)
            elif exc.code != 404:
                raise

    # -- small store helpers ----------------------------------------------------------------------
    def _event(
        self, obj: dict[str, Any], reason: str, message: str, *, warning: bool = False, source: str
    ) -> None:
        self.store.record_event(
            obj, type="Warning" if warning else "Normal", reason=reason, message=message[:1024], source=source
        )

    def _get(self, key: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        from rayqueue_sdk.local.store import StoreError

        try:
            return dict(self.store.get(key, namespace, name))
        except StoreError as exc:
            if exc.code == 404:
                return None
            raise

    def _workloads_of(self, job: dict[str, Any]) -> list[dict[str, Any]]:
        uid = _meta(job)["uid"]
        return [
            wl
            for wl in self.store.list(
                WORKLOADS, _meta(job).get("namespace"), label_selector=f"{JOB_UID_LABEL}={uid}"
            )
            if any(ref.get("uid") == uid for ref in _meta(wl).get("ownerReferences") or ())
        ]

    def _drop_finalizer(self, wl: dict[str, Any]) -> None:
        finalizers = _meta(wl).get("finalizers") or []
        if RESOURCE_IN_USE_FINALIZER in finalizers:
            wl = copy.deepcopy(wl)
            wl["metadata"]["finalizers"] = [f for f in finalizers if f != RESOURCE_IN_USE_FINALIZER]
            self.store.update(WORKLOADS, wl)

    def _stop_job(self, key: str, job: dict[str, Any], wl: dict[str, Any] | None, message: str) -> None:
        if (job.get("spec") or {}).get("suspend"):
            return
        job = copy.deepcopy(job)
        if wl is not None:
            restore_pod_templates(job, wl)
        else:
            job["spec"]["suspend"] = True
        self.store.update(key, job)
        self._event(job, "Stopped", message, source=JOB_CONTROLLER)

    # -- the job reconciler -----------------------------------------------------------------------
    def _managed(self, job: dict[str, Any]) -> bool:
        if not (_meta(job).get("labels") or {}).get(QUEUE_LABEL):
            return False
        if job.get("kind") == "RayJob" and (job.get("spec") or {}).get("clusterSelector"):
            return False  # Kueue skips RayJobs that target an existing cluster
        for ref in _meta(job).get("ownerReferences") or ():
            if ref.get("kind") == "RayJob" and ref.get("controller"):
                owner = self._get("rayjobs.ray.io", _meta(job).get("namespace"), ref.get("name", ""))
                if owner is not None and (_meta(owner).get("labels") or {}).get(QUEUE_LABEL):
                    return False
        return True

    def reconcile_job(self, key: str, namespace: str, name: str) -> None:
        """Kueue's job reconciler for one RayCluster or RayJob."""
        job = self._get(key, namespace, name)
        if job is None or _meta(job).get("deletionTimestamp") or not self._managed(job):
            return
        workloads = self._workloads_of(job)
        wl = workloads[0] if workloads else None
        status = job.get("status") or {}
        if job.get("kind") == "RayJob" and status.get("jobDeploymentStatus") in ("Complete", "Failed"):
            if wl is not None:
                self._finish(job, wl)
            return
        if wl is None:
            self._create_workload(key, job)
            return
        if _meta(wl).get("deletionTimestamp"):
            self._stop_job(key, job, wl, "Workload is deleted")
            self._drop_finalizer(wl)
            return
        if not pod_sets_match(wl, job):
            self._replace_workload(key, job, wl)
            return
        evicted = cond.find(wl, msg.EVICTED)
        if evicted is not None and evicted.get("status") == "True":
            self._stop_job(key, job, wl, evicted.get("message", ""))
            job = self._get(key, namespace, name) or job
            if cond.is_true(wl, msg.QUOTA_RESERVED) and not _job_active(job):
                self._release(wl, evicted)
            return
        admitted = cond.is_true(wl, msg.ADMITTED) and bool((wl.get("status") or {}).get("admission"))
        if (job.get("spec") or {}).get("suspend"):
            if admitted:
                self._start_job(key, job, wl)
            return
        if not admitted:
            self._stop_job(key, job, wl, "Not admitted by cluster queue")
            return
        self._sync_pods_ready(job, wl)

    def _create_workload(self, key: str, job: dict[str, Any]) -> None:
        priorities = {_meta(p)["name"]: int(p.get("value", 0)) for p in self.store.list(PRIORITY_CLASSES)}
        try:
            wl = build_workload(job, priorities)
        except KeyError:
            wanted = (_meta(job).get("labels") or {}).get(PRIORITY_CLASS_LABEL)
            text = f'workloadpriorityclasses.kueue.x-k8s.io "{wanted}" not found'
            self._event(job, "ErrWorkloadCompose", text, warning=True, source=JOB_CONTROLLER)
            return
        created = self.store.create(WORKLOADS, wl)
        meta = _meta(created)
        self._event(
            job,
            "CreatedWorkload",
            f"Created Workload: {meta['namespace']}/{meta['name']}",
            source=JOB_CONTROLLER,
        )
        if not (job.get("spec") or {}).get("suspend"):
            self._stop_job(key, job, None, "Not admitted by cluster queue")

    def _replace_workload(self, key: str, job: dict[str, Any], wl: dict[str, Any]) -> None:
        meta = _meta(wl)
        reserved = cond.is_true(wl, msg.QUOTA_RESERVED)
        if (job.get("spec") or {}).get("suspend") and not reserved:
            wl = copy.deepcopy(wl)
            wl["spec"]["podSets"] = job_pod_sets(job)
            self.store.update(WORKLOADS, wl)
            text = f"Updated not matching Workload for suspended job: {meta['namespace']}/{meta['name']}"
            self._event(job, "UpdatedWorkload", text, source=JOB_CONTROLLER)
            return
        self._stop_job(
            key, job, wl, "No matching Workload; restoring pod templates according to existent Workload"
        )
        self._drop_finalizer(wl)
        self.store.delete(WORKLOADS, meta["namespace"], meta["name"])
        self._event(
            job,
            "DeletedWorkload",
            f"Deleted not matching Workload: {meta['namespace']}/{meta['name']}",
            source=JOB_CONTROLLER,
        )

    def _start_job(self, key: str, job: dict[str, Any], wl: dict[str, Any]) -> None:
        admission = wl["status"]["admission"]
        flavors = {_meta(f)["name"]: f for f in self.store.list(FLAVORS)}
        job = copy.deepcopy(job)
        apply_admission(job, admission, flavors)
        self.store.update(key, job)
        self._event(
            job, "Started", f"Admitted by clusterQueue {admission['clusterQueue']}", source=JOB_CONTROLLER
        )

    def _release(self, wl: dict[str, Any], evicted: dict[str, Any]) -> None:
        """The job stopped: clear the reservation and say whether the Workload was requeued."""
        wl = copy.deepcopy(wl)
        now = _now()
        reason, message = evicted.get("reason", ""), evicted.get("message", "")
        cond.set_condition(wl, msg.REQUEUED, reason == msg.EVICTED_BY_PREEMPTION, reason, message, now)
        cond.unset_quota_reservation(wl, msg.PENDING, message, now)
        if cond.find(wl, msg.PODS_READY) is not None:
            cond.set_condition(
                wl, msg.PODS_READY, False, "WaitForStart", "Not all pods are ready or succeeded", now
            )
        self.store.update_status(WORKLOADS, wl)

    def _finish(self, job: dict[str, Any], wl: dict[str, Any]) -> None:
        if not cond.is_true(wl, msg.FINISHED):
            status = job.get("status") or {}
            failed = status.get("jobDeploymentStatus") == "Failed" or status.get("jobStatus") == "FAILED"
            wl = copy.deepcopy(wl)
            reason = "Failed" if failed else "Succeeded"
            cond.set_condition(wl, msg.FINISHED, True, reason, status.get("message") or "", _now())
            wl = self.store.update_status(WORKLOADS, wl)
            meta = _meta(wl)
            text = f"Workload '{meta['namespace']}/{meta['name']}' is declared finished"
            self._event(job, "FinishedWorkload", text, source=JOB_CONTROLLER)
        self._drop_finalizer(wl)

    def _sync_pods_ready(self, job: dict[str, Any], wl: dict[str, Any]) -> None:
        wl = copy.deepcopy(wl)
        current = cond.find(wl, msg.PODS_READY)
        if _pods_ready(job):
            recovering = current is not None and current.get("reason") in ("WaitForRecovery", "Recovered")
            reason = "Recovered" if recovering else "Started"
            changed = cond.set_condition(
                wl,
                msg.PODS_READY,
                True,
                reason,
                "All pods reached readiness and the workload is running",
                _now(),
            )
        elif current is not None and (
            current.get("status") == "True" or current.get("reason") == "WaitForRecovery"
        ):
            changed = cond.set_condition(
                wl,
                msg.PODS_READY,
                False,
                "WaitForRecovery",
                "At least one pod has failed, waiting for recovery",
                _now(),
            )
        else:
            changed = cond.set_condition(
                wl, msg.PODS_READY, False, "WaitForStart", "Not all pods are ready or succeeded", _now()
            )
        if changed:
            self.store.update_status(WORKLOADS, wl)

    # -- the workload controller -----------------------------------------------------------------
    def reconcile_workload(self, namespace: str, name: str) -> None:
        """Deactivation, reactivation and finalizer release for one Workload."""
        wl = self._get(WORKLOADS, namespace, name)
        if wl is None:
            return
        if _meta(wl).get("deletionTimestamp"):
            owner = next(iter(_meta(wl).get("ownerReferences") or ()), None)
            if owner is None or not any(
                self._get(k, namespace, owner.get("name", ""))
                for k, kind in JOB_KINDS.items()
                if kind == owner.get("kind")
            ):
                self._drop_finalizer(wl)
            return
        if cond.is_true(wl, msg.FINISHED):
            self._drop_finalizer(wl)
            return
        if (wl.get("spec") or {}).get("active", True) is False:
            self._deactivate(wl)
        else:
            self._check_active(wl)

    def _deactivate(self, wl: dict[str, Any]) -> None:
        """``spec.active=false``: evict with ``Deactivated`` (and the cause a DeactivationTarget gave)."""
        if cond.is_true(wl, msg.EVICTED):
            return
        had_admission = bool((wl.get("status") or {}).get("admission"))
        wl = copy.deepcopy(wl)
        reason, message = msg.EVICTED_BY_DEACTIVATION, msg.DEACTIVATED_MESSAGE
        target = cond.find(wl, msg.DEACTIVATION_TARGET)
        if target is not None:
            reason = f"{reason}DueTo{target.get('reason', '')}"
            message = f"{message} due to {target.get('message', '')}"
            cond.remove_condition(wl, msg.DEACTIVATION_TARGET)
        cond.evict(wl, reason, message, _now())
        wl = self.store.update_status(WORKLOADS, wl)
        if had_admission:
            self._event(wl, f"EvictedDueTo{reason}", message, source=WORKLOAD_CONTROLLER)

    def _check_active(self, wl: dict[str, Any]) -> None:
        """An active Workload: deactivation targets, the maximum execution time, requeue reasons."""
        now = _now()
        if cond.is_true(wl, msg.DEACTIVATION_TARGET):
            wl = copy.deepcopy(wl)
            wl["spec"]["active"] = False
            self.store.update(WORKLOADS, wl)
            return
        limit = (wl.get("spec") or {}).get("maximumExecutionTimeSeconds")
        admitted = cond.find(wl, msg.ADMITTED)
        if limit and admitted is not None and admitted.get("status") == "True":
            spent = time.time() - parse_time(admitted.get("lastTransitionTime"))
            spent += int((wl.get("status") or {}).get("accumulatedPastExecutionTimeSeconds") or 0)
            if spent >= int(limit):
                wl = copy.deepcopy(wl)
                cond.set_condition(
                    wl,
                    msg.DEACTIVATION_TARGET,
                    True,
                    msg.MAXIMUM_EXECUTION_TIME_EXCEEDED,
                    msg.EXCEEDING_MAXIMUM_EXECUTION_TIME,
                    now,
                )
                wl["status"].pop("accumulatedPastExecutionTimeSeconds", None)
                wl = self.store.update_status(WORKLOADS, wl)
                text = f"The maximum execution time ({int(limit)}s) exceeded"
                self._event(
                    wl, msg.MAXIMUM_EXECUTION_TIME_EXCEEDED, text, warning=True, source=WORKLOAD_CONTROLLER
                )
                return
        requeued = cond.find(wl, msg.REQUEUED)
        if requeued is None or requeued.get("status") != "False":
            return
        restarted = {
            msg.EVICTED_BY_DEACTIVATION: (msg.REACTIVATED, msg.REACTIVATED_MESSAGE),
            msg.EVICTED_BY_CLUSTER_QUEUE_STOPPED: (
                msg.CLUSTER_QUEUE_RESTARTED,
                "The ClusterQueue was restarted after being stopped",
            ),
            msg.EVICTED_BY_LOCAL_QUEUE_STOPPED: (
                msg.LOCAL_QUEUE_RESTARTED,
                "The LocalQueue was restarted after being stopped",
            ),
        }.get(requeued.get("reason", ""))
        if restarted is None or self._queue_stopped(wl, requeued.get("reason", "")):
            return
        wl = copy.deepcopy(wl)
        cond.set_condition(wl, msg.REQUEUED, True, *restarted, now)
        self.store.update_status(WORKLOADS, wl)

    def _queue_stopped(self, wl: dict[str, Any], reason: str) -> bool:
        lq = self._get(LOCAL_QUEUES, _meta(wl).get("namespace"), (wl.get("spec") or {}).get("queueName", ""))
        if reason == msg.EVICTED_BY_LOCAL_QUEUE_STOPPED:
            return lq is not None and ((lq.get("spec") or {}).get("stopPolicy") or "None") != "None"
        if reason == msg.EVICTED_BY_CLUSTER_QUEUE_STOPPED:
            cq = (
                self._get(CLUSTER_QUEUES, None, (lq or {}).get("spec", {}).get("clusterQueue", ""))
                if lq
                else None
            )
            return cq is not None and ((cq.get("spec") or {}).get("stopPolicy") or "None") != "None"
        return False

    # -- the scheduler and the queue controllers ---------------------------------------------------
    def schedule(self) -> None:
        """One admission pass over the store's current state, its decisions written back.

        Skipped when no watched object changed since the last pass, unless ``idle_pass_seconds``
        have gone by."""
        if not self._dirty and time.monotonic() - self._last_pass < self.idle_pass_seconds:
            return
        self._dirty = False
        self._last_pass = time.monotonic()
        workloads = [w for w in self.store.list(WORKLOADS) if not _meta(w).get("deletionTimestamp")]
        cluster_queues = self.store.list(CLUSTER_QUEUES)
        local_queues = self.store.list(LOCAL_QUEUES)
        flavors = self.store.list(FLAVORS)
        namespaces = {_meta(n)["name"]: _meta(n).get("labels") or {} for n in self.store.list("namespaces")}
        result = admission_pass(
            cluster_queues=cluster_queues,
            cohorts=self.store.list(COHORTS),
            resource_flavors=flavors,
            local_queues=local_queues,
            workloads=workloads,
            namespaces=namespaces,
            now=time.time(),
        )
        self._apply(result)
        self._update_queues(result, cluster_queues, local_queues, flavors)

    def _write(self, wl: dict[str, Any]) -> dict[str, Any] | None:
        from rayqueue_sdk.local.store import StoreError

        try:
            return dict(self.store.update_status(WORKLOADS, wl))
        except StoreError as exc:
            if exc.code not in (404, 409):
                raise
            self._dirty = True  # the Workload moved on; decide again with fresh state
            self.enqueue(SCHEDULE)
            return None

    def _apply(self, result: PassResult) -> None:
        now = _now()
        for admission in result.admitted:
            wl = copy.deepcopy(admission.workload.obj)
            cond.set_quota_reserved(wl, admission.admission, now)
            stored = self._write(wl)
            if stored is None:
                continue
            cq = admission.admission["clusterQueue"]
            queued_at = cond.find(stored, msg.REQUEUED) or {}
            since = parse_time(queued_at.get("lastTransitionTime") or _meta(stored).get("creationTimestamp"))
            waited = max(0.0, time.time() - since) if since else 0.0
            text = f"Quota reserved in ClusterQueue {cq}, wait time since queued was {waited:.0f}s"
            self._event(stored, "QuotaReserved", text, source=ADMISSION)
            self._event(
                stored,
                "Admitted",
                f"Admitted by ClusterQueue {cq}, wait time since reservation was 0s",
                source=ADMISSION,
            )
            self._enqueue_owner(stored)
        for eviction in result.evicted:
            wl = copy.deepcopy(eviction.workload.obj)
            cond.evict(wl, eviction.reason, eviction.message, now, eviction.preemption_reason)
            stored = self._write(wl)
            if stored is None:
                continue
            if eviction.preemptor is not None:
                suffix = msg.priority_suffix(eviction.preemptor.priority, eviction.workload.priority)
                self._event(stored, "Preempted", eviction.message + suffix, source=ADMISSION)
                preemptor = eviction.preemptor
                victim = eviction.workload
                text = (
                    f"Preempted workload {victim.namespace}/{victim.name} "
                    f"(UID: {victim.uid}) in ClusterQueue {victim.cluster_queue}{suffix}"
                )
                self._event(preemptor.obj, "PreemptedWorkload", text, source=ADMISSION)
            self._event(stored, f"EvictedDueTo{eviction.reason}", eviction.message, source=ADMISSION)
            self._enqueue_owner(stored)
        for pending in result.pending:
            wl = copy.deepcopy(pending.workload.obj)
            if not cond.set_condition(wl, msg.QUOTA_RESERVED, False, pending.reason, pending.message, now):
                continue
            stored = self._write(wl)
            if stored is not None and pending.reason == msg.PENDING:
                self._event(stored, msg.PENDING, pending.message, warning=True, source=ADMISSION)

    def _enqueue_owner(self, wl: dict[str, Any]) -> None:
        for ref in _meta(wl).get("ownerReferences") or ():
            for key, kind in JOB_KINDS.items():
                if ref.get("kind") == kind:
                    self.enqueue(("job", key, _meta(wl).get("namespace"), ref.get("name")))

    def _update_queues(
        self,
        result: PassResult,
        cluster_queues: list[dict[str, Any]],
        local_queues: list[dict[str, Any]],
        flavors: list[dict[str, Any]],
    ) -> None:
        now = _now()
        usage: dict[str, dict[tuple[str, str], int]] = {}
        lq_usage: dict[tuple[str, str], dict[tuple[str, str], int]] = {}
        reserving: dict[str, int] = {}
        lq_reserving: dict[tuple[str, str], int] = {}
        reserved: list[WorkloadInfo] = [w for w in result.workloads if w.reserved and not w.finished]
        for wl in reserved:
            owner = wl.cluster_queue or ""
            reserving[owner] = reserving.get(owner, 0) + 1
            lq_key = (wl.namespace, wl.queue_name)
            lq_reserving[lq_key] = lq_reserving.get(lq_key, 0) + 1
            for fr, value in wl.usage.items():
                usage.setdefault(owner, {})[fr] = usage.setdefault(owner, {}).get(fr, 0) + value
                lq_usage.setdefault(lq_key, {})[fr] = lq_usage.setdefault(lq_key, {}).get(fr, 0) + value
        lq_pending: dict[tuple[str, str], int] = {}
        for wls in result.queue_order.values():
            for wl in wls:
                lq_pending[(wl.namespace, wl.queue_name)] = (
                    lq_pending.get((wl.namespace, wl.queue_name), 0) + 1
                )
        flavor_names = {_meta(f)["name"] for f in flavors}
        by_name = {_meta(cq)["name"]: cq for cq in cluster_queues}
        active_cqs = set()
        for cq in cluster_queues:
            name = _meta(cq)["name"]
            referenced = [
                f["name"]
                for g in (cq.get("spec") or {}).get("resourceGroups") or ()
                for f in g.get("flavors") or ()
            ]
            missing = sorted({f for f in referenced if f not in flavor_names})
            fields = queue_status.cluster_queue_status(
                cq,
                usage=usage.get(name, {}),
                pending=len(result.queue_order.get(name, [])),
                reserving=reserving.get(name, 0),
                missing_flavors=missing,
            )
            active, reason, message = queue_status.cluster_queue_active(cq, missing)
            if active:
                active_cqs.add(name)
            self._write_queue(CLUSTER_QUEUES, cq, fields, active, reason, message, now)
        for lq in local_queues:
            key = (_meta(lq).get("namespace", ""), _meta(lq)["name"])
            cq_name = (lq.get("spec") or {}).get("clusterQueue", "")
            fields = queue_status.local_queue_status(
                by_name.get(cq_name),
                usage=lq_usage.get(key, {}),
                pending=lq_pending.get(key, 0),
                reserving=lq_reserving.get(key, 0),
            )
            if ((lq.get("spec") or {}).get("stopPolicy") or "None") != "None":
                state = (False, "Stopped", "LocalQueue is stopped")
            elif cq_name not in active_cqs:
                state = (False, "ClusterQueueIsInactive", "Can't submit new workloads to clusterQueue")
            else:
                state = (True, "Ready", "Can submit new workloads to localQueue")
            self._write_queue(LOCAL_QUEUES, lq, fields, *state, now)

    def _write_queue(
        self,
        key: str,
        obj: dict[str, Any],
        fields: dict[str, Any],
        active: bool,
        reason: str,
        message: str,
        now: str,
    ) -> None:
        from rayqueue_sdk.local.store import StoreError

        new = copy.deepcopy(obj)
        status = new.setdefault("status", {})
        status.update(fields)
        cond.set_condition(new, "Active", active, reason, message, now)
        if new.get("status") == obj.get("status"):
            return
        try:
            self.store.update_status(key, new)
        except StoreError as exc:
            if exc.code not in (404, 409):
                raise
