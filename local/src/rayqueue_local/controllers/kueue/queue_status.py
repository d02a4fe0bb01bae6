"""ClusterQueue and LocalQueue ``status`` as Kueue reports it (pure: objects in, status dicts out).

ClusterQueue: ``pendingWorkloads``, ``reservingWorkloads``, ``admittedWorkloads``,
``flavorsReservation``/``flavorsUsage`` (every flavor and covered resource of the resource groups,
with ``total`` and ``borrowed`` beyond the nominal quota) and the ``Active`` condition
(``Ready``/``Stopped``/``FlavorNotFound``). LocalQueue: the same counts and per-flavor totals of its
own Workloads, and ``Active`` (``Ready``/``Stopped``/``ClusterQueueIsInactive``).
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

__all__ = ["cluster_queue_active", "cluster_queue_status", "local_queue_status"]


def cluster_queue_active(cq: dict[str, Any], missing_flavors: list[str]) -> tuple[bool, str, str]:
    """``(active, reason, message)`` of a ClusterQueue's ``Active`` condition."""
    reasons, messages = [], []
    if ((cq.get("spec") or {}).get("stopPolicy") or "None") != "None":
        reasons.append("Stopped")
        messages.append("is stopped")
    if missing_flavors:
        reasons.append("FlavorNotFound")
        messages.append(f"references missing ResourceFlavor(s): {','.join(missing_flavors)}")
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
