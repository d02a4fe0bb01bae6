"""The job reconciler's part for elastic RayClusters: Workload slices on the store (see :mod:`.slices`).

An admitted RayCluster with ``kueue.x-k8s.io/elastic-job: "true"`` whose worker counts change (Ray's
autoscaler patched ``replicas``, or a user did) is not stopped: a scale-down is written into its
Workload at once (the quota is returned), a scale-up becomes a new slice that waits in the queue while
the cluster runs at its admitted size; once the slice is admitted (:meth:`ElasticReconciler._finish_replaced`
from the scheduler) the old slice is ``Finished`` and the Pods' ``kueue.x-k8s.io/elastic-job`` gates are
removed up to the admitted counts (:meth:`ElasticReconciler._ungate`).

Example:
    >>> is_elastic_cluster({"kind": "RayCluster",
    ...                     "metadata": {"annotations": {"kueue.x-k8s.io/elastic-job": "true"}}})
    True
    >>> live_slices([])
    []
"""

from __future__ import annotations

import copy
from typing import Any

from rayqueue_local.apimachinery.time import now_rfc3339
from rayqueue_local.controllers.kueue import conditions as cond
from rayqueue_local.controllers.kueue import messages as msg
from rayqueue_local.controllers.kueue import slices
from rayqueue_local.controllers.kueue.ops import (
    JOB_CONTROLLER,
    PRIORITY_CLASSES,
    WORKLOADS,
    StoreOps,
    metadata_of,
)
from rayqueue_local.controllers.kueue.workloads import ELASTIC_JOB_ANNOTATION, build_workload, job_pod_sets
from rayqueue_local.storage.store import StoreError

__all__ = ["ElasticReconciler", "is_elastic_cluster", "live_slices"]


def is_elastic_cluster(job: dict[str, Any]) -> bool:
    """A RayCluster with Kueue's elastic-job annotation."""
    annotations = metadata_of(job).get("annotations") or {}
    return job.get("kind") == "RayCluster" and annotations.get(ELASTIC_JOB_ANNOTATION) == "true"


def _replaced(wl: dict[str, Any]) -> bool:
    finished = cond.find(wl, msg.FINISHED) or {}
    return finished.get("status") == "True" and finished.get("reason") == slices.SLICE_REPLACED


