"""The admission engine's memos (per snapshot version) never change a decision: a pass with every memo
defeated decides exactly as a normal one, on random cohorts with fair sharing on and off; plus the pieces
the memos rely on (versions never reused, partial take/give-back of usage, pod-set shapes)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from rayqueue_local.controllers.kueue import admissionfairsharing as admission_fs
from rayqueue_local.controllers.kueue import engine
from rayqueue_local.controllers.kueue import fairsharing as fs
from rayqueue_local.controllers.kueue.snapshot import WorkloadInfo, build_snapshot

POLICIES = ["Never", "LowerPriority", "LowerOrNewerEqualPriority", "Any"]


class _NoMemo(dict[Any, Any]):
    """A memo that remembers nothing: every lookup misses, every search runs."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass

    def setdefault(self, key: Any, default: Any = None) -> Any:
        return default

    def get(self, key: Any, default: Any = None) -> Any:
        return default

    def __contains__(self, key: object) -> bool:
        return False


def _quota(rng: random.Random, base: int) -> list[dict[str, Any]]:
    out = []
    for name, top in (("cpu", base * 2), ("nvidia.com/gpu", base)):
        entry: dict[str, Any] = {"name": name, "nominalQuota": rng.randint(0, top)}
        if rng.random() < 0.4:
            entry["borrowingLimit"] = rng.randint(0, top)
        if rng.random() < 0.3:
            entry["lendingLimit"] = rng.randint(0, top)
        out.append(entry)
    return out


def _workload(name: str, ns: str, n: int, priority: int, pod_sets: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": f"u-{name}",
            "creationTimestamp": f"2026-01-01T{n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z",
        },
        "spec": {"queueName": f"lq-{n % 2}", "priority": priority, "podSets": pod_sets},
    }


def _pod_set(name: str, count: int, cpu: int, gpu: int) -> dict[str, Any]:
    requests = {"cpu": str(cpu), "nvidia.com/gpu": str(gpu)}
    return {
        "name": name,
        "count": count,
        "template": {"spec": {"containers": [{"resources": {"requests": requests}}]}},
    }


def random_world(seed: int) -> dict[str, Any]:
    """ClusterQueues in one cohort or two nested ones, every preemption policy, admitted Workloads on two
    flavors and pending ones of one or two pod sets; fair sharing (and AFS) on for some seeds."""
    rng = random.Random(seed)
    queues = rng.randint(2, 6)
    nested = rng.random() < 0.4
    base = rng.choice([4, 12])
    cohorts = []
    if nested:
        cohorts = [
            {"metadata": {"name": "root"}, "spec": {}},
            {"metadata": {"name": "c1"}, "spec": {"parentName": "root", "fairSharing": {"weight": 2}}},
            {"metadata": {"name": "c2"}, "spec": {"parentName": "root"}},
        ]
    cqs = []
    for i in range(queues):
        spec: dict[str, Any] = {
            "namespaceSelector": {},
            "cohortName": rng.choice(["c1", "c2"]) if nested else "pool",
            "queueingStrategy": rng.choice(["StrictFIFO", "BestEffortFIFO"]),
            "preemption": {
                "withinClusterQueue": rng.choice(POLICIES[:3]),
                "reclaimWithinCohort": rng.choice(POLICIES),
                "borrowWithinCohort": {
                    "policy": rng.choice(["Never", "LowerPriority"]),
                    "maxPriorityThreshold": rng.choice([50, 500]),
                },
            },
            "flavorFungibility": {
                "whenCanBorrow": rng.choice(["MayStopSearch", "TryNextFlavor"]),
                "whenCanPreempt": rng.choice(["MayStopSearch", "TryNextFlavor"]),
            },
            "fairSharing": {"weight": rng.choice([1, 2, 3])},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "nvidia.com/gpu"],
                    "flavors": [
                        {"name": "a", "resources": _quota(rng, base)},
                        {"name": "b", "resources": _quota(rng, base)},
                    ],
                }
            ],
        }
        if rng.random() < 0.5:
            spec["admissionScope"] = {"admissionMode": admission_fs.USAGE_BASED}
        cqs.append({"metadata": {"name": f"cq-{i}"}, "spec": spec})
    lqs = [
        {"metadata": {"name": f"lq-{j}", "namespace": f"ns-{i}"}, "spec": {"clusterQueue": f"cq-{i}"}}
        for i in range(queues)
        for j in range(2)
    ]
    wls = []
    n = 0
    for i in range(queues):
        for _ in range(rng.randint(0, 8)):
            n += 1
            flavor = rng.choice("ab")
            usage = {"cpu": str(rng.randint(1, 3)), "nvidia.com/gpu": str(rng.randint(0, 2))}
            wl = _workload(f"adm-{n}", f"ns-{i}", n, rng.choice([0, 100, 1000]), [_pod_set("p", 1, 1, 0)])
            wl["status"] = {
                "admission": {
                    "clusterQueue": f"cq-{i}",
                    "podSetAssignments": [
                        {
                            "name": "p",
                            "count": 1,
                            "flavors": dict.fromkeys(usage, flavor),
                            "resourceUsage": usage,
                        }
                    ],
                },
                "conditions": [
                    {
                        "type": "QuotaReserved",
                        "status": "True",
                        "lastTransitionTime": f"2026-01-01T00:00:{n:02d}Z",
                    }
                ],
            }
            wls.append(wl)
    for _ in range(rng.randint(5, 60)):
        n += 1
        pod_sets = [
            _pod_set(f"p{m}", rng.randint(1, 2), rng.randint(1, 4), rng.randint(0, 3))
            for m in range(rng.randint(1, 2))
        ]
        wls.append(
            _workload(f"wl-{n}", f"ns-{rng.randrange(queues)}", n, rng.choice([0, 100, 1000]), pod_sets)
        )
    fair = None
    if rng.random() < 0.6:
        admission = admission_fs.AdmissionFairSharing() if rng.random() < 0.5 else None
        fair = fs.FairSharingSettings(enabled=True, admission=admission)
    return {
        "cluster_queues": cqs,
        "cohorts": cohorts,
        "resource_flavors": [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}],
        "local_queues": lqs,
        "workloads": wls,
        "fair_sharing": fair,
        "now": 1.8e9,
    }


