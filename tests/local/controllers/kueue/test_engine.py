"""The pure admission engine: quota math, FIFO strategies, preemption and Kueue's wording."""

from __future__ import annotations

from typing import Any

import pytest
from kueue_factory import (
    Cluster,
    cluster_queue,
    container,
    flavor_resources,
    gpu_cluster,
    gpu_queue,
    local_queue,
    ray_cluster,
    resource_flavor,
)

from rayqueue_local.controllers.kueue import quota as q
from rayqueue_local.controllers.kueue.engine import admission_pass


def gpu_cq(name: str, nominal: Any, *, cohort: str | None = None, **spec: Any) -> dict[str, Any]:
    return cluster_queue(
        name, [(["nvidia.com/gpu"], [flavor_resources("f", gpu=nominal)])], cohort=cohort, **spec
    )


def gpu_job(
    name: str, gpus: int, queue: str = "lq", ns: str = "ns", priority: str | None = None
) -> dict[str, Any]:
    return ray_cluster(name, ns, queue=queue, priority_class=priority, head=container(gpu=gpus))


PRIORITIES = {"low": 10, "mid": 50, "high": 100, "top": 1000}


def world(*cqs: dict[str, Any], lqs: list[dict[str, Any]] | None = None, **kw: Any) -> Cluster:
    lqs = lqs or [local_queue("ns", "lq", cqs[0]["metadata"]["name"])]
    return Cluster(cqs=list(cqs), lqs=lqs, flavors=kw.pop("flavors", ["f"]), priorities=PRIORITIES, **kw)


# -- quota arithmetic -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("a_quota", "b_quota", "b_uses", "a_can_use"),
    [
        ((4, None, None), (4, None, None), 0, 8),  # borrow everything b has
        ((4, 2, None), (4, None, None), 0, 6),  # borrowingLimit caps what a takes from the cohort
        ((4, 0, None), (4, None, None), 0, 4),  # borrowingLimit 0: no borrowing at all
        ((4, None, None), (4, None, 1), 0, 5),  # b lends at most 1
        ((4, None, None), (4, None, None), 6, 2),  # b borrows 2 from a's quota
        ((4, None, None), (4, None, 1), 4, 4),  # b uses its guaranteed part; a keeps its own 4
        ((4, None, 0), (4, None, None), 4, 4),  # a lends nothing, so b's usage never touches a's 4
    ],
)
def test_available_follows_nominal_borrowing_and_lending_limits(
    a_quota: tuple[Any, ...], b_quota: tuple[Any, ...], b_uses: int, a_can_use: int
) -> None:
    tree = q.build_tree([gpu_cq("a", a_quota, cohort="c"), gpu_cq("b", b_quota, cohort="c")], [])
    fr = ("f", "nvidia.com/gpu")
    if b_uses:
        q.add_usage(tree.queues["b"], fr, b_uses)
    assert q.available(tree.queues["a"], fr) == a_can_use


def test_a_lending_limit_protects_the_guaranteed_part_from_borrowers() -> None:
    tree = q.build_tree([gpu_cq("a", (4, None, 1), cohort="c"), gpu_cq("b", 0, cohort="c")], [])
    assert q.available(tree.queues["b"], ("f", "nvidia.com/gpu")) == 1


def test_a_cohort_object_adds_its_own_quota_to_the_pool() -> None:
    cohort = {
        "metadata": {"name": "c"},
        "spec": {
            "resourceGroups": [
                {"coveredResources": ["nvidia.com/gpu"], "flavors": [flavor_resources("f", gpu=3)]}
            ]
        },
    }
    tree = q.build_tree([gpu_cq("a", 1, cohort="c")], [cohort])
    assert q.available(tree.queues["a"], ("f", "nvidia.com/gpu")) == 4
    assert q.potential_available(tree.queues["a"], ("f", "nvidia.com/gpu")) == 4


def test_hierarchical_cohorts_pool_upwards() -> None:
    parent = {"metadata": {"name": "root"}, "spec": {}}
    child = {"metadata": {"name": "child"}, "spec": {"parentName": "root"}}
    tree = q.build_tree([gpu_cq("a", 1, cohort="child"), gpu_cq("b", 2, cohort="root")], [parent, child])
    assert q.available(tree.queues["a"], ("f", "nvidia.com/gpu")) == 3
    assert [n.name for n in q.path_to_root(tree.queues["a"])] == ["child", "root"]


