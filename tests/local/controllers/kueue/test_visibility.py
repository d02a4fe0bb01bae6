"""The pending-workloads view: positions in the ClusterQueue and the LocalQueue, limit and offset."""

from __future__ import annotations

from typing import Any

import pytest
from kueue_factory import Cluster, container, local_queue, ray_cluster

from rayqueue_local.controllers.kueue.visibility import GROUP, pending_items, register, summary
from rayqueue_local.storage.store import StoreError


def workloads() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    lqs = [local_queue("a", "lq", "cq"), local_queue("b", "lq", "cq")]
    c = Cluster(cqs=[], lqs=lqs, priorities={"high": 100})
    for name, ns, priority in [("a1", "a", None), ("b1", "b", None), ("a2", "a", "high"), ("b2", "b", None)]:
        c.submit(ray_cluster(name, ns, queue="lq", priority_class=priority, head=container(cpu=1)))
    admitted = c.submit(ray_cluster("running", "a", queue="lq", head=container(cpu=1)))
    c.workloads[admitted]["status"] = {
        "admission": {"clusterQueue": "cq", "podSetAssignments": []},
        "conditions": [
            {
                "type": "QuotaReserved",
                "status": "True",
                "reason": "QuotaReserved",
                "message": "",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ],
    }
    inactive = c.submit(ray_cluster("off", "a", queue="lq", head=container(cpu=1)))
    c.workloads[inactive]["spec"]["active"] = False
    return list(c.workloads.values()), lqs


def test_positions_follow_priority_then_age_per_cluster_queue_and_local_queue() -> None:
    items = pending_items(*workloads())["cq"]
    rows = [
        (
            i["metadata"]["ownerReferences"][0]["name"],
            i["metadata"]["namespace"],
            i["priority"],
            i["positionInClusterQueue"],
            i["positionInLocalQueue"],
        )
        for i in items
    ]
    assert rows == [("a2", "a", 100, 0, 0), ("a1", "a", 0, 1, 1), ("b1", "b", 0, 2, 0), ("b2", "b", 0, 3, 1)]
    assert all(i["localQueueName"] == "lq" for i in items)


def test_limit_and_offset_page_the_summary() -> None:
    items = pending_items(*workloads())["cq"]
    page = summary(items, limit=2, offset=1)
    assert (
        page["kind"] == "PendingWorkloadsSummary"
        and page["apiVersion"] == "visibility.kueue.x-k8s.io/v1beta2"
    )
    assert [i["positionInClusterQueue"] for i in page["items"]] == [1, 2]
    assert summary(items, limit=10, offset=10)["items"] == []


class _Plane:
    """The little of a control plane that ``register`` uses: the routes it adds are kept by path."""

    options = None
    auth = None

    def __init__(self) -> None:
        self.routes: dict[str, Any] = {}

    def add_route(self, method: str, path_regex: str, handler: Any, *, resource: str, verb: str) -> None:
        self.routes[resource] = handler


class _FailingStore:
    """A store whose reads fail with ``error``."""

    registry = None

    def __init__(self, error: Exception) -> None:
        self.error = error

    def get(self, resource: str, namespace: str | None, name: str) -> dict[str, Any]:
        raise self.error

    def list(self, resource: str) -> list[dict[str, Any]]:
        return []


class _Match:
    def __init__(self, **groups: str) -> None:
        self.groups = groups

    def group(self, key: str) -> str:
        return self.groups[key]


def _handlers(error: Exception) -> tuple[Any, Any]:
    plane = _Plane()
    register(plane, _FailingStore(error))
    return (
        plane.routes[f"clusterqueues/pendingworkloads.{GROUP}"],
        plane.routes[f"localqueues/pendingworkloads.{GROUP}"],
    )


def test_a_missing_queue_is_404_and_other_store_errors_keep_their_status() -> None:
    cq, lq = _handlers(StoreError(404, "NotFound", "absent"))
    code, body = cq(_Match(version="v1beta2", name="cq"), {}, None)
    assert (code, body["reason"], body["message"]) == (
        404,
        "NotFound",
        'clusterqueues.kueue.x-k8s.io "cq" not found',
    )
    cq, lq = _handlers(StoreError(403, "Forbidden", "not yours"))
    code, body = lq(_Match(version="v1beta2", namespace="a", name="lq"), {}, None)
    assert (code, body["reason"], body["message"]) == (403, "Forbidden", "not yours")
    cq, lq = _handlers(StoreError(507, "InsufficientStorage", "disk full"))
    assert cq(_Match(version="v1beta2", name="cq"), {}, None)[0] == 507


def test_a_bug_reading_the_queue_is_not_answered_as_not_found() -> None:
    cq, lq = _handlers(KeyError("metadata"))
    with pytest.raises(KeyError):
        lq(_Match(version="v1beta2", namespace="a", name="lq"), {}, None)
