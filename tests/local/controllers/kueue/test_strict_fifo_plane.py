"""Issue 27's two StrictFIFO behaviours on a LocalControlPlane, with Workloads created directly.

1. A StrictFIFO head that needs preemption and finds none keeps its queue's unused nominal quota: a
   cohort borrower reads "Workload no longer fits after processing another workload" and waits
   (Kueue v0.19.2 ``Scheduler.reserveCapacityForUnreclaimablePreempt``).
2. A Workload from a namespace the ClusterQueue does not select does not stall a StrictFIFO queue
   (``RequeueReasonNamespaceMismatch``).

Waits poll for a written condition with a deadline; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rayqueue_local import LocalControlPlane
from rayqueue_local.controllers.kueue.controller import KueueController

pytestmark = pytest.mark.slow

WL = "workloads.kueue.x-k8s.io"
KUEUE = "kueue.x-k8s.io/v1beta2"


@pytest.fixture(scope="module")
def cp(crd_dir: Path) -> Iterator[LocalControlPlane]:
    plane = LocalControlPlane(crd_dir=crd_dir, controllers=[])
    plane.start()
    controller = KueueController(plane)
    controller.resync_seconds = 0.25
    controller.start(plane.store)
    plane.controllers.append(controller)
    try:
        yield plane
    finally:
        plane.stop()


def wait_for(what: str, probe: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def quota_reserved(cp: LocalControlPlane, ns: str, name: str) -> dict[str, Any]:
    wl = cp.store.get(WL, ns, name)
    conds = (wl.get("status") or {}).get("conditions") or ()
    return next((c for c in conds if c["type"] == "QuotaReserved"), {})


def namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def cluster_queue(name: str, gpus: int, **spec: Any) -> dict[str, Any]:
    groups = [
        {
            "coveredResources": ["nvidia.com/gpu"],
            "flavors": [
                {"name": "gpu-flavor", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": gpus}]}
            ],
        }
    ]
    body = {"namespaceSelector": {}, "resourceGroups": groups, **spec}
    return {"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": body}


def local_queue(ns: str, name: str, cq: str) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE,
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"clusterQueue": cq},
    }


def workload(ns: str, name: str, queue: str, gpus: int, priority: int = 0) -> dict[str, Any]:
    container = {"name": "c", "image": "busybox", "resources": {"requests": {"nvidia.com/gpu": str(gpus)}}}
    return {
        "apiVersion": KUEUE,
        "kind": "Workload",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "queueName": queue,
            "priority": priority,
            "podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [container]}}}],
        },
    }


def test_strict_fifo_sets_aside_a_workload_from_an_unselected_namespace(cp: LocalControlPlane) -> None:
    cp.apply([namespace("sel-a", team="a"), namespace("sel-b", team="b")])
    cp.apply({"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": "gpu-flavor"}, "spec": {}})
    cp.apply(
        cluster_queue(
            "selective", 4, queueingStrategy="StrictFIFO", namespaceSelector={"matchLabels": {"team": "a"}}
        )
    )
    cp.apply([local_queue("sel-b", "lq", "selective"), local_queue("sel-a", "lq", "selective")])
    cp.apply(workload("sel-b", "wrong", "lq", 1, priority=10))  # first in the queue's order
    cp.apply(workload("sel-a", "right", "lq", 1))
    wait_for(
        "the selected namespace's workload admitted",
        lambda: quota_reserved(cp, "sel-a", "right").get("status") == "True",
    )
    wrong = quota_reserved(cp, "sel-b", "wrong")
    assert (wrong.get("status"), wrong.get("message")) == (
        "False",
        "workload namespace doesn't match ClusterQueue selector",
    )


def test_a_blocked_strict_fifo_head_keeps_its_unused_quota_from_a_borrower(cp: LocalControlPlane) -> None:
    cp.apply(namespace("hold"))
    cp.apply({"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": "gpu-flavor"}, "spec": {}})
    preemption = {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "LowerPriority"}
    strict = {"queueingStrategy": "StrictFIFO", "preemption": preemption}
    cp.apply(cluster_queue("owner", 4, cohortName="hold-c", **strict))
    cp.apply(cluster_queue("borrower", 0, cohortName="hold-c"))
    cp.apply([local_queue("hold", "owner", "owner"), local_queue("hold", "borrower", "borrower")])
    cp.apply(workload("hold", "running", "owner", 2, priority=100))
    wait_for(
        "the running workload admitted", lambda: quota_reserved(cp, "hold", "running").get("status") == "True"
    )
    cp.apply(workload("hold", "head", "owner", 4))
    wait_for("the head pending", lambda: quota_reserved(cp, "hold", "head").get("status") == "False")
    cp.apply(workload("hold", "other", "borrower", 2))
    other = wait_for(
        "the borrower's pending message",
        lambda: (c := quota_reserved(cp, "hold", "other")).get("status") == "False" and c,
    )
    assert other["message"] == "Workload no longer fits after processing another workload"
    assert quota_reserved(cp, "hold", "head").get("status") == "False"