def test_add_then_remove_usage_restores_every_node() -> None:
    tree = q.build_tree([gpu_cq("a", (2, None, 1), cohort="c"), gpu_cq("b", 3, cohort="c")], [])
    fr = ("f", "nvidia.com/gpu")
    before = {n.name: dict(n.usage) for n in [*tree.queues.values(), *tree.cohorts.values()]}
    q.add_usage(tree.queues["a"], fr, 4)
    assert tree.cohorts["c"].usage[fr] == 3  # 1 of a's 4 comes from its guaranteed part
    q.remove_usage(tree.queues["a"], fr, 4)
    assert {
        n.name: {k: v for k, v in n.usage.items() if v}
        for n in [*tree.queues.values(), *tree.cohorts.values()]
    } == {k: v for k, v in before.items()}


# -- admission and messages -------------------------------------------------------------------
def test_seed_000_second_cluster_waits_with_kueues_message() -> None:
    cq = cluster_queue(
        "cluster-queue",
        [
            (
                ["cpu", "memory", "pods", "nvidia.com/gpu"],
                [flavor_resources("default-flavor", cpu=9, memory="36Gi", pods=5, gpu=2)],
            )
        ],
    )
    c = Cluster(cqs=[cq], lqs=[local_queue("demo", "user-queue", "cluster-queue")])

    def cluster(name: str) -> dict[str, Any]:
        node = container(cpu=2, memory="8Gi", gpu=1)
        return ray_cluster(
            name, "demo", queue="user-queue", head=node, workers=[("small-group-" + name, 1, node)]
        )

    first, second = c.submit(cluster("first-raycluster")), c.submit(cluster("second-raycluster"))
    result = c.step()
    assert [a.workload.name for a in result.admitted] == [first]
    # No preemption candidates still counts as "Preempt" mode upstream, so every short pod set is reported.
    assert c.message(second) == (
        "couldn't assign flavors to pod set head: insufficient unused quota for nvidia.com/gpu in flavor "
        "default-flavor, 1 more needed; couldn't assign flavors to pod set small-group-second-raycluster: "
        "insufficient unused quota for nvidia.com/gpu in flavor default-flavor, 2 more needed"
    )
    admission = result.admitted[0].admission
    assert admission["clusterQueue"] == "cluster-queue"
    assert admission["podSetAssignments"][1] == {
        "name": "small-group-first-raycluster",
        "flavors": {r: "default-flavor" for r in ("cpu", "memory", "nvidia.com/gpu", "pods")},
        "resourceUsage": {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "1", "pods": "1"},
        "count": 1,
    }
    assert [w.name for w in result.queue_order["cluster-queue"]] == [second]


def test_a_workload_larger_than_the_queue_gets_the_maximum_capacity_message() -> None:
    c = world(gpu_cq("cq", 2))
    name = c.submit(gpu_job("big", 3))
    c.step()
    assert c.message(name) == (
        "couldn't assign flavors to pod set head: insufficient quota for nvidia.com/gpu in flavor f, "
        "previously considered podsets requests (0) + current podset request (3) > maximum capacity (2)"
    )


def test_a_resource_no_group_covers_makes_the_workload_inadmissible_here() -> None:
    c = world(gpu_cq("cq", 2))
    name = c.submit(ray_cluster("cpu-only", "ns", queue="lq", head=container(cpu=1)))
    c.step()
    assert (
        c.message(name) == "couldn't assign flavors to pod set head: resource cpu unavailable in ClusterQueue"
    )


def test_admission_is_all_or_nothing_across_pod_sets() -> None:
    c = world(gpu_cq("cq", 3))
    name = c.submit(
        ray_cluster("c", "ns", queue="lq", head=container(gpu=1), workers=[("w", 3, container(gpu=1))])
    )
    c.step()
    assert not c.admitted()
    assert c.message(name).startswith(
        "couldn't assign flavors to pod set w: insufficient quota for nvidia.com/gpu"
    )


