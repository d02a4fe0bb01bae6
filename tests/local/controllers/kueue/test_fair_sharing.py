"""Fair sharing in the pure engine: cohort DRS ordering and weightedShare, fair-sharing preemption
strategies, and Admission Fair Sharing (seed 003: a team's burst does not starve the other team).

Expected orders are worked out by hand from Kueue v0.19.2's formulas (fair_sharing.go,
fair_sharing_iterator.go, admission_fair_sharing.go), not with the engine's code.
"""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

from kueue_factory import (
    Cluster,
    cluster_queue,
    container,
    flavor_resources,
    gpu_cluster,
    local_queue,
    ray_cluster,
)

from rayqueue_local.controllers.kueue import admissionfairsharing as admission_fs
from rayqueue_local.controllers.kueue import fairsharing as fs
from rayqueue_local.controllers.kueue.controller import KueueController
from rayqueue_local.controllers.kueue.engine import PassResult, admission_pass
from rayqueue_local.options import ControlPlaneOptions

FAIR = fs.FairSharingSettings(enabled=True)
AFS = fs.FairSharingSettings(
    admission=admission_fs.AdmissionFairSharing(half_life_seconds=300, sampling_interval_seconds=300)
)


def one_gpu_job(name: str, namespace: str, queue: str = "lq") -> dict[str, Any]:
    return ray_cluster(name, namespace, queue=queue, head=container(cpu=1, gpu=1))


def three_queue_cohort(**weights: float) -> Cluster:
    """Cohort ``pool``: cq-a, cq-b, cq-c, 4 GPUs each (12 in all); LocalQueue ``lq`` in ns-a/ns-b/ns-c."""
    cqs = []
    for team in "abc":
        flavor = flavor_resources("default-flavor", cpu=1000, memory="4000Gi", gpu=4)
        spec: dict[str, Any] = {}
        if team in weights:
            spec["fairSharing"] = {"weight": weights[team]}
        cqs.append(
            cluster_queue(
                f"cq-{team}", [(["cpu", "memory", "nvidia.com/gpu"], [flavor])], cohort="pool", **spec
            )
        )
    lqs = [local_queue(f"ns-{t}", "lq", f"cq-{t}") for t in "abc"]
    return Cluster(cqs=cqs, lqs=lqs)


def fill(cluster: Cluster, team: str, count: int) -> list[str]:
    names = [cluster.submit(one_gpu_job(f"{team}-run-{i}", f"ns-{team}")) for i in range(count)]
    return names


def borrowing_setup(cluster: Cluster) -> tuple[str, str]:
    """a holds 6 GPUs (borrows 2), b holds 5 (borrows 1), c holds 0; 1 GPU is left. Then a and b each
    submit one more 1-GPU job, a's first (older)."""
    cluster.pass_options = {}
    fill(cluster, "a", 6)
    cluster.settle()
    fill(cluster, "b", 5)
    cluster.settle()
    assert len(cluster.admitted()) == 11
    older = cluster.submit(one_gpu_job("a-next", "ns-a"))
    newer = cluster.submit(one_gpu_job("b-next", "ns-b"))
    return older, newer


def test_without_fair_sharing_the_older_workload_wins_between_two_borrowers() -> None:
    cluster = three_queue_cohort()
    older, newer = borrowing_setup(cluster)
    cluster.step()
    assert older in cluster.admitted() and newer not in cluster.admitted()


def test_fair_sharing_admits_the_queue_with_the_lower_dominant_resource_share() -> None:
    cluster = three_queue_cohort()
    older, newer = borrowing_setup(cluster)
    cluster.pass_options = {"fair_sharing": FAIR}
    result = cluster.step()
    # With the workload added: a would borrow 3 of the 12 GPUs the cohort can lend, b 2 of 12.
    assert newer in cluster.admitted() and older not in cluster.admitted()
    # After the pass a and b both borrow 2: 2 * 1000 / 12 = 166.7, rounded up; c borrows nothing.
    assert result.weighted_shares == {"cq-a": 167, "cq-b": 167, "cq-c": 0}
    assert result.cohort_weighted_shares == {"pool": 0}


def test_a_higher_weight_lowers_the_share() -> None:
    cluster = three_queue_cohort(a=2)
    older, newer = borrowing_setup(cluster)
    cluster.pass_options = {"fair_sharing": FAIR}
    result = cluster.step()
    # a: 3 * 1000 / 12 / 2 = 125 < b: 2 * 1000 / 12 = 166.7.
    assert older in cluster.admitted() and newer not in cluster.admitted()
    assert result.weighted_shares["cq-a"] == 125  # 3 borrowed: 250 / 2


def test_weight_zero_borrowing_gets_the_maximum_share() -> None:
    cluster = three_queue_cohort(a=0)
    borrowing_setup(cluster)
    cluster.pass_options = {"fair_sharing": FAIR}
    result = cluster.step()
    assert result.weighted_shares["cq-a"] == fs.MAX_SHARE


