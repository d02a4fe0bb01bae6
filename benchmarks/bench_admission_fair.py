"""One Kueue admission pass over 10,000 pending Workloads in 20 ClusterQueues, fair sharing and admission
checks on (target < 1 s).

The 20 ClusterQueues share a cohort with fair sharing on (DRS ordering, fair-sharing preemption with both
strategies) and Admission Fair Sharing (two LocalQueues each, with consumed resources of their own); they
have two GPU flavors, borrowing limits and preemption policies, and 200 admitted Workloads already hold part
of the quota (within it, as on a real cluster), so the pass exercises flavor assignment, the tournament,
borrowing, the preemption oracle and the victim search (higher priorities preempt lower ones). Every
ClusterQueue has a ProvisioningRequest admission check (``admissionChecksStrategy``; the AdmissionCheck is
passed to the pass, Active, so each queue's check state is looked at), and one pending
Workload in twenty is in its requeue backoff after a failed check (``status.requeueState.requeueAt`` in the
future), which the pass must leave out of the queues.
Memory is measured with tracemalloc (peak of one pass). Prints wall and process CPU time (on a shared
machine the CPU time is the steadier figure) and asserts nothing.

Run: ``python benchmarks/bench_admission_fair.py [pending] [queues]``.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
import tracemalloc
from typing import Any

from rayqueue_local.controllers.kueue.engine import admission_pass
from rayqueue_local.controllers.kueue.fairsharing import AdmissionFairSharing, FairSharingSettings

PENDING = 10_000
QUEUES = 20
ADMITTED = 200
TARGET_S = 1.0


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
            "queueingStrategy": "StrictFIFO" if i % 5 == 0 else "BestEffortFIFO",
            "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
            "fairSharing": {"weight": 1 + i % 3},
            "admissionScope": {"admissionMode": "UsageBasedAdmissionFairSharing"},
            "admissionChecksStrategy": {"admissionChecks": [{"name": "prov"}]},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                    "flavors": [flavor("a100", 8), flavor("t4", 8)],
                }
            ],
        },
    }


def local_queues(queues: int) -> list[dict[str, Any]]:
    out = []
    for i in range(queues):
        for j in range(2):
            out.append(
                {
                    "metadata": {"name": f"lq-{j}", "namespace": f"ns-{i}"},
                    "spec": {"clusterQueue": f"cq-{i}", "fairSharing": {"weight": 1 + j}},
                    "status": {
                        "fairSharing": {
                            "weightedShare": 0,
                            "admissionFairSharingStatus": {
                                "consumedResources": {"cpu": f"{(i + j) % 7}", "nvidia.com/gpu": f"{j}"},
                                "lastUpdate": "2026-01-01T00:00:00Z",
                            },
                        }
                    },
                }
            )
    return out


def workload(rng: random.Random, n: int, cq: int, admitted: bool) -> dict[str, Any]:
    gpus = rng.randint(1, 4)
    node = {"resources": {"requests": {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": gpus}}}
    wl: dict[str, Any] = {
        "metadata": {
            "name": f"wl-{n}",
            "namespace": f"ns-{cq}",
            "uid": f"uid-{n}",
            "creationTimestamp": f"2026-01-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z",
        },
        "spec": {
            "queueName": f"lq-{n % 2}",
            "priority": rng.choice([0, 100, 1000]),
            "podSets": [
                {"name": "head", "count": 1, "template": {"spec": {"containers": [node]}}},
                {"name": "workers", "count": 1, "template": {"spec": {"containers": [node]}}},
            ],
        },
    }
    if not admitted and n % 20 == 0:  # a failed ProvisioningRequest: requeued after a backoff
        wl["status"] = {
            "admissionChecks": [
                {"name": "prov", "state": "Pending", "retryCount": 1,
                 "message": "Reset to Pending after eviction.", "lastTransitionTime": "2026-01-01T00:00:00Z"}
            ],
            "requeueState": {"count": 1, "requeueAt": "2030-01-01T00:00:00Z"},
        }  # fmt: skip
    if admitted:  # one GPU per pod, on a100 or t4: 10 per queue stay within its 16 GPUs of quota
        flavor = "a100" if n % 2 else "t4"
        wl["spec"]["podSets"] = [
            {
                "name": "head",
                "count": 1,
                "template": {
                    "spec": {
                        "containers": [
                            {"resources": {"requests": {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": 1}}}
                        ]
                    }
                },
            }
        ]
        res = {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "1"}
        wl["status"] = {
            "admission": {
                "clusterQueue": f"cq-{cq}",
                "podSetAssignments": [
                    {"name": "head", "count": 1, "flavors": dict.fromkeys(res, flavor), "resourceUsage": res}
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
    pending = int(sys.argv[1]) if len(sys.argv) > 1 else PENDING
    queues = int(sys.argv[2]) if len(sys.argv) > 2 else QUEUES
    rng = random.Random(7)
    cqs = [cluster_queue(i) for i in range(queues)]
    lqs = local_queues(queues)
    flavors = [{"metadata": {"name": "a100"}}, {"metadata": {"name": "t4"}}]
    objs = [workload(rng, n, n % queues, n < ADMITTED) for n in range(pending + ADMITTED)]
    fair = FairSharingSettings(enabled=True, admission=AdmissionFairSharing())
    checks = [  # the AdmissionCheck every ClusterQueue names, Active (else the queues would be inactive)
        {
            "metadata": {"name": "prov"},
            "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request"},
            "status": {"conditions": [{"type": "Active", "status": "True", "reason": "Active"}]},
        }
    ]

    def one_pass() -> Any:
        return admission_pass(
            cluster_queues=cqs,
            resource_flavors=flavors,
            local_queues=lqs,
            workloads=objs,
            fair_sharing=fair,
            admission_checks=checks,
            now=1.8e9,
        )

    times, cpu = [], []
    for _ in range(3):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = one_pass()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    tracemalloc.start()
    one_pass()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    median, worst = statistics.median(times), max(times)
    counts = len(result.admitted), len(result.evicted), len(result.pending)
    print(
        f"admission pass, fair sharing + AFS + admission checks: {pending} pending + {ADMITTED} admitted, "
        f"{queues} ClusterQueues"
    )
    print("  decisions: {} admitted, {} preempted, {} pending".format(*counts))
    print(f"  time: median {median * 1000:.0f} ms, max {worst * 1000:.0f} ms over {len(times)} runs")
    cpu_median = statistics.median(cpu)
    print(f"  CPU time of the process: median {cpu_median * 1000:.0f} ms (wall time counts other load)")
    print(f"  target < {TARGET_S * 1000:.0f} ms (CPU time): {'met' if cpu_median < TARGET_S else 'MISSED'}")
    print(f"  peak traced memory during one pass: {peak / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