def test_flavors_are_tried_in_order_and_the_next_is_used_when_the_first_is_full() -> None:
    groups = [(["nvidia.com/gpu"], [flavor_resources("a100", gpu=1), flavor_resources("t4", gpu=4)])]
    c = world(cluster_queue("cq", groups), flavors=["a100", "t4"])
    first, second = c.submit(gpu_job("one", 1)), c.submit(gpu_job("two", 2))
    c.step()
    flavors = {
        n: c.workloads[n]["status"]["admission"]["podSetAssignments"][0]["flavors"] for n in (first, second)
    }
    assert flavors == {first: {"nvidia.com/gpu": "a100"}, second: {"nvidia.com/gpu": "t4"}}


def test_a_flavor_whose_taint_is_not_tolerated_is_skipped() -> None:
    groups = [(["nvidia.com/gpu"], [flavor_resources("tainted", gpu=4), flavor_resources("open", gpu=4)])]
    cq = cluster_queue("cq", groups)
    flavors = [
        resource_flavor("tainted", nodeTaints=[{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]),
        resource_flavor("open"),
    ]
    result = admission_pass(
        cluster_queues=[cq],
        resource_flavors=flavors,
        local_queues=[local_queue("ns", "lq", "cq")],
        workloads=[Cluster(cqs=[], lqs=[]).workloads.get("x") or _wl(gpu_job("j", 1))],
    )
    assert result.admitted[0].admission["podSetAssignments"][0]["flavors"] == {"nvidia.com/gpu": "open"}


def _wl(job: dict[str, Any]) -> dict[str, Any]:
    c = Cluster(cqs=[], lqs=[], priorities=PRIORITIES)
    return c.workloads[c.submit(job)]


def test_borrowing_within_the_cohort_and_the_borrowing_limit() -> None:
    c = world(
        gpu_cq("a", (2, 1, None), cohort="c"),
        gpu_cq("b", 4, cohort="c"),
        lqs=[local_queue("ns", "lq", "a"), local_queue("ns", "lqb", "b")],
    )
    three = c.submit(gpu_job("three", 3))
    four = c.submit(gpu_job("four", 4))
    c.step()
    assert c.admitted() == {three}
    assert c.message(four) == (
        "couldn't assign flavors to pod set head: insufficient quota for nvidia.com/gpu in flavor f, "
        "previously considered podsets requests (0) + current podset request (4) > maximum capacity (3)"
    )


@pytest.mark.parametrize("strategy", ["BestEffortFIFO", "StrictFIFO"])
def test_fifo_strategies(strategy: str) -> None:
    c = world(gpu_cq("cq", 4, queueingStrategy=strategy))
    c.submit(gpu_job("old-small", 2))
    big = c.submit(gpu_job("big", 4))
    small = c.submit(gpu_job("new-small", 2))
    c.step()
    if strategy == "BestEffortFIFO":
        assert small in c.admitted() and big not in c.admitted()
    else:
        assert small not in c.admitted() and big not in c.admitted()


def test_priority_orders_the_queue_before_creation_time() -> None:
    c = world(gpu_cq("cq", 2))
    old_low = c.submit(gpu_job("old-low", 2, priority="low"))
    new_high = c.submit(gpu_job("new-high", 2, priority="high"))
    result = c.step()
    assert c.admitted() == {new_high}
    assert [w.name for w in result.queue_order["cq"]] == [old_low]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"stopPolicy": "Hold"}, "ClusterQueue cq is inactive"),
        (
            {
                "resourceGroups": [
                    {"coveredResources": ["nvidia.com/gpu"], "flavors": [flavor_resources("gone", gpu=1)]}
                ]
            },
            "ClusterQueue cq is inactive",
        ),
    ],
)
def test_inactive_cluster_queues_leave_workloads_inadmissible(spec: dict[str, Any], message: str) -> None:
    cq = gpu_cq("cq", 4)
    cq["spec"].update(spec)
    c = world(cq)
    name = c.submit(gpu_job("j", 1))
    result = c.step()
    assert not c.admitted() and c.message(name) == message
    assert result.pending[0].reason == "Inadmissible"


