"""Kueue v1beta1 <-> v1beta2 conversion of objects, in place (``reference/k8s-semantics.md`` §2).

:func:`kueue_up` converts v1beta1 to v1beta2 (the storage version), :func:`kueue_down` back;
:meth:`~rayqueue_local.registry.registry.Registry.to_storage` and ``from_storage`` call them on copies.
The renames are listed in :mod:`rayqueue_local.registry.registry`'s docstring.

Example:
    >>> obj = {"spec": {"cohort": "a", "admissionChecks": ["check"]}}
    >>> kueue_up("clusterqueues", obj); obj["spec"]
    {'cohortName': 'a', 'admissionChecksStrategy': {'admissionChecks': [{'name': 'check'}]}}
    >>> kueue_down("clusterqueues", obj); obj["spec"]
    {'cohort': 'a', 'admissionChecks': ['check']}
"""

from __future__ import annotations

from typing import Any

__all__ = ["kueue_down", "kueue_up"]


_PRIORITY_SOURCES = {
    "kueue.x-k8s.io/workloadpriorityclass": ("kueue.x-k8s.io", "WorkloadPriorityClass"),
    "scheduling.k8s.io/priorityclass": ("scheduling.k8s.io", "PriorityClass"),
}
_PRIORITY_GROUPS = {group: source for source, (group, _kind) in _PRIORITY_SOURCES.items()}


def _rename(section: dict[str, Any] | None, old: str, new: str) -> None:
    if isinstance(section, dict) and old in section:
        section[new] = section.pop(old)


def kueue_up(plural: str, obj: dict[str, Any]) -> None:
    """Convert a Kueue object of kind ``plural`` from v1beta1 to v1beta2, in place.

    Example:
        >>> obj = {"spec": {"cohort": "a"}}
        >>> kueue_up("clusterqueues", obj); obj
        {'spec': {'cohortName': 'a'}}
    """
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else None
    status = obj.get("status") if isinstance(obj.get("status"), dict) else None
    if plural == "clusterqueues" and spec is not None:
        _rename(spec, "cohort", "cohortName")
        checks = spec.pop("admissionChecks", None)
        if checks:
            strategy = spec.setdefault("admissionChecksStrategy", {})
            strategy.setdefault("admissionChecks", [{"name": n} for n in checks])
    elif plural == "localqueues" and status is not None:
        _rename(status, "flavorUsage", "flavorsUsage")
        status.pop("flavors", None)
    elif plural == "workloads":
        if spec is not None and ("priorityClassName" in spec or "priorityClassSource" in spec):
            name = spec.pop("priorityClassName", None)
            source = spec.pop("priorityClassSource", "") or ""
            if name:
                group, kind = _PRIORITY_SOURCES.get(source, ("scheduling.k8s.io", "PriorityClass"))
                spec["priorityClassRef"] = {"group": group, "kind": kind, "name": name}
        _rename(status, "accumulatedPastExexcutionTimeSeconds", "accumulatedPastExecutionTimeSeconds")
    elif plural == "admissionchecks" and spec is not None:
        spec.pop("retryDelayMinutes", None)


def kueue_down(plural: str, obj: dict[str, Any]) -> None:
    """Convert a Kueue object of kind ``plural`` from v1beta2 back to v1beta1, in place.

    Example:
        >>> obj = {"spec": {"cohortName": "a"}}
        >>> kueue_down("clusterqueues", obj); obj
        {'spec': {'cohort': 'a'}}
    """
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else None
    status = obj.get("status") if isinstance(obj.get("status"), dict) else None
    if plural == "clusterqueues" and spec is not None:
        _rename(spec, "cohortName", "cohort")
        strategy = spec.get("admissionChecksStrategy")
        if isinstance(strategy, dict):
            checks = strategy.get("admissionChecks") or []
            # Only a strategy of plain names maps back to the v1beta1 list.
            if checks and all(set(c) <= {"name"} for c in checks):
                spec.pop("admissionChecksStrategy")
                spec["admissionChecks"] = [c["name"] for c in checks]
    elif plural == "localqueues" and status is not None:
        _rename(status, "flavorsUsage", "flavorUsage")
    elif plural == "workloads":
        if spec is not None and isinstance(spec.get("priorityClassRef"), dict):
            ref = spec.pop("priorityClassRef")
            spec["priorityClassName"] = ref.get("name")
            spec["priorityClassSource"] = _PRIORITY_GROUPS.get(ref.get("group", ""), "")
        _rename(status, "accumulatedPastExecutionTimeSeconds", "accumulatedPastExexcutionTimeSeconds")
