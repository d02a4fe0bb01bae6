"""The pending-workloads view: positions in the ClusterQueue and the LocalQueue, limit and offset."""

from __future__ import annotations

from typing import Any

from kueue_factory import Cluster, container, local_queue, ray_cluster

from rayqueue_local.controllers.kueue.visibility import pending_items, summary


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
