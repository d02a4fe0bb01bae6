"""waitForPodsReady's ``blockAdmission`` and ``requeuingStrategy.timestamp`` in the admission engine.

Kueue v0.19.2: ``Scheduler.waitForPodsReadyIfNeeded`` / ``Cache.WaitForPodsReady`` (nothing more is
admitted while a Workload holding quota is not ``PodsReady``) and ``Ordering.GetQueueOrderTimestamp``
(a Workload evicted for ``PodsReadyTimeout`` queues by that eviction's time unless the timestamp is
``Creation``).
"""

from __future__ import annotations

from typing import Any

import pytest

from rayqueue_local.controllers.kueue.engine import admission_pass

CQ = {
    "metadata": {"name": "cq"},
    "spec": {
        "namespaceSelector": {},
        "resourceGroups": [
            {
                "coveredResources": ["cpu"],
                "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": "4"}]}],
            }
        ],
    },
}
LQ = {"metadata": {"name": "lq", "namespace": "ns"}, "spec": {"clusterQueue": "cq"}}
FLAVOR = {"metadata": {"name": "f"}}


def wl(
    name: str, cpu: int, created: str, *conditions: dict[str, Any], admitted: bool = False
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "metadata": {"name": name, "namespace": "ns", "uid": name, "creationTimestamp": created},
        "spec": {
            "queueName": "lq",
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {"spec": {"containers": [{"resources": {"requests": {"cpu": str(cpu)}}}]}},
                }
            ],
        },
        "status": {"conditions": list(conditions)},
    }
    if admitted:
        obj["status"]["admission"] = {
            "clusterQueue": "cq",
            "podSetAssignments": [
                {"name": "main", "flavors": {"cpu": "f"}, "resourceUsage": {"cpu": str(cpu)}, "count": 1}
            ],
        }
        obj["status"]["conditions"].append(
            {"type": "QuotaReserved", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
        )
    return obj


def cond(ctype: str, status: str, reason: str = "", at: str = "2026-01-01T00:00:00Z") -> dict[str, Any]:
    return {"type": ctype, "status": status, "reason": reason, "lastTransitionTime": at}


def run(workloads: list[dict[str, Any]], **options: Any) -> Any:
    return admission_pass(
        cluster_queues=[CQ], resource_flavors=[FLAVOR], local_queues=[LQ], workloads=workloads, **options
    )


@pytest.mark.parametrize("ready", [False, True])
def test_block_admission_waits_for_the_running_workloads_pods(ready: bool) -> None:
    running = wl("running", 1, "2026-01-01T00:00:00Z", cond("PodsReady", str(ready)), admitted=True)
    result = run([running, wl("next", 1, "2026-01-01T00:00:01Z")], block_admission=True)
    if ready:
        assert [a.workload.name for a in result.admitted] == ["next"]
    else:
        assert not result.admitted
        [pending] = result.pending
        assert (pending.workload.name, pending.reason, pending.message) == (
            "next",
            "Waiting",
            "waiting for all admitted workloads to be in PodsReady condition",
        )


def test_block_admission_admits_one_workload_at_a_time() -> None:
    workloads = [wl(name, 1, f"2026-01-01T00:00:0{i}Z") for i, name in enumerate(["a", "b", "c"])]
    blocked = run(workloads, block_admission=True)
    assert [a.workload.name for a in blocked.admitted] == ["a"]
    assert [(p.workload.name, p.reason) for p in blocked.pending] == [("b", "Waiting")]
    assert [a.workload.name for a in run(workloads).admitted] == ["a", "b", "c"]


@pytest.mark.parametrize(("timestamp", "first"), [("Eviction", "younger"), ("Creation", "older")])
def test_requeuing_timestamp_orders_a_pods_ready_timeout_eviction(timestamp: str, first: str) -> None:
    # The older workload was evicted for PodsReadyTimeout after the younger one was created.
    evicted = cond("Evicted", "True", "PodsReadyTimeout", at="2026-01-01T00:10:00Z")
    older = wl("older", 4, "2026-01-01T00:00:00Z", evicted)
    younger = wl("younger", 4, "2026-01-01T00:05:00Z")
    result = run([older, younger], requeuing_timestamp=timestamp)
    assert [a.workload.name for a in result.admitted] == [first]


def test_another_eviction_reason_keeps_the_creation_order() -> None:
    evicted = cond("Evicted", "True", "Preempted", at="2026-01-01T00:10:00Z")
    result = run([wl("older", 4, "2026-01-01T00:00:00Z", evicted), wl("younger", 4, "2026-01-01T00:05:00Z")])
    assert [a.workload.name for a in result.admitted] == ["older"]


def test_the_options_take_only_kueues_timestamps() -> None:
    from rayqueue_local.options import ControlPlaneOptions

    options = ControlPlaneOptions(wait_for_pods_ready_block_admission=True, requeuing_timestamp="Creation")
    assert (options.wait_for_pods_ready_block_admission, options.requeuing_timestamp) == (True, "Creation")
    with pytest.raises(ValueError, match="requeuing_timestamp must be Eviction or Creation"):
        ControlPlaneOptions(requeuing_timestamp="Admission")