def test_preemption_strategies_compare_shares() -> None:
    preemptor = fs.DRS(250.0, 1.0, "nvidia.com/gpu", True)
    target_before, target_after = fs.DRS(375.0, 1.0, "gpu", True), fs.DRS(250.0, 1.0, "gpu", True)
    assert fs.strategy_allows(fs.LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, preemptor, target_before, target_after)
    assert fs.strategy_allows(fs.LESS_THAN_INITIAL_SHARE, preemptor, target_before, target_after)
    lower_after = fs.DRS(125.0, 1.0, "gpu", True)
    assert not fs.strategy_allows(fs.LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, preemptor, target_before, lower_after)
    assert not fs.strategy_allows(fs.LESS_THAN_INITIAL_SHARE, preemptor, preemptor, lower_after)


# -- Admission Fair Sharing (seed 003) ------------------------------------------------------------


def afs_cluster() -> Cluster:
    """One ClusterQueue (4 GPUs) with UsageBasedAdmissionFairSharing; team-a and team-b LocalQueues."""
    flavor = flavor_resources("default-flavor", cpu=1000, memory="4000Gi", gpu=4)
    cq = cluster_queue(
        "shared",
        [(["cpu", "memory", "nvidia.com/gpu"], [flavor])],
        admissionScope={"admissionMode": admission_fs.USAGE_BASED},
    )
    lqs = [local_queue(team, "lq", "shared") for team in ("team-a", "team-b")]
    return Cluster(cqs=[cq], lqs=lqs)


def record_consumption(cluster: Cluster) -> None:
    """What the controller does after a pass: the LocalQueues' consumed resources into their status."""
    assert cluster.last is not None
    for lq in cluster.lqs:
        key = (lq["metadata"]["namespace"], lq["metadata"]["name"])
        if key in cluster.last.consumed:
            lq["status"] = {
                "fairSharing": admission_fs.local_queue_fair_sharing_status(
                    0, cluster.last.consumed[key], None
                )
            }


def burst_then_one(cluster: Cluster) -> tuple[str, str]:
    """team-a submits 6 one-GPU clusters (4 run), then team-b one; one of team-a's finishes."""
    burst = [cluster.submit(gpu_cluster(f"a-{i}", "team-a", "lq", 1)) for i in range(6)]
    cluster.step()
    record_consumption(cluster)
    assert cluster.admitted() == set(burst[:4])
    b_job = cluster.submit(gpu_cluster("b-0", "team-b", "lq", 1))
    cluster.release(burst[0], "Finished", "done")  # room for one more
    del cluster.workloads[burst[0]]
    return burst[4], b_job


def test_seed_003_team_b_goes_before_team_a_once_a_s_consumption_counts() -> None:
    cluster = afs_cluster()
    cluster.pass_options = {"fair_sharing": AFS}
    a_next, b_job = burst_then_one(cluster)
    result = cluster.step()
    assert b_job in cluster.admitted() and a_next not in cluster.admitted()
    # Four admissions of 1 GPU + 2 CPUs each, entry penalty 1 - 0.5 ** (300 / 300) = 0.5 of each.
    assert result.consumed[("team-a", "lq")] == {"cpu": 4000.0, "nvidia.com/gpu": 2.0}
    assert result.queue_order["shared"][0].name == a_next


def test_without_admission_fair_sharing_team_a_s_older_workload_goes_first() -> None:
    cluster = afs_cluster()
    a_next, b_job = burst_then_one(cluster)
    cluster.step()
    assert a_next in cluster.admitted() and b_job not in cluster.admitted()


def test_a_local_queue_weight_divides_its_usage() -> None:
    cluster = afs_cluster()
    cluster.lqs[0]["spec"]["fairSharing"] = {"weight": "100"}  # team-a's usage counts a hundredth
    cluster.lqs[1]["status"] = {
        "fairSharing": admission_fs.local_queue_fair_sharing_status(0, {"nvidia.com/gpu": 1.0}, None)
    }
    cluster.pass_options = {"fair_sharing": AFS}
    a_next, b_job = burst_then_one(cluster)
    cluster.step()
    assert a_next in cluster.admitted() and b_job not in cluster.admitted()


def test_consumption_decays_with_the_half_life() -> None:
    afs = admission_fs.AdmissionFairSharing(half_life_seconds=60, sampling_interval_seconds=30)
    consumed = {"nvidia.com/gpu": 8.0}
    assert admission_fs.decayed(consumed, {}, 60, afs) == {"nvidia.com/gpu": 4.0}
    assert admission_fs.decayed(consumed, {"nvidia.com/gpu": 8.0}, 600, afs)["nvidia.com/gpu"] == 8.0
    assert (
        admission_fs.decayed(consumed, {}, 0, admission_fs.AdmissionFairSharing(half_life_seconds=0))
        == consumed
    )


