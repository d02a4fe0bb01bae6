"""``list_clusters`` on 1,000 clusters (target < 2 s); its API calls for 10 vs 1,000 clusters (equal).

Against the local control plane over HTTPS with the real kubernetes client and its Kueue emulation:
every cluster sits in a LocalQueue whose ClusterQueue has no quota, so each has a Workload, a Kueue
"Pending" message and a position from the visibility API (the most a listing has to join). No Ray
head is started. Requests are counted by the API server (a pass-through fault that matches every
request and only counts it).

Usage: ``python benchmarks/bench_list_clusters.py [--clusters 1000] [--runs 5] [--crd-dir ../shared/crds]``
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from rayqueue_sdk import Cluster, ClusterConfiguration, list_clusters
from rayqueue_sdk.kube.client import build_api_client
from rayqueue_sdk.local.controlplane import LocalControlPlane
from rayqueue_sdk.manifests import kueue as k

ROOT = Path(__file__).resolve().parents[1]
TARGET = 2.0


def setup(cp: LocalControlPlane, ns: str) -> None:
    cp.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    cp.apply(
        [
            k.resource_flavor("default-flavor"),
            k.cluster_queue(
                f"parked-{ns}",
                resource_groups=[
                    k.resource_group(k.flavor_quotas("default-flavor", {"cpu": 0, "memory": 0}))
                ],
            ),
            k.local_queue("parked", ns, f"parked-{ns}"),
        ]
    )


def fill(cp: LocalControlPlane, ns: str, count: int, api: Any) -> None:
    for i in range(count):
        cfg = ClusterConfiguration(name=f"c{i:04d}", namespace=ns, local_queue="parked", num_workers=1)
        cp.store.create("rayclusters.ray.io", Cluster(cfg).to_dict())
    deadline = time.monotonic() + 600
    while sum(s.position is not None for s in list_clusters(ns, api)) < count:  # Kueue has queued them all
        if time.monotonic() > deadline:
            raise SystemExit(f"Kueue did not queue {count} clusters in {ns}")
        time.sleep(0.5)


def counted(cp: LocalControlPlane, action: Any) -> tuple[Any, int]:
    counter = cp.faults.inject(path=r"/", delay=1e-6, times=None)
    try:
        return action(), counter.hits
    finally:
        cp.faults.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--crd-dir", default=str(ROOT.parent / "shared" / "crds"))
    args = parser.parse_args()

    with LocalControlPlane(crd_dir=args.crd_dir) as cp:
        api = build_api_client(cp.server, token=cp.token, ca_cert_path=str(cp.ca_cert_path))
        setup(cp, "small")
        setup(cp, "large")
        started = time.perf_counter()
        fill(cp, "small", 10, api)
        fill(cp, "large", args.clusters, api)
        print(
            f"setup: {10 + args.clusters} clusters queued by Kueue in {time.perf_counter() - started:.1f} s"
        )

        small, calls_small = counted(cp, lambda: list_clusters("small", api))
        large, calls_large = counted(cp, lambda: list_clusters("large", api))
        assert len(small) == 10 and len(large) == args.clusters
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            found = list_clusters("large", api)
            times.append(time.perf_counter() - t0)
            assert len(found) == args.clusters
        median = statistics.median(times)
        positions = sorted(s.position for s in found if s.position is not None)
        print(
            f"list_clusters: {args.clusters} clusters in {median:.3f} s median of {args.runs} "
            f"(min {min(times):.3f} s, max {max(times):.3f} s); target < {TARGET} s: "
            f"{'met' if median < TARGET else 'NOT met'}"
        )
        print(
            f"API calls: {calls_small} for 10 clusters, {calls_large} for {args.clusters} clusters: "
            f"{'equal' if calls_small == calls_large else 'NOT equal'}"
        )
        print(
            f"positions known for {len(positions)} of {args.clusters} queued clusters "
            f"(0..{positions[-1] if positions else '-'})"
        )


if __name__ == "__main__":
    main()
