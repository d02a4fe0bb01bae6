"""Kueue's job reconciler for RayCluster and RayJob (jobframework/reconciler.go, v0.19.2).

One managed job (queue label, not owned by a queued RayJob) has one Workload: it is created with
the job, replaced when the job's pod sets change (an admitted elastic RayCluster's counts instead
change by Workload slices, :mod:`.elastic`), finished when a RayJob completes. An admitted
Workload unsuspends the job with the flavors' nodeLabels and tolerations and its admission checks'
``podSetUpdates`` (e.g. the ProvisioningRequest annotations); an evicted one suspends it (restoring
the pod templates) and, once the job is no longer active, gives the quota back and
says whether it was requeued. ``PodsReady`` follows the job's status.

Example:
    >>> job_active({"kind": "RayCluster", "status": {"state": "ready"}}), pods_ready({"kind": "RayJob"})
    (True, False)
"""

from __future__ import annotations

import copy
from typing import Any

from rayqueue_local.apimachinery.time import now_rfc3339
from rayqueue_local.controllers.kueue import conditions as cond
from rayqueue_local.controllers.kueue import messages as msg
from rayqueue_local.controllers.kueue.elastic import ElasticReconciler, is_elastic_cluster, live_slices
from rayqueue_local.controllers.kueue.ops import (
    FLAVORS,
    JOB_CONTROLLER,
    PRIORITY_CLASSES,
    WORKLOADS,
    metadata_of,
)
from rayqueue_local.controllers.kueue.workloads import (
    PRIORITY_CLASS_LABEL,
    QUEUE_LABEL,
    apply_admission,
    build_workload,
    job_pod_sets,
    pod_sets_match,
    restore_pod_templates,
)

__all__ = ["JobReconciler", "job_active", "pods_ready"]


def job_active(job: dict[str, Any]) -> bool:
    """Kueue's IsActive: pods may still run (RayCluster ready; RayJob neither new nor suspended)."""
    status = job.get("status") or {}
    if job.get("kind") == "RayJob":
        return status.get("jobDeploymentStatus") not in (None, "", "Suspended", "New")
    return status.get("state") == "ready"


def pods_ready(job: dict[str, Any]) -> bool:
    """Whether the job's pods are up: a RayJob's cluster, or the RayCluster itself, is ``ready``."""
    status = job.get("status") or {}
    if job.get("kind") == "RayJob":
        return (status.get("rayClusterStatus") or {}).get("state") == "ready"
    return status.get("state") == "ready"


