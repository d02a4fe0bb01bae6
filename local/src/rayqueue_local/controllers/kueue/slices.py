"""Elastic jobs' Workload slices, as Kueue's ``ElasticJobsViaWorkloadSlices`` does them (pure).

Kueue (feature gate ``ElasticJobsViaWorkloadSlices``, alpha since v0.13; RayCluster support with the
gate in later releases; annotation ``kueue.x-k8s.io/elastic-job: "true"`` on the job) lets an admitted job
change its size without being suspended [site/content/en/docs/concepts/elastic_workload.md,
keps/77-dynamically-sized-jobs, pkg/workloadslicing]:

- **scale down**: the smaller counts are written into the admitted Workload itself (``spec.podSets`` and
  ``status.admission.podSetAssignments``): the quota is returned at once (:func:`shrink`);
- **scale up**: a new Workload *slice* with the larger counts, annotated
  ``kueue.x-k8s.io/workload-slice-replacement-for: <namespace>/<old slice>`` (:func:`new_slice`), queues
  like any Workload; the scheduler asks only for what the old slice does not already hold
  (:func:`delta_view`), and while that does not fit the slice is ``QuotaReserved=False`` with Kueue's
  reason and message. Once admitted, it holds the whole (:func:`merged_admission`) and the old slice is
  ``Finished`` with reason ``WorkloadSliceReplaced`` (:func:`replaced_condition`); the new Pods'
  ``kueue.x-k8s.io/elastic-job`` scheduling gates are removed up to the admitted counts.

Not emulated: the new slice reusing the old slice's flavor when another would fit, ``minCount`` (partial
admission of a scale-up), TAS and MultiKueue for slices.

Example:
    >>> old = {"metadata": {"name": "w1", "namespace": "ns"}, "status": {"admission": {
    ...     "clusterQueue": "cq", "podSetAssignments": [{"name": "workers", "count": 1,
    ...     "flavors": {"cpu": "f"}, "resourceUsage": {"cpu": "1"}}]}}}
    >>> new = {"metadata": {"name": "w2", "annotations": {REPLACEMENT_FOR: "ns/w1"}},
    ...        "spec": {"podSets": [{"name": "workers", "count": 3}]}}
    >>> delta_view(new, old)["spec"]["podSets"][0]["count"]
    2
    >>> merged_admission({"clusterQueue": "cq", "podSetAssignments": [{"name": "workers", "count": 2,
    ...     "flavors": {"cpu": "f"}, "resourceUsage": {"cpu": "2"}}]}, old)["podSetAssignments"][0]
    {'name': 'workers', 'count': 3, 'flavors': {'cpu': 'f'}, 'resourceUsage': {'cpu': '3'}}
"""

from __future__ import annotations

import copy
from typing import Any

from rayqueue_local.controllers.kueue.amounts import format_amount, to_amount

__all__ = [
    "ELASTIC_GATE",
    "REPLACEMENT_FOR",
    "SLICE_REPLACED",
    "counts",
    "delta_view",
    "merged_admission",
    "new_slice",
    "replaced_condition",
    "scheduling_views",
    "replacement_for",
    "shrink",
]

#: The annotation on a scale-up slice naming the slice it replaces (``namespace/name``).
REPLACEMENT_FOR = "kueue.x-k8s.io/workload-slice-replacement-for"
#: The ``Finished`` reason of a slice replaced by a larger one.
SLICE_REPLACED = "WorkloadSliceReplaced"
#: The scheduling gate an elastic job's Pods carry until their slice is admitted.
ELASTIC_GATE = "kueue.x-k8s.io/elastic-job"


def replacement_for(wl: dict[str, Any]) -> str | None:
    """The ``namespace/name`` of the slice ``wl`` replaces, if it is a scale-up slice."""
    return ((wl.get("metadata") or {}).get("annotations") or {}).get(REPLACEMENT_FOR)


def counts(pod_sets: list[dict[str, Any]]) -> dict[str, int]:
    """Pod set name -> count."""
    return {p["name"]: int(p.get("count", 1)) for p in pod_sets}


def _admitted_counts(wl: dict[str, Any]) -> dict[str, int]:
    admission = (wl.get("status") or {}).get("admission") or {}
    return {p["name"]: int(p.get("count", 0)) for p in admission.get("podSetAssignments") or ()}


