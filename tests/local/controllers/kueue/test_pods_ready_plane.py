"""waitForPodsReady on a LocalControlPlane (Kueue only: nobody makes the RayCluster's pods ready).

An admitted cluster whose pods are not ready within the timeout is evicted (``PodsReadyTimeout``) with a
``requeueState``; after the backoff it is requeued (``BackoffFinished``) and admitted again; once the
requeues would exceed ``backoffLimitCount`` it is deactivated (``DeactivatedDueToRequeuingLimitExceeded``).
The SDK reads the backoff in Kueue's words. Waits poll with a deadline; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kueue_factory import container, ray_cluster

from rayqueue_local import LocalControlPlane
from rayqueue_local.controllers.kueue.controller import KueueController
from rayqueue_local.scenarios import team_queue
from rayqueue_sdk.admission.cluster import ClusterPhase, assess_cluster

pytestmark = pytest.mark.slow

WL = "workloads.kueue.x-k8s.io"


@pytest.fixture(scope="module")
def cp(crd_dir: Path) -> Iterator[LocalControlPlane]:
    plane = LocalControlPlane(
        crd_dir=crd_dir,
        controllers=[],
        wait_for_pods_ready_timeout_seconds=1.0,
        requeuing_backoff_base_seconds=2,
        requeuing_backoff_max_seconds=4,
        requeuing_backoff_limit_count=1,
    )
    plane.start()
    controller = KueueController(plane)
    controller.resync_seconds = 0.25
    controller.start(plane.store)
    plane.controllers.append(controller)
    try:
        plane.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
        plane.apply(team_queue("default"))
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


def cond(obj: dict[str, Any], ctype: str) -> dict[str, Any]:
    return next((c for c in (obj.get("status") or {}).get("conditions") or () if c["type"] == ctype), {})


def test_pods_not_ready_evict_requeue_with_backoff_then_deactivate(cp: LocalControlPlane) -> None:
    cluster = ray_cluster("slow", "default", queue="ds-workspace-queue", head=container(cpu=1, memory="1Gi"))
    cp.apply(cluster)

    def workload() -> dict[str, Any] | None:
        return next(iter(cp.store.list(WL, "default")), None)

    evicted = wait_for(
        "the PodsReady eviction",
        lambda: (w := workload()) and cond(w, "Evicted").get("reason") == "PodsReadyTimeout" and w,
    )
    name = evicted["metadata"]["name"]
    assert cond(evicted, "Evicted")["message"] == f"Exceeded the PodsReady timeout default/{name}"
    assert evicted["status"]["requeueState"]["count"] == 1
    released = wait_for(
        "the quota released",
        lambda: (w := workload()) and cond(w, "QuotaReserved").get("status") == "False" and w,
    )
    assert (cond(released, "Requeued")["status"], cond(released, "Requeued")["reason"]) == (
        "False",
        "PodsReadyTimeout",
    )
    rc = dict(cp.store.get("rayclusters.ray.io", "default", "slow"))
    reading = assess_cluster(rc, released, now=time.time())
    assert reading.phase is ClusterPhase.EVICTED
    assert reading.explanation.startswith("evicted: pods not ready (PodsReadyTimeout); requeued")
    readmitted = wait_for(
        "requeued after the backoff and admitted again",
        lambda: (w := workload()) and cond(w, "Requeued").get("reason") == "BackoffFinished" and w,
    )
    assert cond(readmitted, "Requeued")["message"] == "The workload backoff was finished"
    gone = wait_for("deactivated", lambda: (w := workload()) and w["spec"].get("active") is False and w)
    deactivated = wait_for(
        "the deactivation written",
        lambda: (w := workload()) and cond(w, "Evicted").get("reason", "").startswith("Deactivated") and w,
    )
    assert gone["metadata"]["name"] == name
    assert cond(deactivated, "Evicted")["reason"] == "DeactivatedDueToRequeuingLimitExceeded"
    assert cond(deactivated, "Evicted")["message"] == (
        "The workload is deactivated due to exceeding the maximum number of re-queuing retries"
    )
