"""Fair sharing in the SDK's words, against a local plane with Kueue's fair sharing on (no Ray processes).

Cohort ``fs`` has a lender with 2 idle CPUs and two teams with 1 CPU each, weight 1, no preemption. team-a
borrows both lent CPUs first; then team-b and team-a each want one more CPU and nothing is free. Kueue
gives the next free CPU to the ClusterQueue with the lower weighted share (team-b: it borrows nothing), so
team-a's pending cluster reads "behind team-b-cq's workloads: fair share 0.xx vs 0.00", and team-b's
pending one does not.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import Cluster, ClusterConfiguration
from rayqueue_sdk.admission.phases import ClusterPhase
from rayqueue_sdk.kube.client import build_api_client
from rayqueue_sdk.manifests import kueue as k

pytestmark = pytest.mark.slow  # a control plane with CRD validation takes seconds to start

NO_PREEMPTION = {"withinClusterQueue": "Never", "reclaimWithinCohort": "Never"}


def _queue(name: str, cpus: int) -> dict[str, Any]:
    group = k.resource_group(k.flavor_quotas("default-flavor", {"cpu": cpus, "memory": "64Gi"}))
    return k.cluster_queue(
        name, cohort="fs", resource_groups=[group], preemption=NO_PREEMPTION, fair_sharing_weight=1
    )


@pytest.fixture(scope="module")
def fair_plane(crd_dir: Path) -> Iterator[LocalControlPlane]:
    cp = LocalControlPlane(
        crd_dir=crd_dir, ray_enabled=False, keda_enabled=False, prometheus_enabled=False, fair_sharing=True
    )
    with cp:
        cp.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in ("fa", "fb")])
        cp.apply(
            [
                k.resource_flavor("default-flavor"),
                _queue("lender-cq", 2),
                _queue("team-a-cq", 1),
                _queue("team-b-cq", 1),
                k.local_queue("q", "fa", "team-a-cq"),
                k.local_queue("q", "fb", "team-b-cq"),
            ]
        )
        yield cp


def _cluster(api: Any, namespace: str, name: str) -> Cluster:
    config = ClusterConfiguration(
        name=name, namespace=namespace, local_queue="q", num_workers=0, head_cpu_requests=1,
        head_cpu_limits=1, head_memory_requests=1, head_memory_limits=1,
    )  # fmt: skip
    cluster = Cluster(config, client=api)
    cluster.apply()
    return cluster


def _until(probe: Any, what: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_the_queue_with_the_higher_share_reads_who_goes_first(fair_plane: LocalControlPlane) -> None:
    api = build_api_client(
        fair_plane.server, token=fair_plane.token, ca_cert_path=str(fair_plane.ca_cert_path)
    )
    first = [_cluster(api, "fa", f"a{i}") for i in range(3)]  # 1 own + the lender's 2
    _until(lambda: all(c.status().phase is not ClusterPhase.QUEUED for c in first), "team-a's three")
    b_own = _cluster(api, "fb", "b0")
    _until(lambda: b_own.status().phase is not ClusterPhase.QUEUED, "team-b's own CPU")
    a_next, b_next = _cluster(api, "fa", "a-next"), _cluster(api, "fb", "b-next")

    def a_words() -> str:
        status = a_next.status()
        return status.explanation if "fair share" in status.explanation else ""

    words = _until(a_words, "team-a's pending cluster to name team-b's lower share")
    assert "behind team-b-cq's workloads: fair share 0." in words and words.endswith("vs 0.00"), words
    b_status = b_next.status()
    assert b_status.phase is ClusterPhase.QUEUED and "fair share" not in b_status.explanation
    for cluster in [*first, b_own, a_next, b_next]:
        cluster.down()
