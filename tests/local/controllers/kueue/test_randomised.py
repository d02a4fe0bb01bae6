"""Randomised runs of the engine: quota is never over-committed, admission is all-or-nothing.

A seeded generator builds ClusterQueues (one cohort, sometimes a Cohort object with quota of its
own, random nominal quotas, borrowing and lending limits, preemption policies and queueing
strategies) and then submits, deletes, deactivates and
reactivates Workloads of random sizes and priorities, running an admission pass after each
operation. After every pass an independent check (written from Kueue's documented semantics,
not with the engine's quota code) verifies every limit.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from kueue_factory import Cluster, cluster_queue, container, deactivate, local_queue, ray_cluster

from rayqueue_local.controllers.kueue.amounts import to_amount
from rayqueue_local.controllers.kueue.workloads import pod_requests

RESOURCES = ("cpu", "nvidia.com/gpu")
PRIORITIES = {"p0": 0, "p1": 10, "p2": 100, "p3": 1000}


def random_queue(rng: random.Random, name: str) -> dict[str, Any]:
    flavors = []
    for flavor in ("fa", "fb"):
        resources = []
        for res in RESOURCES:
            nominal = rng.randint(0, 6)
            entry: dict[str, Any] = {"name": res, "nominalQuota": nominal}
            if rng.random() < 0.4:
                entry["borrowingLimit"] = rng.randint(0, 4)
            if rng.random() < 0.4:
                entry["lendingLimit"] = rng.randint(0, nominal)
            resources.append(entry)
        flavors.append({"name": flavor, "resources": resources})
    policies = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
    preemption: dict[str, Any] = {
        "withinClusterQueue": rng.choice(policies),
        "reclaimWithinCohort": rng.choice(("Never", "LowerPriority", "Any")),
    }
    if rng.random() < 0.5:
        preemption["borrowWithinCohort"] = {
            "policy": "LowerPriority",
            "maxPriorityThreshold": rng.choice([10, 100]),
        }
    return cluster_queue(
        name,
        [(list(RESOURCES), flavors)],
        cohort="pool",
        preemption=preemption,
        queueingStrategy=rng.choice(("BestEffortFIFO", "StrictFIFO")),
    )


def random_job(rng: random.Random, name: str, queues: int) -> dict[str, Any]:
    def node() -> dict[str, Any]:
        return container(cpu=rng.randint(0, 2), gpu=rng.randint(0, 2))

    workers = [(f"g{i}", rng.randint(0, 2), node()) for i in range(rng.randint(0, 2))]
    return ray_cluster(
        name,
        "ns",
        queue=f"lq{rng.randrange(queues)}",
        head=node(),
        workers=workers,
        priority_class=rng.choice(list(PRIORITIES)),
    )


def random_cohort(rng: random.Random) -> list[dict[str, Any]]:
    """Sometimes a Cohort object named like the ClusterQueues' cohort, with quota of its own."""
    if rng.random() < 0.5:
        return []
    flavors = [
        {"name": f, "resources": [{"name": r, "nominalQuota": rng.randint(0, 3)} for r in RESOURCES]}
        for f in ("fa", "fb")
    ]
    return [
        {
            "metadata": {"name": "pool"},
            "spec": {"resourceGroups": [{"coveredResources": list(RESOURCES), "flavors": flavors}]},
        }
    ]


def check(cluster: Cluster) -> None:
    """Independent invariants over every admitted Workload."""
    quotas = {cq["metadata"]["name"]: cq for cq in cluster.cqs}
    usage: dict[tuple[str, str, str], int] = {}
    for wl in cluster.workloads.values():
        admission = (wl.get("status") or {}).get("admission")
        if not admission:
            continue
        assert wl["spec"].get("active", True), "an inactive Workload holds quota"
        assigned = {psa["name"]: psa for psa in admission["podSetAssignments"]}
        assert set(assigned) == {ps["name"] for ps in wl["spec"]["podSets"]}, "admitted without every pod set"
        for ps in wl["spec"]["podSets"]:
            psa = assigned[ps["name"]]
            assert psa["count"] == ps["count"]
            for res, per_pod in pod_requests(ps["template"]["spec"]).items():
                if per_pod * ps["count"] == 0:
                    continue
                flavor = psa["flavors"][res]
                assert to_amount(res, psa["resourceUsage"][res]) == per_pod * ps["count"]
                key = (admission["clusterQueue"], flavor, res)
                usage[key] = usage.get(key, 0) + per_pod * ps["count"]
    pool_used: dict[tuple[str, str], int] = {}
    pool_size: dict[tuple[str, str], int] = {}
    for name, cq in quotas.items():
        for flavor in cq["spec"]["resourceGroups"][0]["flavors"]:
            for res in flavor["resources"]:
                fr = (flavor["name"], res["name"])
                nominal = to_amount(res["name"], res["nominalQuota"])
                lending = res.get("lendingLimit")
                guaranteed = 0 if lending is None else max(0, nominal - to_amount(res["name"], lending))
                used = usage.get((name, *fr), 0)
                if "borrowingLimit" in res:
                    limit = nominal + to_amount(res["name"], res["borrowingLimit"])
                    assert used <= limit, f"{name} uses {used} of {fr}, over nominal+borrowingLimit {limit}"
                pool_used[fr] = pool_used.get(fr, 0) + max(0, used - guaranteed)
                pool_size[fr] = pool_size.get(fr, 0) + nominal - guaranteed
    for cohort in cluster.cohorts:
        for flavor in cohort["spec"]["resourceGroups"][0]["flavors"]:
            for res in flavor["resources"]:
                fr = (flavor["name"], res["name"])
                pool_size[fr] = pool_size.get(fr, 0) + to_amount(res["name"], res["nominalQuota"])
    for fr, used in pool_used.items():
        assert used <= pool_size[fr], f"cohort over-committed for {fr}: {used} > {pool_size[fr]}"


@pytest.mark.parametrize("seed", range(40))
def test_random_operations_never_over_commit_quota(seed: int) -> None:
    rng = random.Random(seed)
    queues = rng.randint(1, 4)
    cqs = [random_queue(rng, f"cq{i}") for i in range(queues)]
    cluster = Cluster(
        cqs=cqs,
        lqs=[local_queue("ns", f"lq{i}", f"cq{i}") for i in range(queues)],
        flavors=["fa", "fb"],
        cohorts=random_cohort(rng),
        priorities=PRIORITIES,
    )
    admitted_ever = 0
    for step in range(60):
        op = rng.random()
        names = sorted(cluster.workloads)
        if op < 0.5 or not names:
            cluster.submit(random_job(rng, f"job{step}", queues))
        elif op < 0.65:
            del cluster.workloads[rng.choice(names)]
        elif op < 0.8:
            deactivate(cluster, rng.choice(names))
        else:
            cluster.workloads[rng.choice(names)]["spec"]["active"] = True
        result = cluster.step()
        admitted_ever += len(result.admitted)
        check(cluster)
    assert admitted_ever > 0  # the runs exercise admission, not only refusal