class JobReconciler(ElasticReconciler):
    """The job half of the Kueue controller (a mixin over :class:`~.ops.StoreOps`)."""

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
        if not (metadata_of(job).get("labels") or {}).get(QUEUE_LABEL):
            return False
        if job.get("kind") == "RayJob" and (job.get("spec") or {}).get("clusterSelector"):
            return False  # Kueue skips RayJobs that target an existing cluster
        for ref in metadata_of(job).get("ownerReferences") or ():
            if ref.get("kind") == "RayJob" and ref.get("controller"):
                owner = self._get("rayjobs.ray.io", metadata_of(job).get("namespace"), ref.get("name", ""))
                if owner is not None and (metadata_of(owner).get("labels") or {}).get(QUEUE_LABEL):
                    return False
        return True

    def reconcile_job(self, key: str, namespace: str | None, name: str) -> None:
        """Kueue's job reconciler for one RayCluster or RayJob."""
        job = self._get(key, namespace, name)
        if job is None or metadata_of(job).get("deletionTimestamp") or not self._managed(job):
            return
        workloads = self._workloads_of(job)
        if is_elastic_cluster(job):  # Workload slices (.elastic): the one holding quota first
            workloads = live_slices(workloads)
        wl = workloads[0] if workloads else None
        status = job.get("status") or {}
        if job.get("kind") == "RayJob" and status.get("jobDeploymentStatus") in ("Complete", "Failed"):
            if wl is not None:
                self._finish(job, wl)
            return
        if job.get("kind") == "RayJob" and status.get("jobDeploymentStatus") == "ValidationFailed":
            self._hold(wl)  # IsOnHold (reconciler.go step 2): KubeRay failed its validation
            return
        if wl is None:
            self._create_workload(key, job)
            return
        if metadata_of(wl).get("deletionTimestamp"):
            self._stop_job(key, job, wl, "Workload is deleted")
            self._drop_finalizer(wl)
            return
        if is_elastic_cluster(job) and self._reconcile_slices(job, workloads):
            return
        if not pod_sets_match(wl, job):
            self._replace_workload(key, job, wl)
            return
        evicted = cond.find(wl, msg.EVICTED)
        if evicted is not None and evicted.get("status") == "True":
            self._stop_job(key, job, wl, evicted.get("message", ""))
            job = self._get(key, namespace, name) or job
            if cond.is_true(wl, msg.QUOTA_RESERVED) and not job_active(job):
                self._release(wl, evicted)
            return
        admitted = cond.is_true(wl, msg.ADMITTED) and bool((wl.get("status") or {}).get("admission"))
        if (job.get("spec") or {}).get("suspend"):
            if admitted:
                self._start_job(key, job, wl)
            elif not cond.is_true(wl, msg.QUOTA_RESERVED):
                self._sync_queue_and_priority(job, wl)
            return
        if not admitted:
            self._stop_job(key, job, wl, "Not admitted by cluster queue")
            return
        self._sync_pods_ready(job, wl)

    def _create_workload(self, key: str, job: dict[str, Any]) -> None:
        priorities = {
            metadata_of(p)["name"]: int(p.get("value", 0)) for p in self.store.list(PRIORITY_CLASSES)
        }
        try:
            wl = build_workload(job, priorities)
        except KeyError:
            wanted = (metadata_of(job).get("labels") or {}).get(PRIORITY_CLASS_LABEL)
            text = f'workloadpriorityclasses.kueue.x-k8s.io "{wanted}" not found'
            self._event(job, "ErrWorkloadCompose", text, warning=True, source=JOB_CONTROLLER)
            return
        created = self.store.create(WORKLOADS, wl)
        meta = metadata_of(created)
        self._event(
            job,
            "CreatedWorkload",
            f"Created Workload: {meta['namespace']}/{meta['name']}",
            source=JOB_CONTROLLER,
        )
        if not (job.get("spec") or {}).get("suspend"):
            self._stop_job(key, job, None, "Not admitted by cluster queue")

    def _replace_workload(self, key: str, job: dict[str, Any], wl: dict[str, Any]) -> None:
        meta = metadata_of(wl)
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
        flavors = {metadata_of(f)["name"]: f for f in self.store.list(FLAVORS)}
        job = copy.deepcopy(job)
        apply_admission(job, admission, flavors, wl["status"].get("admissionChecks") or [], workload=wl)
        self.store.update(key, job)
        self._event(
            job, "Started", f"Admitted by clusterQueue {admission['clusterQueue']}", source=JOB_CONTROLLER
        )

    def _release(self, wl: dict[str, Any], evicted: dict[str, Any]) -> None:
        """The job stopped: clear the reservation and say whether the Workload was requeued."""
        wl = copy.deepcopy(wl)
        now = now_rfc3339()
        reason, message = evicted.get("reason", ""), evicted.get("message", "")
        requeued = cond.find(wl, msg.REQUEUED) or {}
        reactivated = (
            reason.startswith(msg.EVICTED_BY_DEACTIVATION)
            and requeued.get("status") == "True"
            and requeued.get("reason") == msg.REACTIVATED
        )
        if not reactivated:  # resumed before its job stopped: the workload controller requeued it
            cond.set_condition(wl, msg.REQUEUED, reason == msg.EVICTED_BY_PREEMPTION, reason, message, now)
        cond.unset_quota_reservation(wl, msg.PENDING, message, now)
        if cond.find(wl, msg.PODS_READY) is not None:
            cond.set_condition(
                wl, msg.PODS_READY, False, "WaitForStart", "Not all pods are ready or succeeded", now
            )
        self.store.update_status(WORKLOADS, wl)

    def _hold(self, wl: dict[str, Any] | None) -> None:
        """A job on hold gives its quota back (``QuotaReserved`` False, reason ``OnHold``)."""
        if wl is not None and cond.is_true(wl, msg.QUOTA_RESERVED):
            wl = copy.deepcopy(wl)
            if cond.unset_quota_reservation(wl, "OnHold", "Job is on hold", now_rfc3339()):
                self.store.update_status(WORKLOADS, wl)

    def _finish(self, job: dict[str, Any], wl: dict[str, Any]) -> None:
        if not cond.is_true(wl, msg.FINISHED):
            status = job.get("status") or {}
            failed = status.get("jobDeploymentStatus") == "Failed" or status.get("jobStatus") == "FAILED"
            wl = copy.deepcopy(wl)
            reason = "Failed" if failed else "Succeeded"
            cond.set_condition(wl, msg.FINISHED, True, reason, status.get("message") or "", now_rfc3339())
            wl = self.store.update_status(WORKLOADS, wl)
            meta = metadata_of(wl)
            text = f"Workload '{meta['namespace']}/{meta['name']}' is declared finished"
            self._event(job, "FinishedWorkload", text, source=JOB_CONTROLLER)
        self._drop_finalizer(wl)

    def _sync_queue_and_priority(self, job: dict[str, Any], wl: dict[str, Any]) -> None:
        """A suspended job's queue-name and priority-class labels may change; follow them."""
        labels = metadata_of(job).get("labels") or {}
        spec = copy.deepcopy(wl.get("spec") or {})
        spec["queueName"] = labels.get(QUEUE_LABEL, "")
        wanted = labels.get(PRIORITY_CLASS_LABEL)
        current = (spec.get("priorityClassRef") or {}).get("name")
        if wanted and wanted != current:
            for wpc in self.store.list(PRIORITY_CLASSES):
                if metadata_of(wpc)["name"] == wanted:
                    spec["priorityClassRef"] = {
                        "group": "kueue.x-k8s.io",
                        "kind": "WorkloadPriorityClass",
                        "name": wanted,
                    }
                    spec["priority"] = int(wpc.get("value", 0))
        if spec != wl.get("spec"):
            wl = copy.deepcopy(wl)
            wl["spec"] = spec
            self.store.update(WORKLOADS, wl)

    def _sync_pods_ready(self, job: dict[str, Any], wl: dict[str, Any]) -> None:
        wl = copy.deepcopy(wl)
        current = cond.find(wl, msg.PODS_READY)
        if pods_ready(job):
            recovering = current is not None and current.get("reason") in ("WaitForRecovery", "Recovered")
            reason = "Recovered" if recovering else "Started"
            changed = cond.set_condition(
                wl,
                msg.PODS_READY,
                True,
                reason,
                "All pods reached readiness and the workload is running",
                now_rfc3339(),
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
                now_rfc3339(),
            )
        else:
            changed = cond.set_condition(
                wl,
                msg.PODS_READY,
                False,
                "WaitForStart",
                "Not all pods are ready or succeeded",
                now_rfc3339(),
            )
        if changed:
            self.store.update_status(WORKLOADS, wl)
