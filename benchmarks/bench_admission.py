"""One Kueue admission pass over 1,000 pending Workloads in 10 ClusterQueues (target: < 2 s).

The ClusterQueues share a cohort, have two GPU flavors, borrowing limits and preemption policies,
and 100 admitted Workloads already hold part of the quota, so the pass exercises flavor
assignment, borrowing, the preemption oracle and victim search, not only the happy path.
Memory is measured with tracemalloc (peak of the pass itself).

Run: ``python benchmarks/bench_admission.py``
"""

from __future__ import annotations

import random
import statistics
import time
import tracemalloc
from typing import Any

from rayqueue_local.controllers.kueue.engine import admission_pass

QUEUES = 10
PENDING = 1000
ADMITTED = 100


def cluster_queue(i: int) -> dict[str, Any]:
    def flavor(name: str, gpus: int) -> dict[str, Any]:
        return {
            "name": name,
            "resources": [
                {"name": "cpu", "nominalQuota": 64},
                {"name": "memory", "nominalQuota": "512Gi"},
                {"name": "nvidia.com/gpu", "nominalQuota": gpus, "borrowingLimit": 4},
            ],
        }

    return {
        "metadata": {"name": f"cq-{i}"},
        "spec": {
            "namespaceSelector": {},
            "cohortName": "pool",
            "queueingStrategy": "StrictFIFO" if i % 3 == 0 else "BestEffortFIFO",
            "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                    "flavors": [flavor("a100", 8), flavor("t4", 8)],
                }
            ],
        },
    }


def workload(rng: random.Random, n: int, cq: int, admitted: bool) -> dict[str, Any]:
    gpus = rng.randint(1, 4)
    node = {"resources": {"requests": {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": gpus}}}
    wl: dict[str, Any] = {
        "metadata": {
            "name": f"wl-{n}",
            "namespace": f"ns-{cq}",
            "uid": f"uid-{n}",
            "creationTimestamp": f"2026-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}Z",
        },
        "spec": {
            "queueName": "lq",
            "priority": rng.choice([0, 100, 1000]),
            "podSets": [
                {"name": "head", "count": 1, "template": {"spec": {"containers": [node]}}},
                {"name": "workers", "count": 1, "template": {"spec": {"containers": [node]}}},
            ],
        },
    }
    if admitted:
        res = {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": str(2 * gpus)}
        wl["status"] = {
            "admission": {
                "clusterQueue": f"cq-{cq}",
                "podSetAssignments": [
                    {"name": "head", "count": 1, "flavors": dict.fromkeys(res, "a100"), "resourceUsage": res}
                ],
            },
            "conditions": [
                {
                    "type": "QuotaReserved",
                    "status": "True",
                    "reason": "QuotaReserved",
                    "message": "",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ],
        }
    return wl


def main() -> None:
    rng = random.Random(7)
    cqs = [cluster_queue(i) for i in range(QUEUES)]
    lqs = [
        {"metadata": {"name": "lq", "namespace": f"ns-{i}"}, "spec": {"clusterQueue": f"cq-{i}"}}
        for i in range(QUEUES)
    ]
    flavors = [{"metadata": {"name": "a100"}}, {"metadata": {"name": "t4"}}]
    objs = [workload(rng, n, n % QUEUES, n < ADMITTED) for n in range(PENDING + ADMITTED)]
    times = []
    for _ in range(5):
        start = time.perf_counter()
        result = admission_pass(
            cluster_queues=cqs, resource_flavors=flavors, local_queues=lqs, workloads=objs
        )
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    admission_pass(cluster_queues=cqs, resource_flavors=flavors, local_queues=lqs, workloads=objs)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    median, worst = statistics.median(times) * 1000, max(times) * 1000
    counts = len(result.admitted), len(result.evicted), len(result.pending)
    print(f"admission pass: {PENDING} pending + {ADMITTED} admitted Workloads, {QUEUES} ClusterQueues")
    print("  decisions: {} admitted, {} preempted, {} pending".format(*counts))
    print(f"  time: median {median:.0f} ms, max {worst:.0f} ms over {len(times)} runs")
    print(f"  target < 2000 ms: {'met' if max(times) < 2 else 'MISSED'}")
    print(f"  peak traced memory during one pass: {peak / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