def live_slices(workloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The slices that are not replaced, the one holding quota first."""
    live = [w for w in workloads if not _replaced(w)]
    return sorted(live, key=lambda w: not cond.is_true(w, msg.QUOTA_RESERVED))


class ElasticReconciler(StoreOps):
    """Scale-down in place, scale-up as a slice, gates off once admitted (a mixin over StoreOps)."""

    def _reconcile_slices(self, job: dict[str, Any], workloads: list[dict[str, Any]]) -> bool:
        """Handle an admitted elastic RayCluster whose counts differ from its Workload's; True if handled."""
        live = live_slices(workloads)
        if not live or not cond.is_true(live[0], msg.ADMITTED) or (job.get("spec") or {}).get("suspend"):
            return False
        active, pending = live[0], [w for w in live[1:] if slices.replacement_for(w)]
        wanted = slices.counts(job_pod_sets(job))
        held = slices.counts((active.get("spec") or {}).get("podSets") or [])
        self._ungate(job, active)
        if wanted == held or set(wanted) != set(held):
            for wl in pending:
                self._delete_slice(job, wl)
            return False
        if all(wanted[name] <= held[name] for name in wanted):
            for wl in pending:
                self._delete_slice(job, wl)
            smaller = slices.shrink(active, job_pod_sets(job))
            stored = self.store.update(WORKLOADS, {**smaller, "status": active.get("status")})
            smaller["metadata"] = stored["metadata"]
            self.store.update_status(WORKLOADS, smaller)
            meta = metadata_of(active)
            text = f"Updated Workload {meta['namespace']}/{meta['name']} to the job's smaller size"
            self._event(job, "UpdatedWorkload", text, source=JOB_CONTROLLER)
            return True
        for wl in pending:
            if slices.counts(wl["spec"]["podSets"]) == wanted:
                return True  # the scale-up slice waits in the queue
            self._delete_slice(job, wl)
        priorities = {
            metadata_of(p)["name"]: int(p.get("value", 0)) for p in self.store.list(PRIORITY_CLASSES)
        }
        generation = int(metadata_of(job).get("generation") or 1)
        created = self.store.create(
            WORKLOADS, slices.new_slice(build_workload(job, priorities), active, generation)
        )
        meta = metadata_of(created)
        self._event(
            job,
            "CreatedWorkload",
            f"Created Workload: {meta['namespace']}/{meta['name']}",
            source=JOB_CONTROLLER,
        )
        return True

    def _delete_slice(self, job: dict[str, Any], wl: dict[str, Any]) -> None:
        meta = metadata_of(wl)
        self._drop_finalizer(wl)
        try:
            self.store.delete(WORKLOADS, meta["namespace"], meta["name"])
        except StoreError as err:
            if err.code != 404:
                raise
        text = f"Deleted not matching Workload: {meta['namespace']}/{meta['name']}"
        self._event(job, "DeletedWorkload", text, source=JOB_CONTROLLER)

    def _replaced_slice(self, wl: dict[str, Any]) -> dict[str, Any] | None:
        """The admitted slice that ``wl`` (being admitted) replaces, if ``wl`` is a scale-up slice."""
        target = slices.replacement_for(wl)
        if not target:
            return None
        namespace, _, name = target.partition("/")
        old = self._get(WORKLOADS, namespace, name)
        real = self._get(WORKLOADS, metadata_of(wl).get("namespace"), metadata_of(wl)["name"])
        if real is not None:  # the scheduler weighed the delta; the slice keeps its whole spec
            wl["spec"] = copy.deepcopy(real["spec"])
        return old if old is not None and cond.is_true(old, msg.QUOTA_RESERVED) else None

    def _finish_replaced(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        """The old slice is Finished (its quota is now the new slice's), as Kueue marks it."""
        old = copy.deepcopy(old)
        job_uid = next(iter(r.get("uid", "") for r in metadata_of(new).get("ownerReferences") or ()), "")
        reason, message = slices.replaced_condition(new, job_uid)
        cond.set_condition(old, msg.FINISHED, True, reason, message, now_rfc3339())
        try:
            old = self.store.update_status(WORKLOADS, old)
        except StoreError as err:
            if err.code not in (404, 409):
                raise
            return
        self._drop_finalizer(old)

    def _ungate(self, job: dict[str, Any], active: dict[str, Any]) -> None:
        """Remove the elastic-job gate from the job's Pods up to the admitted counts of each pod set."""
        admission = (active.get("status") or {}).get("admission") or {}
        allowed = {p["name"]: int(p.get("count", 0)) for p in admission.get("podSetAssignments") or ()}
        meta = metadata_of(job)
        pods = self.store.list("pods", meta.get("namespace"), label_selector=f"ray.io/cluster={meta['name']}")
        by_set: dict[str, list[dict[str, Any]]] = {}
        for pod in pods:
            labels = metadata_of(pod).get("labels") or {}
            name = (
                "head"
                if labels.get("ray.io/node-type") == "head"
                else str(labels.get("ray.io/group", "")).lower()
            )
            by_set.setdefault(name, []).append(pod)
        for name, group in by_set.items():
            group.sort(key=lambda p: (metadata_of(p).get("creationTimestamp", ""), metadata_of(p)["name"]))
            open_ = sum(1 for p in group if not _gated(p))
            for pod in group:
                if open_ >= allowed.get(name, 0):
                    break
                if _gated(pod):
                    pod = copy.deepcopy(pod)
                    gates = pod["spec"]["schedulingGates"]
                    pod["spec"]["schedulingGates"] = [
                        g for g in gates if g.get("name") != slices.ELASTIC_GATE
                    ]
                    try:
                        self.store.update("pods", pod)
                    except StoreError as err:
                        if err.code not in (404, 409):
                            raise
                        continue
                    open_ += 1


def _gated(pod: dict[str, Any]) -> bool:
    return any(
        g.get("name") == slices.ELASTIC_GATE for g in (pod.get("spec") or {}).get("schedulingGates") or ()
    )
