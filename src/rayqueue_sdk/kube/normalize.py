"""Kueue objects of either served version, read with ``v1beta2`` field names only.

The SDK's one place for the ``v1beta1`` → ``v1beta2`` renames of ``reference/k8s-semantics.md`` §2 that
it reads; :class:`~rayqueue_sdk.kube.session.KubeSession` applies it to every Kueue object it reads.
"""

from __future__ import annotations

import json
from typing import Any

from rayqueue_sdk.kube.kinds import KUEUE_GROUP

__all__ = ["normalize_kueue"]

#: The Kueue kinds whose ``v1beta1`` field names differ from ``v1beta2``'s, by plural.
_RENAMED_KINDS = {"clusterqueues": "ClusterQueue", "localqueues": "LocalQueue", "workloads": "Workload"}


def normalize_kueue(obj: dict[str, Any], version: str, plural: str | None = None) -> dict[str, Any]:
    """Rename ``v1beta1`` fields to their ``v1beta2`` names (a copy; ``v1beta2`` objects unchanged).

    The SDK's one place for the renames of ``reference/k8s-semantics.md`` §2 that it reads, so that
    everything above the kube layer reads ``v1beta2`` names only:

    * ClusterQueue ``spec.cohort`` → ``spec.cohortName``; ``spec.admissionChecks[]`` (names) →
      ``spec.admissionChecksStrategy.admissionChecks[{name}]``;
    * LocalQueue ``status.flavorUsage`` → ``status.flavorsUsage``;
    * Workload ``spec.priorityClassName`` + ``priorityClassSource`` → ``spec.priorityClassRef``;
      ``status.accumulatedPastExexcutionTimeSeconds`` (sic) → ``accumulatedPastExecutionTimeSeconds``.

    The kind is the object's ``kind``, else ``plural``'s (list items may come without one).

    Example:
        >>> lq = {"kind": "LocalQueue", "status": {"flavorUsage": [{"name": "default"}]}}
        >>> normalize_kueue(lq, "v1beta1")["status"]["flavorsUsage"]
        [{'name': 'default'}]
        >>> normalize_kueue({"spec": {"cohort": "ml", "admissionChecks": ["prov"]}}, "v1beta1",
        ...                 "clusterqueues")["spec"]
        {'cohortName': 'ml', 'admissionChecksStrategy': {'admissionChecks': [{'name': 'prov'}]}}
    """
    if version != "v1beta1":
        return obj
    kind = obj.get("kind") or _RENAMED_KINDS.get(plural or "")
    if kind not in _RENAMED_KINDS.values():
        return obj
    out: dict[str, Any] = json.loads(json.dumps(obj))
    spec: dict[str, Any] = out["spec"] if isinstance(out.get("spec"), dict) else {}
    status: dict[str, Any] = out["status"] if isinstance(out.get("status"), dict) else {}
    if kind == "ClusterQueue":
        if "cohort" in spec and "cohortName" not in spec:
            spec["cohortName"] = spec.pop("cohort")
        checks = spec.pop("admissionChecks", None)
        if checks and "admissionChecksStrategy" not in spec:
            spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": str(c)} for c in checks]}
    elif kind == "LocalQueue":
        if "flavorUsage" in status and "flavorsUsage" not in status:
            status["flavorsUsage"] = status.pop("flavorUsage")
    elif kind == "Workload":
        if spec.get("priorityClassName") and "priorityClassRef" not in spec:
            source = spec.pop("priorityClassSource", None) or "kueue.x-k8s.io/workloadpriorityclass"
            is_wpc = source.startswith("kueue")
            spec["priorityClassRef"] = {
                "group": KUEUE_GROUP if is_wpc else "scheduling.k8s.io",
                "kind": "WorkloadPriorityClass" if is_wpc else "PriorityClass",
                "name": spec.pop("priorityClassName"),
            }
        typo = "accumulatedPastExexcutionTimeSeconds"
        if typo in status and "accumulatedPastExecutionTimeSeconds" not in status:
            status["accumulatedPastExecutionTimeSeconds"] = status.pop(typo)
    return out