def test_a_missing_or_inactive_admission_check_makes_the_cluster_queue_inactive() -> None:
    """Kueue's cache marks a ClusterQueue pending while a check it names is missing or not Active
    (pkg/cache/scheduler/clusterqueue.go updateWithAdmissionChecks); its Workloads wait."""
    cq = gpu_cq("cq", 4, admissionChecksStrategy={"admissionChecks": [{"name": "prov"}]})
    c = world(cq)
    name = c.submit(gpu_job("j", 1))
    c.pass_options["admission_checks"] = []
    result = c.step()
    assert not c.admitted() and c.message(name) == "ClusterQueue cq is inactive"
    assert result.pending[0].reason == "Inadmissible" and [w.name for w in result.queue_order["cq"]] == [name]
    check = {"metadata": {"name": "prov"}, "status": {"conditions": [{"type": "Active", "status": "False"}]}}
    c.pass_options["admission_checks"] = [check]
    c.step()
    assert not c.admitted() and c.message(name) == "ClusterQueue cq is inactive"
    check["status"]["conditions"][0]["status"] = "True"
    c.step()
    assert c.admitted() == {name}


def test_missing_or_stopped_local_queues_are_inadmissible() -> None:
    c = world(gpu_cq("cq", 4), lqs=[local_queue("ns", "stopped", "cq", stopPolicy="Hold")])
    missing, stopped = c.submit(gpu_job("a", 1, queue="nope")), c.submit(gpu_job("b", 1, queue="stopped"))
    c.step()
    assert (c.message(missing), c.message(stopped)) == (
        "LocalQueue nope doesn't exist",
        "LocalQueue stopped is inactive",
    )


def test_hold_and_drain_evicts_admitted_workloads() -> None:
    c = world(gpu_cq("cq", 4))
    name = c.submit(gpu_job("j", 1))
    c.step()
    c.cqs[0]["spec"]["stopPolicy"] = "HoldAndDrain"
    result = c.step()
    assert [(e.workload.name, e.reason, e.message) for e in result.evicted] == [
        (name, "ClusterQueueStopped", "The ClusterQueue is stopped")
    ]


def test_namespace_selector_is_enforced() -> None:
    cq = gpu_cq("cq", 4, namespaceSelector={"matchLabels": {"kubernetes.io/metadata.name": "team-a"}})
    c = world(cq, lqs=[local_queue("team-b", "lq", "cq"), local_queue("team-a", "lq", "cq")])
    wrong, right = c.submit(gpu_job("b", 1, ns="team-b")), c.submit(gpu_job("a", 1, ns="team-a"))
    c.step()
    assert c.admitted() == {right}
    assert c.message(wrong) == "workload namespace doesn't match ClusterQueue selector"


# -- preemption -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("policy", "incoming", "preempted"),
    [
        ("Never", "top", None),
        ("LowerPriority", "top", "low-new"),  # lowest priority first, then the most recently admitted
        ("LowerPriority", "low", None),
        ("LowerOrNewerEqualPriority", "low", None),  # the incoming one is newer than the running ones
        ("LowerOrNewerEqualPriority", "high", "low-new"),
    ],
)
def test_within_cluster_queue_policies_and_victim_order(
    policy: str, incoming: str, preempted: str | None
) -> None:
    c = world(gpu_cq("cq", 3, preemption={"withinClusterQueue": policy}))
    names = {n: c.submit(gpu_job(n, 1, priority=p)) for n, p in [("mid", "mid"), ("low-old", "low")]}
    c.step()
    names["low-new"] = c.submit(gpu_job("low-new", 1, priority="low"))
    c.step()
    new = c.submit(gpu_job("incoming", 1, priority=incoming))
    result = c.step()
    victims = [e.workload.name for e in result.evicted]
    if preempted is None:
        assert victims == [] and new not in c.admitted()
    else:
        assert victims == [names[preempted]]
        assert result.evicted[0].preemption_reason == "InClusterQueue"
        assert (
            "due to prioritization in the ClusterQueue; preemptor path: /cq; preemptee path: /cq"
            in result.evicted[0].message
        )
        assert c.message(new).endswith(". Pending the preemption of 1 workload(s)")
        c.step()
        assert new in c.admitted()


