"""Two places where the engine follows Kueue v0.19.2's scheduler after issue 27.

1. A head that needs preemption and finds no candidates keeps its ClusterQueue's unused nominal quota
   for the cycle when the queue cannot always reclaim (``reclaimWithinCohort`` other than ``Any``):
   upstream ``Scheduler.processEntry`` calls ``reserveCapacityForUnreclaimablePreempt``, which adds
   ``resourcesToReserve`` to the cycle's snapshot. With ``StrictFIFO`` the head is retried every cycle
   (``ClusterQueue.RequeueIfNotPresent`` requeues immediately), so the hold lasts while it waits.
2. A ``StrictFIFO`` queue does not stall behind a Workload from a namespace it does not select: upstream
   ``Scheduler.nominate`` gives it ``RequeueReasonNamespaceMismatch``, the one reason a StrictFIFO queue
   sends to its inadmissible list instead of back to the head.
"""

from __future__ import annotations

from typing import Any

import pytest
from kueue_factory import Cluster, cluster_queue, container, flavor_resources, local_queue, ray_cluster

PRIORITIES = {"low": 10, "high": 100}


def gpu_cq(name: str, nominal: Any, **spec: Any) -> dict[str, Any]:
    return cluster_queue(name, [(["nvidia.com/gpu"], [flavor_resources("f", gpu=nominal)])], **spec)


def job(name: str, gpus: int, queue: str, priority: str, ns: str = "ns") -> dict[str, Any]:
    return ray_cluster(name, ns, queue=queue, priority_class=priority, head=container(gpu=gpus))


def blocked_head_world(strategy: str, reclaim: str) -> tuple[Cluster, str, str]:
    """``owner`` (4 GPUs, nominal) runs a high-priority 2-GPU job; its low-priority 4-GPU head cannot
    preempt it; ``borrower`` (no quota) then asks for 2 GPUs from the cohort."""
    c = Cluster(
        cqs=[
            gpu_cq(
                "owner",
                4,
                cohort="c",
                queueingStrategy=strategy,
                preemption={"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": reclaim},
            ),
            gpu_cq("borrower", 0, cohort="c", queueingStrategy=strategy),
        ],
        lqs=[local_queue("ns", "owner", "owner"), local_queue("ns", "borrower", "borrower")],
        flavors=["f"],
        priorities=PRIORITIES,
    )
    c.submit(job("running", 2, "owner", "high"))
    c.step()
    head = c.submit(job("head", 4, "owner", "low"))
    other = c.submit(job("other", 2, "borrower", "low"))
    return c, head, other


@pytest.mark.parametrize("reclaim", ["Never", "LowerPriority"])
def test_a_blocked_strict_fifo_head_keeps_its_unused_nominal_quota(reclaim: str) -> None:
    c, head, other = blocked_head_world("StrictFIFO", reclaim)
    for _ in range(3):  # held on every pass while the head waits
        result = c.step()
        assert not result.admitted and not result.evicted
    assert other not in c.admitted() and head not in c.admitted()
    assert c.message(other) == "Workload no longer fits after processing another workload"


def test_a_queue_that_can_always_reclaim_holds_nothing() -> None:
    c, head, other = blocked_head_world("StrictFIFO", "Any")
    c.step()
    assert other in c.admitted() and head not in c.admitted()


def test_with_best_effort_fifo_the_hold_lasts_one_cycle() -> None:
    # Upstream holds for one cycle, then sends the blocked head to the inadmissible list
    # (RequeueReasonPreemptionNoCandidates is not immediate for BestEffortFIFO): the borrower, skipped
    # in that cycle and requeued at once, gets in in the next.
    c, head, other = blocked_head_world("BestEffortFIFO", "Never")
    c.pass_options["max_cycles"] = 1
    c.step()
    assert other not in c.admitted()
    assert c.message(other) == "Workload no longer fits after processing another workload"
    del c.pass_options["max_cycles"]
    c.step()
    assert other in c.admitted() and head not in c.admitted()


def test_strict_fifo_sets_aside_a_workload_from_an_unselected_namespace() -> None:
    cq = gpu_cq(
        "cq",
        4,
        queueingStrategy="StrictFIFO",
        namespaceSelector={"matchLabels": {"kubernetes.io/metadata.name": "team-a"}},
    )
    c = Cluster(
        cqs=[cq],
        lqs=[local_queue("team-b", "lq", "cq"), local_queue("team-a", "lq", "cq")],
        flavors=["f"],
        priorities=PRIORITIES,
    )
    wrong = c.submit(job("b", 1, "lq", "low", ns="team-b"))  # older: the head
    right = c.submit(job("a", 1, "lq", "low", ns="team-a"))
    c.step()
    assert c.admitted() == {right}
    assert c.message(wrong) == "workload namespace doesn't match ClusterQueue selector"


def test_strict_fifo_still_blocks_behind_a_head_that_does_not_fit() -> None:
    c = Cluster(
        cqs=[gpu_cq("cq", 4, queueingStrategy="StrictFIFO")],
        lqs=[local_queue("ns", "lq", "cq")],
        flavors=["f"],
        priorities=PRIORITIES,
    )
    big = c.submit(job("big", 8, "lq", "low"))
    small = c.submit(job("small", 1, "lq", "low"))
    c.step()
    assert c.admitted() == set()
    assert big and small
