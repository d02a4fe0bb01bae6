"""Seed 003 on a real LocalControlPlane (Kueue controller only, fair sharing and Admission Fair Sharing on):
the scenario's objects apply and validate against the CRDs; team A's burst borrows team B's idle quota,
and B's one cluster is admitted before A's next; the queues show ``status.fairSharing`` as Kueue does; a
rack-required cluster rendered by the SDK waits while no rack has room and is admitted when one does.

Reads go through the store; waits poll with a deadline.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from rayqueue_local import LocalControlPlane
from rayqueue_local.controllers.kueue.controller import KueueController
from rayqueue_local.controllers.kueue.ops import CLUSTER_QUEUES, COHORTS, LOCAL_QUEUES, WORKLOADS
from rayqueue_local.scenarios import scenario_objects
from rayqueue_sdk import ClusterConfiguration
from rayqueue_sdk.manifests.raycluster import build_raycluster

T = TypeVar("T")

pytestmark = pytest.mark.slow  # a control plane with CRD validation takes seconds to start


@pytest.fixture(scope="module")
def cp(crd_dir: Path) -> Iterator[LocalControlPlane]:
    plane = LocalControlPlane(
        crd_dir=crd_dir,
        controllers=[],
        fair_sharing=True,
        admission_fair_sharing=True,
        afs_usage_half_life_seconds=600,
        afs_usage_sampling_interval_seconds=600,
    )
    plane.start()
    controller = KueueController(plane)
    controller.resync_seconds = 0.5
    controller.start(plane.store)
    plane.controllers.append(controller)
    plane.apply(scenario_objects("seed-003"))
    try:
        yield plane
    finally:
        plane.stop()


def eventually(probe: Callable[[], T], what: str, timeout: float = 20.0) -> T:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}; last value: {last!r}")


def cluster(cp: LocalControlPlane, name: str, namespace: str, gpus: int, topology: str | None = None) -> str:
    config = ClusterConfiguration(
        name=name,
        namespace=namespace,
        local_queue="team-queue",
        num_workers=gpus,
        worker_extended_resource_requests={"nvidia.com/gpu": 1},
        topology=topology,
    )
    stored = cp.apply(build_raycluster(config))[0]
    return str(stored["metadata"]["uid"])


def workload(cp: LocalControlPlane, namespace: str, uid: str) -> dict[str, Any] | None:
    found = cp.store.list(WORKLOADS, namespace, label_selector=f"kueue.x-k8s.io/job-uid={uid}")
    return found[0] if found else None


def condition(cp: LocalControlPlane, namespace: str, uid: str, ctype: str) -> dict[str, Any]:
    for c in ((workload(cp, namespace, uid) or {}).get("status") or {}).get("conditions") or ():
        if c["type"] == ctype:
            return dict(c)
    return {}


def admitted(cp: LocalControlPlane, namespace: str, uid: str) -> bool:
    return condition(cp, namespace, uid, "QuotaReserved").get("status") == "True"


def pending_message(cp: LocalControlPlane, namespace: str, uid: str) -> str:
    cond = condition(cp, namespace, uid, "QuotaReserved")
    return str(cond.get("message", "")) if cond.get("status") == "False" else ""


def delete_all(cp: LocalControlPlane, namespace: str) -> None:
    for rc in cp.store.list("rayclusters.ray.io", namespace):
        cp.store.delete("rayclusters.ray.io", namespace, rc["metadata"]["name"])
    eventually(lambda: not cp.store.list(WORKLOADS, namespace), f"the Workloads of {namespace} to go")


def test_the_scenario_applied(cp: LocalControlPlane) -> None:
    assert len(cp.store.list("topologies.kueue.x-k8s.io")) == 1
    assert {n["metadata"]["name"] for n in cp.store.list("nodes")} >= {"gpu-node-1-1", "gpu-node-2-2"}


def test_seed_003_team_b_is_admitted_before_team_a_s_next(cp: LocalControlPlane) -> None:
    burst = [cluster(cp, f"a-burst-{i}", "team-a", 1) for i in range(8)]  # 4 own + 4 of team-b's idle quota
    eventually(lambda: all(admitted(cp, "team-a", uid) for uid in burst), "team-a's burst to be admitted")
    a_next = cluster(cp, "a-next", "team-a", 1)
    eventually(lambda: pending_message(cp, "team-a", a_next), "team-a's next cluster to be pending")
    b_one = cluster(cp, "b-one", "team-b", 1)
    eventually(lambda: admitted(cp, "team-b", b_one), "team-b's cluster to be admitted")
    assert not admitted(cp, "team-a", a_next)
    evicted = [uid for uid in burst if condition(cp, "team-a", uid, "Evicted").get("status") == "True"]
    assert len(evicted) == 1  # reclaimed for team-b

    def shares() -> dict[str, Any]:
        out = {}
        for cq in cp.store.list(CLUSTER_QUEUES):
            out[cq["metadata"]["name"]] = ((cq.get("status") or {}).get("fairSharing") or {}).get(
                "weightedShare"
            )
        return out if out.get("team-a-cq") else {}

    # team-a uses 7 GPUs of its 4: 3 borrowed of the 8 the cohort could lend it.
    assert eventually(shares, "team-a-cq's weightedShare") == {"team-a-cq": 375, "team-b-cq": 0}
    cohort = cp.store.get(COHORTS, None, "ml-teams")
    assert cohort["status"]["fairSharing"] == {"weightedShare": 0}

    def consumed() -> dict[str, Any]:
        lq = cp.store.get(LOCAL_QUEUES, "team-a", "team-queue")
        status = ((lq.get("status") or {}).get("fairSharing") or {}).get("admissionFairSharingStatus") or {}
        return dict(status.get("consumedResources") or {})

    assert eventually(consumed, "team-a's consumed resources").get("nvidia.com/gpu")
    delete_all(cp, "team-a")
    delete_all(cp, "team-b")


def test_a_rack_required_cluster_waits_until_one_rack_has_room(cp: LocalControlPlane) -> None:
    blockers = [
        cluster(cp, f"blocker-{i}", "team-b", 3, topology="rack") for i in range(2)
    ]  # 3 of 4 per rack
    eventually(lambda: all(admitted(cp, "team-b", uid) for uid in blockers), "both blockers to be admitted")
    trainer = cluster(cp, "trainer", "team-b", 2, topology="rack")
    message = eventually(lambda: pending_message(cp, "team-b", trainer), "the trainer to be pending")
    assert message == (
        "couldn't assign flavors to pod set worker-group: "
        'topology "default" allows to fit only 1 out of 2 pod(s)'
    )
    cp.store.delete("rayclusters.ray.io", "team-b", "blocker-0")
    eventually(lambda: admitted(cp, "team-b", trainer), "the trainer to be admitted once a rack has room")
    wl = workload(cp, "team-b", trainer) or {}
    assignment = wl["status"]["admission"]["podSetAssignments"][1]["topologyAssignment"]
    racks = {
        value.rsplit("-", 1)[0]
        for value in assignment["slices"][0]["valuesPerLevel"][0]["individual"]["roots"]
    }
    assert len(racks) == 1  # gpu-node-<rack>-<n>: one rack
    delete_all(cp, "team-b")