def delta_view(slice_wl: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """What the scheduler must find room for: ``slice_wl`` less what ``old`` already holds."""
    held = _admitted_counts(old)
    out = copy.deepcopy(slice_wl)
    for pod_set in out.get("spec", {}).get("podSets") or []:
        pod_set["count"] = max(0, int(pod_set.get("count", 1)) - held.get(pod_set["name"], 0))
    return out


def _scaled_usage(usage: dict[str, Any], count: int, per_count: int) -> dict[str, str]:
    """``usage`` (for ``per_count`` Pods) for ``count`` Pods."""
    if per_count <= 0:
        return {k: str(v) for k, v in usage.items()}
    return {k: format_amount(k, to_amount(k, v) * count // per_count) for k, v in usage.items()}


def merged_admission(delta: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """The new slice's admission: the delta the scheduler admitted plus what ``old`` held."""
    held = {
        p["name"]: p
        for p in ((old.get("status") or {}).get("admission") or {}).get("podSetAssignments") or ()
    }
    out = copy.deepcopy(delta)
    for psa in out.get("podSetAssignments") or []:
        before = held.get(psa["name"])
        if before is None:
            continue
        usage = dict(psa.get("resourceUsage") or {})
        for res, amount in (before.get("resourceUsage") or {}).items():
            usage[res] = format_amount(res, to_amount(res, usage.get(res, 0)) + to_amount(res, amount))
        psa["count"] = int(psa.get("count", 0)) + int(before.get("count", 0))
        if usage:
            psa["resourceUsage"] = usage
    return out


def shrink(wl: dict[str, Any], pod_sets: list[dict[str, Any]]) -> dict[str, Any]:
    """``wl`` with the smaller counts of ``pod_sets`` in its spec and its admission (usage scaled)."""
    wanted = counts(pod_sets)
    out = copy.deepcopy(wl)
    for pod_set in out.get("spec", {}).get("podSets") or []:
        pod_set["count"] = wanted.get(pod_set["name"], int(pod_set.get("count", 1)))
    admission = (out.get("status") or {}).get("admission") or {}
    for psa in admission.get("podSetAssignments") or []:
        count = wanted.get(psa["name"])
        if count is None:
            continue
        before = int(psa.get("count", 0))
        psa["resourceUsage"] = _scaled_usage(dict(psa.get("resourceUsage") or {}), count, before)
        psa["count"] = count
    return out


def new_slice(built: dict[str, Any], old: dict[str, Any], generation: int) -> dict[str, Any]:
    """A scale-up slice from ``built`` (the Workload Kueue would build for the job now)."""
    out = copy.deepcopy(built)
    meta = out["metadata"]
    old_meta = old.get("metadata") or {}
    base = str(old_meta.get("name", meta["name"])).rsplit("-slice-", 1)[0]
    meta["name"] = f"{base}-slice-{generation}"
    meta.setdefault("annotations", {})[REPLACEMENT_FOR] = (
        f"{old_meta.get('namespace')}/{old_meta.get('name')}"
    )
    return out


def replaced_condition(new: dict[str, Any], job_uid: str) -> tuple[str, str]:
    """The old slice's ``Finished`` reason and message once ``new`` is admitted (Kueue's words)."""
    uid = (new.get("metadata") or {}).get("uid", "")
    return (
        SLICE_REPLACED,
        f"Replaced to accommodate a workload (UID: {uid}, JobUID: {job_uid}) "
        "due to workload slice aggregation",
    )


def _reserved(wl: dict[str, Any]) -> bool:
    return any(
        c.get("type") == "QuotaReserved" and c.get("status") == "True"
        for c in (wl.get("status") or {}).get("conditions") or ()
    )


def scheduling_views(workloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Workloads as the scheduler weighs them: a pending scale-up slice (one that holds no quota)
    as its :func:`delta_view`, what its old slice does not hold yet."""
    by_key = {f"{w['metadata'].get('namespace')}/{w['metadata']['name']}": w for w in workloads}
    out = []
    for wl in workloads:
        target = replacement_for(wl)
        old = by_key.get(target) if target else None
        out.append(delta_view(wl, old) if old is not None and not _reserved(wl) else wl)
    return out
