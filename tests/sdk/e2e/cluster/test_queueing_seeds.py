"""Seed 000's two clusters and seed 004's preemption, seen through the SDK by a limited user.

Seed 000: quota for one cluster (2 GPUs). The second cluster's ``status()`` and ``wait_ready`` say
it is queued, with Kueue's own message and position 0; ``AdmissionTimeout`` when asked to give up;
ready once the first is deactivated (``Workload.spec.active=false``) or taken down.
Seed 004: a prod-priority cluster reclaims the cohort's CPUs from a dev-priority one, whose wait
ends in ``PreemptedError`` with Kueue's reason.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from cluster_helpers import eventually, later

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_local.scenarios import GPU_TOLERATION, seed000_queues, seed004_queues
from rayqueue_sdk import (
    AdmissionTimeout,
    AlreadyExistsError,
    Cluster,
    ClusterConfiguration,
    ClusterPhase,
    ForbiddenError,
    PreemptedError,
    TokenAuthentication,
    get_cluster,
)

pytestmark = pytest.mark.ray


def seed000(name: str, namespace: str) -> ClusterConfiguration:
    """Seed 000's configuration (namespace 'demo' replaced by the test's)."""
    return ClusterConfiguration(
        name=name,
        namespace=namespace,
        head_cpu_requests=2,
        head_cpu_limits=2,
        head_memory_requests=8,
        head_memory_limits=8,
        head_extended_resource_requests={"nvidia.com/gpu": 1},
        worker_extended_resource_requests={"nvidia.com/gpu": 1},
        num_workers=1,
        worker_cpu_requests=2,
        worker_cpu_limits=2,
        worker_memory_requests=8,
        worker_memory_limits=8,
        local_queue="user-queue",  # Specify the LocalQueue name
    )


def test_seed000_second_cluster_waits_with_kueues_words_then_runs(
    plane: LocalControlPlane, ns: str, user: str, admin: Any
) -> None:
    plane.apply(seed000_queues(ns, cluster_queue=f"cq-{ns}"))
    auth = TokenAuthentication(
        token=user, server=plane.server, skip_tls=False, ca_cert_path=str(plane.ca_cert_path)
    )
    auth.login()

    cluster = Cluster(seed000("first-raycluster", ns))
    cluster.up()
    first_ready = cluster.wait_ready()
    details = cluster.details(show=False)
    assert first_ready.ready and first_ready.dashboard_url and first_ready.dashboard_url.startswith("http://")
    assert (details.gpus, [g.name for g in details.groups]) == (2, ["worker-group"])
    with pytest.raises(AlreadyExistsError, match="already exists: use apply"):
        cluster.up()

    second = Cluster(seed000("second-raycluster", ns))
    second.up()
    status = eventually(lambda: (st := second.status()).position == 0 and st.reason == "Pending" and st)
    assert status.phase is ClusterPhase.QUEUED and not status.ready
    assert status.message and status.message.startswith("couldn't assign flavors to pod set")
    assert "insufficient" in status.message and "nvidia.com/gpu" in status.message
    assert status.queue == "user-queue" and "position 0" in status.explanation

    with pytest.raises(AdmissionTimeout) as info:
        second.wait_ready(queue_timeout=1.0, timeout=120)
    assert (info.value.phase, info.value.position) == ("queued", 0)
    assert "insufficient" in (info.value.reason or "")

    # A data scientist may not deactivate (Kueue's user role reads Workloads only): a clear 403.
    with pytest.raises(ForbiddenError) as denied:
        cluster.deactivate()
    assert (denied.value.verb, denied.value.resource) == ("patch", "workloads.kueue.x-k8s.io")

    # The batch admin deactivates the first: the second is admitted and becomes ready.
    get_cluster("first-raycluster", ns, client=admin).deactivate()
    assert second.wait_ready(timeout=300).ready
    first_now = cluster.status()
    assert first_now.phase is ClusterPhase.DEACTIVATED and not first_now.ready

    # Resumed, the first queues again; taking the second down gives it the quota back.
    get_cluster("first-raycluster", ns, client=admin).resume()
    assert cluster.status().phase is not ClusterPhase.DEACTIVATED
    assert second.down() is True
    assert cluster.wait_ready(timeout=300).ready
    assert cluster.down() is True and cluster.down() is False
    auth.logout()


def seed004(team: str, namespace: str) -> ClusterConfiguration:
    """Seed 004's raycluster-prod (team-a, GPU worker) or raycluster-dev (team-b), via the SDK."""
    prod = team == "team-a"
    return ClusterConfiguration(
        name="raycluster-prod" if prod else "raycluster-dev",
        namespace=namespace,
        local_queue="local-queue",
        priority_class="prod-priority" if prod else "dev-priority",
        head_cpu_requests="2",
        head_cpu_limits="2",
        head_memory_requests="3G",
        head_memory_limits="3G",
        num_workers=1,
        worker_cpu_requests="2",
        worker_cpu_limits="2",
        worker_memory_requests="3G",
        worker_memory_limits="3G",
        worker_extended_resource_requests={"nvidia.com/gpu": "1"} if prod else {},
        worker_tolerations=[GPU_TOLERATION] if prod else None,
    )


def test_seed004_preemption_is_seen_as_preempted_with_kueues_reason(
    plane: LocalControlPlane, ns: str, admin: Any
) -> None:
    team_a, team_b = ns, f"team-b-{uuid.uuid4().hex[:5]}"
    plane.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": team_b}})
    try:
        cohort = f"ab-{uuid.uuid4().hex[:5]}"
        plane.apply(seed004_queues(team_a, team_b, cohort=cohort, shared_queue=f"shared-{cohort}"))
        dev = Cluster(seed004("team-b", team_b), client=admin)
        prod = Cluster(seed004("team-a", team_a), client=admin)
        dev.apply()

        # Team A's prod cluster arrives while team B's dev cluster starts on borrowed CPUs.
        trigger = later(
            prod.apply, after=lambda: dev.status().phase in (ClusterPhase.STARTING, ClusterPhase.READY)
        )
        with pytest.raises(PreemptedError) as info:
            dev.wait_ready(timeout=300)
        trigger.join()
        assert info.value.reason in ("InCohortReclamation", "InCohortReclaimWhileBorrowing")
        assert info.value.message.startswith("Preempted to accommodate a workload")

        seen = dev.status()
        assert seen.phase in (ClusterPhase.PREEMPTED, ClusterPhase.QUEUED) and not seen.ready
        # Requeued by Kueue: once the requeue settles, status() reports it first in its LocalQueue.
        requeued = eventually(
            lambda: (st := dev.status()).position == 0 and st, timeout=60, what="dev's queue position"
        )
        assert requeued.phase in (ClusterPhase.PREEMPTED, ClusterPhase.QUEUED), requeued
        assert seen.priority_class == "dev-priority"
        assert prod.wait_ready(timeout=300).ready
        assert prod.status().priority_class == "prod-priority"
    finally:
        plane.store.delete("namespaces", None, team_b)