def test_only_as_many_victims_as_needed_are_preempted() -> None:
    c = world(gpu_cq("cq", 4, preemption={"withinClusterQueue": "LowerPriority"}))
    small = [c.submit(gpu_job(f"s{i}", 1, priority="low")) for i in range(2)]
    c.step()
    big = c.submit(gpu_job("big", 2, priority="low"))
    c.step()
    assert c.admitted() == {*small, big}
    new = c.submit(gpu_job("new", 2, priority="high"))
    result = c.step()
    # the most recently admitted low-priority workload (big) is enough on its own
    assert [e.workload.name for e in result.evicted] == [big]
    c.step()
    assert c.admitted() == {*small, new}


def test_reclaim_within_cohort_takes_back_lent_quota() -> None:
    c = world(
        gpu_cq("prod", 4, cohort="c", preemption={"reclaimWithinCohort": "Any"}),
        gpu_cq("dev", 0, cohort="c"),
        lqs=[local_queue("ns", "prod", "prod"), local_queue("ns", "dev", "dev")],
    )
    borrower = c.submit(gpu_job("dev-job", 4, queue="dev", priority="top"))
    c.step()
    assert c.admitted() == {borrower}
    owner = c.submit(gpu_job("prod-job", 2, queue="prod", priority="low"))
    result = c.step()
    assert [(e.workload.name, e.preemption_reason) for e in result.evicted] == [
        (borrower, "InCohortReclamation")
    ]
    c.step()
    assert c.admitted() == {owner}


@pytest.mark.parametrize(
    ("threshold", "victim_priority", "preempts"), [(100, "high", True), (50, "high", False)]
)
def test_borrow_within_cohort_respects_max_priority_threshold(
    threshold: int, victim_priority: str, preempts: bool
) -> None:
    preemption = {
        "reclaimWithinCohort": "Any",
        "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": threshold},
    }
    c = world(
        gpu_cq("shared", 2, cohort="c"),
        gpu_cq("a", 0, cohort="c", preemption=preemption),
        gpu_cq("b", 0, cohort="c"),
        lqs=[local_queue("ns", "a", "a"), local_queue("ns", "b", "b")],
    )
    victim = c.submit(gpu_job("b-job", 2, queue="b", priority=victim_priority))
    c.step()
    c.submit(gpu_job("a-job", 2, queue="a", priority="top"))
    result = c.step()
    if preempts:
        assert [(e.workload.name, e.preemption_reason) for e in result.evicted] == [
            (victim, "InCohortReclaimWhileBorrowing")
        ]
        assert (
            "due to reclamation within the cohort while borrowing; preemptor path: /c/a; preemptee path: /c/b"
            in (result.evicted[0].message)
        )
    else:
        assert result.evicted == []


def test_seed_001_production_reclaims_and_rd_clusters_come_back() -> None:
    prod = gpu_queue(
        "cq-production", 12, cohort="all-gpus", preemption={"reclaimWithinCohort": "LowerPriority"}
    )
    dev = gpu_queue("cq-development", 8, cohort="all-gpus")
    c = Cluster(
        cqs=[prod, dev],
        lqs=[
            local_queue("prod", "lq-prod-batch", "cq-production"),
            local_queue("rd", "lq-rd-workspace", "cq-development"),
        ],
        priorities={"prod-priority": 1000, "dev-priority": 100},
    )
    rd = [
        c.submit(gpu_cluster(f"ws{i}", "rd", "lq-rd-workspace", g, "dev-priority"))
        for i, g in enumerate([2, 4, 6])
    ]
    c.settle()
    assert c.admitted() == set(rd)  # 12 GPUs: 8 guaranteed + 4 borrowed from production
    job = c.submit(gpu_cluster("final-training-run", "prod", "lq-prod-batch", 12, "prod-priority"))
    result = c.step()
    victims = {e.workload.name for e in result.evicted}
    assert victims and {e.preemption_reason for e in result.evicted} == {"InCohortReclamation"}
    c.step()
    assert job in c.admitted() and not victims & c.admitted()
    del c.workloads[job]  # the job finished and its Workload is gone
    c.settle()
    assert c.admitted() == set(rd)