def test_admission_pass_reports_nothing_when_fair_sharing_is_off() -> None:
    cluster = afs_cluster()
    cluster.submit(gpu_cluster("a-0", "team-a", "lq", 1))
    result = admission_pass(
        cluster_queues=cluster.cqs,
        resource_flavors=cluster.flavors,
        local_queues=cluster.lqs,
        workloads=list(cluster.workloads.values()),
    )
    assert result.weighted_shares == {} and result.consumed == {}


# -- fair-sharing preemption ---------------------------------------------------------------------------


def two_queue_cohort() -> Cluster:
    """Cohort ``pool``: cq-a and cq-b, 4 GPUs each, both reclaiming within the cohort."""
    cqs = []
    for team in "ab":
        flavor = flavor_resources("default-flavor", cpu=1000, memory="4000Gi", gpu=4)
        cqs.append(
            cluster_queue(
                f"cq-{team}",
                [(["cpu", "memory", "nvidia.com/gpu"], [flavor])],
                cohort="pool",
                preemption={"withinClusterQueue": "Never", "reclaimWithinCohort": "Any"},
            )
        )
    cluster = Cluster(cqs=cqs, lqs=[local_queue(f"ns-{t}", "lq", f"cq-{t}") for t in "ab"])
    cluster.pass_options = {"fair_sharing": FAIR}
    return cluster


def test_fair_sharing_preemption_takes_from_the_queue_with_the_higher_share() -> None:
    cluster = two_queue_cohort()
    burst = fill(cluster, "a", 8)  # a borrows all of b's quota: share 4 * 1000 / 8 = 500
    cluster.settle()
    assert cluster.admitted() == set(burst)
    wanted = cluster.submit(one_gpu_job("b-0", "ns-b"))
    result = cluster.step()
    assert [e.preemption_reason for e in result.evicted] == ["InCohortFairSharing"]
    assert result.evicted[0].workload.name in burst
    assert "InCohortFairSharing" not in cluster.message(wanted)
    cluster.step()
    assert wanted in cluster.admitted()


def test_no_fair_sharing_preemption_between_equal_shares() -> None:
    cluster = two_queue_cohort()
    fill(cluster, "a", 5)  # a borrows 1: share 125
    cluster.settle()
    fill(cluster, "b", 3)
    cluster.settle()
    b_big = cluster.submit(
        ray_cluster(
            "b-big",
            "ns-b",
            queue="lq",
            head=container(cpu=1, gpu=1),
            workers=[("w", 1, container(cpu=1, gpu=1))],
        )
    )
    result = cluster.step()
    # b would borrow 1 as well (125): neither 125 <= 0 (a's share without a target) nor 125 < 125.
    assert result.evicted == [] and b_big not in cluster.admitted()


def test_less_than_initial_share_alone_also_reclaims() -> None:
    settings = fs.FairSharingSettings(enabled=True, preemption_strategies=(fs.LESS_THAN_INITIAL_SHARE,))
    cluster = two_queue_cohort()
    cluster.pass_options = {"fair_sharing": settings}
    burst = fill(cluster, "a", 8)
    cluster.settle()
    cluster.submit(one_gpu_job("b-0", "ns-b"))
    result = cluster.step()
    assert [e.preemption_reason for e in result.evicted] == ["InCohortFairSharing"]
    assert result.evicted[0].workload.name in burst


# -- the controller's consumption ledger ----------------------------------------------------------------


def test_the_controller_folds_admitted_usage_every_sampling_interval() -> None:
    options = ControlPlaneOptions(
        admission_fair_sharing=True,
        afs_usage_half_life_seconds=0.01,
        afs_usage_sampling_interval_seconds=0.01,
    )
    controller = KueueController(SimpleNamespace(options=options))
    settings = controller.fair_sharing()
    assert settings.admission is not None and not settings.enabled
    lq = local_queue("team-a", "lq", "shared")
    [seen] = controller._with_consumed([lq])
    assert seen["status"]["fairSharing"]["admissionFairSharingStatus"]["consumedResources"] == {}
    cluster = afs_cluster()
    name = cluster.submit(gpu_cluster("a-0", "team-a", "lq", 1))
    cluster.step()
    admitted = [
        w
        for w in admission_pass(
            cluster_queues=cluster.cqs,
            resource_flavors=cluster.flavors,
            local_queues=cluster.lqs,
            workloads=[cluster.workloads[name]],
        ).workloads
        if w.reserved
    ]
    time.sleep(0.2)  # twenty half-lives: the consumption converges on the admitted usage
    controller._sample_consumption(PassResult(workloads=admitted), settings.admission)
    consumed = controller._afs[("team-a", "lq")][0]
    assert round(consumed["nvidia.com/gpu"], 3) == 1.0 and round(consumed["cpu"]) == 2000