def decisions(result: engine.PassResult) -> Any:
    return (
        [(a.workload.name, a.admission) for a in result.admitted],
        [(e.workload.name, e.reason, e.message, e.preemption_reason) for e in result.evicted],
        [(p.workload.name, p.reason, p.message) for p in result.pending],
        {name: [wl.name for wl in wls] for name, wls in result.queue_order.items()},
        result.weighted_shares,
        result.cohort_weighted_shares,
    )


def test_memos_never_change_a_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    worlds = [random_world(seed) for seed in range(40)]
    with_memo = [decisions(engine.admission_pass(**world)) for world in worlds]
    assert sum(len(d[0]) for d in with_memo) > 20 and sum(len(d[1]) for d in with_memo) > 20  # it admits

    def without_memo(**kwargs: Any) -> Any:
        snap = build_snapshot(**kwargs)
        snap.memo = _NoMemo()
        return snap

    monkeypatch.setattr(engine, "build_snapshot", without_memo)
    assert [decisions(engine.admission_pass(**world)) for world in worlds] == with_memo


def _snapshot() -> Any:
    world = random_world(3)
    infos = [WorkloadInfo.from_object(obj) for obj in world["workloads"]]
    snap = build_snapshot(
        cluster_queues=world["cluster_queues"],
        cohorts=world["cohorts"],
        resource_flavors=world["resource_flavors"],
        workloads=infos,
    )
    return snap, [wl for wl in infos if wl.reserved]


def _usage(snap: Any) -> Any:
    nodes = [*snap.tree.queues.values(), *snap.tree.cohorts.values()]
    return {(node.is_cohort, node.name): dict(node.usage) for node in nodes}


def test_take_usage_moves_only_the_named_flavor_resources_and_give_back_restores_them() -> None:
    snap, admitted = _snapshot()
    wl = next(w for w in admitted if len(w.usage) > 1)
    fr = next(iter(wl.usage))
    before = _usage(snap)
    snap.take_usage(wl, (fr,))
    during = _usage(snap)
    changed = {(key, f) for key, usage in during.items() for f, v in usage.items() if v != before[key].get(f)}
    assert changed and {f for _, f in changed} == {fr}
    snap.give_back_usage(wl, (fr,))
    assert _usage(snap) == before
    assert wl.key in snap.queues[wl.cluster_queue].workloads  # the queue keeps listing it


def test_a_restored_version_is_never_handed_out_again() -> None:
    snap, admitted = _snapshot()
    start = snap.version
    snap.remove_workload(admitted[0])
    in_simulation = snap.version
    snap.add_workload(admitted[0])
    snap.version = start  # as a simulation that put everything back
    snap.remove_workload(admitted[0])
    assert snap.version not in (start, in_simulation)


def test_alike_workloads_share_a_shape_and_tolerations_tell_them_apart() -> None:
    def info(name: str, tolerations: list[dict[str, Any]] | None = None) -> WorkloadInfo:
        obj = _workload(name, "ns", 1, 0, [_pod_set("head", 1, 2, 1), _pod_set("workers", 2, 2, 1)])
        if tolerations is not None:
            obj["spec"]["podSets"][1]["template"]["spec"]["tolerations"] = tolerations
        return WorkloadInfo.from_object(obj)

    assert info("a").shape == info("b").shape == info("c", []).shape
    assert info("d", [{"key": "gpu", "operator": "Exists"}]).shape != info("a").shape
