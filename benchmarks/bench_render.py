#!/usr/bin/env python3
"""How long does rendering one RayCluster manifest take? (target: < 1 ms)

Times, in one process with ``timeit``, building the manifest dict from an existing configuration
(``Cluster.to_dict()``), serialising it (``to_yaml()``), and for context validating a configuration
(``ClusterConfiguration(...)``) and rendering a job-owned RayJob. Prints the median of several repeats.

Usage:
    python3 benchmarks/bench_render.py [--repeat 15] [--number 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import timeit
from collections.abc import Callable
from typing import Any

from rayqueue_sdk import Cluster, ClusterConfiguration, ManagedClusterConfig, RayJob


def workspace_config() -> ClusterConfiguration:
    return ClusterConfiguration(
        name="my-workspace-cluster",
        num_workers=2,
        worker_cpu_requests=2,
        worker_memory_requests=8,
        worker_extended_resource_requests={"nvidia.com/gpu": 1},
        local_queue="ds-workspace-queue",
        labels={"kueue.x-k8s.io/priority-class": "rd-priority"},
    )


def median_seconds(fn: Callable[[], Any], repeat: int, number: int) -> float:
    fn()  # warm up (lazy imports, caches)
    return statistics.median(t / number for t in timeit.repeat(fn, repeat=repeat, number=number))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--number", type=int, default=200)
    args = parser.parse_args()
    cluster = Cluster(workspace_config())
    job = RayJob(
        job_name="final-training-run",
        entrypoint="python train_model_full.py",
        local_queue="batch-jobs-queue",
        cluster_config=ManagedClusterConfig(num_workers=4, worker_accelerators={"nvidia.com/gpu": 2}),
        runtime_env={"pip": ["torch"], "working_dir": "https://example.org/repo.zip"},
    )
    cases: list[tuple[str, Callable[[], Any]]] = [
        ("RayCluster to_dict() (render)", cluster.to_dict),
        ("RayCluster to_yaml() (render + YAML)", cluster.to_yaml),
        ("ClusterConfiguration(...) (validate)", workspace_config),
        ("RayJob to_dict() (job-owned cluster)", job.to_dict),
    ]
    print(f"python {sys.version.split()[0]}; median of {args.repeat} repeats x {args.number} calls")
    for name, fn in cases:
        seconds = median_seconds(fn, args.repeat, args.number)
        print(f"{name:42} {seconds * 1e6:10.1f} us")
    render = median_seconds(cluster.to_dict, args.repeat, args.number)
    print(f"render one RayCluster: {render * 1e3:.3f} ms (target < 1 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