def test_seed_004_messages_as_in_the_lab_guide() -> None:
    c = seed_004()
    node = container(cpu="2", memory="3G")
    gpu_node = container(cpu="2", memory="3G", gpu="1")
    dev = c.submit(
        ray_cluster(
            "raycluster-dev",
            "team-b",
            queue="local-queue",
            priority_class="dev-priority",
            head=node,
            workers=[("worker-group", 1, node)],
        )
    )
    c.step()
    assert c.admitted() == {dev}
    prod = c.submit(
        ray_cluster(
            "raycluster-prod",
            "team-a",
            queue="local-queue",
            priority_class="prod-priority",
            head=node,
            workers=[("worker-group", 1, gpu_node)],
        )
    )
    result = c.step()
    (eviction,) = result.evicted
    meta = c.workloads[prod]["metadata"]
    assert eviction.workload.name == dev and eviction.reason == "Preempted"
    assert eviction.message.startswith(
        f"Preempted to accommodate a workload (UID: {meta['uid']}, JobUID: "
        f"{meta['labels']['kueue.x-k8s.io/job-uid']}) due to reclamation within the cohort while borrowing"
    )
    c.step()
    assert c.admitted() == {prod}
    assert c.message(dev) == "Workload no longer fits after processing another workload"
    c.step()
    assert c.message(dev) == (
        "couldn't assign flavors to pod set worker-group: insufficient unused quota for cpu in flavor "
        "default-flavor, 2 more needed"
    )


def seed_004() -> Cluster:
    preempt = {
        "reclaimWithinCohort": "Any",
        "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100},
    }
    gpu_flavor = {"name": "gpu-flavor", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "1"}]}
    no_gpu = {
        "name": "gpu-flavor",
        "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "0", "borrowingLimit": "0"}],
    }
    shared = cluster_queue(
        "shared-cq",
        [(["cpu", "memory"], [flavor_resources("default-flavor", cpu=6, memory="16Gi")])],
        cohort="team-ab",
        preemption={**preempt, "withinClusterQueue": "Never"},
    )
    team_a = cluster_queue(
        "team-a-cq",
        [
            (["cpu", "memory"], [flavor_resources("default-flavor", cpu=0, memory=0)]),
            (["nvidia.com/gpu"], [gpu_flavor]),
        ],
        cohort="team-ab",
        preemption={**preempt, "withinClusterQueue": "LowerPriority"},
        queueingStrategy="BestEffortFIFO",
        namespaceSelector={"matchLabels": {"kubernetes.io/metadata.name": "team-a"}},
    )
    team_b = cluster_queue(
        "team-b-cq",
        [
            (["nvidia.com/gpu"], [no_gpu]),
            (["cpu", "memory"], [flavor_resources("default-flavor", cpu=0, memory=0)]),
        ],
        cohort="team-ab",
        queueingStrategy="BestEffortFIFO",
        namespaceSelector={"matchLabels": {"kubernetes.io/metadata.name": "team-b"}},
    )
    return Cluster(
        cqs=[shared, team_a, team_b],
        lqs=[
            local_queue("team-a", "local-queue", "team-a-cq"),
            local_queue("team-b", "local-queue", "team-b-cq"),
        ],
        flavors=["default-flavor", "gpu-flavor"],
        priorities={"prod-priority": 1000, "dev-priority": 100},
    )


def test_hierarchical_cohorts_reclaim_from_a_sibling_subtree() -> None:
    cohorts = [
        {"metadata": {"name": "root"}, "spec": {}},
        {"metadata": {"name": "team-a"}, "spec": {"parentName": "root"}},
        {"metadata": {"name": "team-b"}, "spec": {"parentName": "root"}},
    ]
    c = world(
        gpu_cq("a", 4, cohort="team-a", preemption={"reclaimWithinCohort": "Any"}),
        gpu_cq("b", 0, cohort="team-b"),
        lqs=[local_queue("ns", "a", "a"), local_queue("ns", "b", "b")],
        cohorts=cohorts,
    )
    borrower = c.submit(gpu_job("b-job", 4, queue="b", priority="top"))
    c.step()
    assert c.admitted() == {borrower}  # b borrows a's idle quota through the root
    owner = c.submit(gpu_job("a-job", 4, queue="a", priority="low"))
    result = c.step()
    assert [(e.workload.name, e.preemption_reason) for e in result.evicted] == [
        (borrower, "InCohortReclamation")
    ]
    assert "preemptor path: /root/team-a/a; preemptee path: /root/team-b/b" in result.evicted[0].message
    c.step()
    assert c.admitted() == {owner}
