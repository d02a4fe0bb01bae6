"""ClusterQueue and LocalQueue ``status`` as Kueue reports it (pure: objects in, status dicts out).

ClusterQueue: ``pendingWorkloads``, ``reservingWorkloads``, ``admittedWorkloads``,
``flavorsReservation``/``flavorsUsage`` (every flavor and covered resource of the resource groups,
with ``total`` and ``borrowed`` beyond the nominal quota) and the ``Active`` condition
(``Ready``/``Stopped``/``FlavorNotFound``/``AdmissionCheckNotFound``/``AdmissionCheckInactive``). A
ClusterQueue is inactive while an admission check it names (``spec.admissionChecksStrategy`` or
``spec.admissionChecks``, whatever its ``onFlavors``) has no AdmissionCheck object, or one whose ``Active``
condition is not ``True`` (``pkg/cache/scheduler/clusterqueue.go`` ``updateWithAdmissionChecks``,
``cache.go`` ``AddOrUpdateAdmissionCheck``); ``inactiveReason`` gives the first reason and joins the
messages: "Can't admit new workloads: references missing AdmissionCheck(s): a,b." LocalQueue: the same
counts and per-flavor totals of its own Workloads, and ``Active``
(``Ready``/``Stopped``/``ClusterQueueIsInactive``).
Sources: Kueue v0.19.2 pkg/cache/scheduler/clusterqueue.go, pkg/controller/core/*queue_controller.go.

Example:
    >>> cq = {"metadata": {"name": "cq"}, "spec": {"resourceGroups": [{"coveredResources": ["cpu"],
    ...       "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": 1}]}]}]}}
    >>> usage = {("f", "cpu"): 1500}
    >>> status = cluster_queue_status(cq, usage=usage, pending=2, reserving=1, missing_flavors=[])
    >>> status["flavorsUsage"], status["pendingWorkloads"]
    ([{'name': 'f', 'resources': [{'name': 'cpu', 'total': '1500m', 'borrowed': '500m'}]}], 2)
"""

from __future__ import annotations

from typing import Any

from rayqueue_local.controllers.kueue.amounts import format_amount, to_amount

__all__ = [
    "admission_check_problems",
    "cluster_queue_active",
    "cluster_queue_status",
    "local_queue_status",
]


def _check_names(cq: dict[str, Any]) -> set[str]:
    """Every admission check a ClusterQueue names, whatever its flavors (upstream's ``c.AdmissionChecks``)."""
    spec = cq.get("spec") or {}
    names = {e["name"] for e in (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or ()}
    return names | set(spec.get("admissionChecks") or ())


def admission_check_problems(
    cq: dict[str, Any], checks: dict[str, dict[str, Any]]
) -> tuple[list[str], list[str]]:
    """``(missing, inactive)``: the sorted names of ``cq``'s admission checks with no AdmissionCheck in
    ``checks`` (by name), and of those whose ``Active`` condition is not ``True``.

    Example:
        >>> cq = {"spec": {"admissionChecksStrategy": {"admissionChecks": [{"name": "prov"}]},
        ...                "admissionChecks": ["gone"]}}
        >>> admission_check_problems(cq, {"prov": {"status": {"conditions": [
        ...     {"type": "Active", "status": "False"}]}}})
        (['gone'], ['prov'])
    """
    missing, inactive = [], []
    for name in sorted(_check_names(cq)):
        check = checks.get(name)
        if check is None:
            missing.append(name)
        elif not any(
            c.get("type") == "Active" and c.get("status") == "True"
            for c in (check.get("status") or {}).get("conditions") or ()
        ):
            inactive.append(name)
    return missing, inactive


def cluster_queue_active(
    cq: dict[str, Any],
    missing_flavors: list[str],
    missing_checks: list[str] | tuple[()] = (),
    inactive_checks: list[str] | tuple[()] = (),
) -> tuple[bool, str, str]:
    """``(active, reason, message)`` of a ClusterQueue's ``Active`` condition (``inactiveReason``).

    Example:
        >>> active, reason, message = cluster_queue_active({}, [], ["prov"])
        >>> active, reason
        (False, 'AdmissionCheckNotFound')
        >>> message
        "Can't admit new workloads: references missing AdmissionCheck(s): prov."
        >>> cluster_queue_active({}, [], [], ["a", "b"])[2]
        "Can't admit new workloads: references inactive AdmissionCheck(s): a,b."
    """
    reasons, messages = [], []
    if ((cq.get("spec") or {}).get("stopPolicy") or "None") != "None":
        reasons.append("Stopped")
        messages.append("is stopped")
    if missing_flavors:
        reasons.append("FlavorNotFound")
        messages.append(f"references missing ResourceFlavor(s): {','.join(missing_flavors)}")
    if missing_checks:
        reasons.append("AdmissionCheckNotFound")
        messages.append(f"references missing AdmissionCheck(s): {','.join(missing_checks)}")
    if inactive_checks:
        reasons.append("AdmissionCheckInactive")
        messages.append(f"references inactive AdmissionCheck(s): {','.join(inactive_checks)}")
    if reasons:
        return False, reasons[0], f"Can't admit new workloads: {', '.join(messages)}."
    return True, "Ready", "Can admit new workloads"


def _flavor_rows(
    cq: dict[str, Any], usage: dict[tuple[str, str], int], with_borrowed: bool
) -> list[dict[str, Any]]:
    rows = []
    for group in (cq.get("spec") or {}).get("resourceGroups") or ():
        for flavor in group.get("flavors") or ():
            resources = []
            for res in flavor.get("resources") or ():
                name = res["name"]
                total = usage.get((flavor["name"], name), 0)
                entry = {"name": name, "total": format_amount(name, total)}
                if with_borrowed:
                    nominal = to_amount(name, res.get("nominalQuota", 0))
                    entry["borrowed"] = format_amount(name, max(0, total - nominal))
                resources.append(entry)
            rows.append({"name": flavor["name"], "resources": resources})
    return rows


def cluster_queue_status(
    cq: dict[str, Any],
    *,
    usage: dict[tuple[str, str], int],
    pending: int,
    reserving: int,
    missing_flavors: list[str],
    admitted: int | None = None,
) -> dict[str, Any]:
    """The status fields the Kueue controller maintains (conditions are set separately)."""
    rows = _flavor_rows(cq, usage, True)
    return {
        "pendingWorkloads": pending,
        "reservingWorkloads": reserving,
        "admittedWorkloads": reserving if admitted is None else admitted,
        "flavorsReservation": rows,
        "flavorsUsage": [dict(r, resources=[dict(x) for x in r["resources"]]) for r in rows],
    }


def local_queue_status(
    cq: dict[str, Any] | None, *, usage: dict[tuple[str, str], int], pending: int, reserving: int
) -> dict[str, Any]:
    """A LocalQueue's counts and per-flavor totals (over its ClusterQueue's flavors)."""
    rows = _flavor_rows(cq, usage, False) if cq is not None else []
    return {
        "pendingWorkloads": pending,
        "reservingWorkloads": reserving,
        "admittedWorkloads": reserving,
        "flavorsReservation": rows,
        "flavorsUsage": [dict(r, resources=[dict(x) for x in r["resources"]]) for r in rows],
    }
