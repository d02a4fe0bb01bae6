"""``list_clusters`` on 1,000 clusters (target < 2 s); its API calls for 10 vs 1,000 clusters (equal).

The local control plane (its Kueue emulation included) runs in a separate process, as an API server
does, so the figure is the SDK's: HTTPS with the real kubernetes client, then the join and the
admission reading. Every cluster sits in a LocalQueue whose ClusterQueue has no quota, so each has a
Workload, Kueue's "Pending" message and a position from the visibility API (the most a listing has to
join); no Ray head is started. Requests are counted by the API server (a pass-through fault that
matches every request and only counts it).

Usage: ``python benchmarks/bench_list_clusters.py [--clusters 1000] [--runs 5] [--crd-dir ../shared/crds]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET = 2.0

SERVER = r"""
import json, sys, time
from rayqueue_sdk import Cluster, ClusterConfiguration
from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk.manifests import kueue as k

crd_dir, sizes = sys.argv[1] or None, {"small": 10, "large": int(sys.argv[2])}
with LocalControlPlane(crd_dir=crd_dir, kuberay_enabled=False, keda_enabled=False) as cp:  # Kueue only
    for ns, count in sizes.items():
        cp.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        cp.apply([
            k.resource_flavor("default-flavor"),
            k.cluster_queue(f"parked-{ns}", resource_groups=[
                k.resource_group(k.flavor_quotas("default-flavor", {"cpu": 0, "memory": 0}))]),
            k.local_queue("parked", ns, f"parked-{ns}"),
        ])
        for i in range(count):
            cfg = ClusterConfiguration(name=f"c{i:04d}", namespace=ns, local_queue="parked", num_workers=1)
            cp.store.create("rayclusters.ray.io", Cluster(cfg).to_dict())
    print(json.dumps({"server": cp.server, "token": cp.token, "ca": str(cp.ca_cert_path)}), flush=True)
    counter = None
    for line in sys.stdin:
        if line.strip() == "count":
            counter = cp.faults.inject(path=r"/", delay=1e-6, times=None)
            print("ok", flush=True)
        elif line.strip() == "stop":
            cp.faults.clear()
            print(counter.hits if counter else -1, flush=True)
        else:
            break
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--crd-dir", default=str(ROOT.parent / "shared" / "crds"))
    args = parser.parse_args()

    from rayqueue_sdk import list_clusters
    from rayqueue_sdk.kube.client import build_api_client

    crds = args.crd_dir if Path(args.crd_dir).is_dir() else ""
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, crds, str(args.clusters)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        started = time.perf_counter()
        info = json.loads(proc.stdout.readline())
        api = build_api_client(info["server"], token=info["token"], ca_cert_path=info["ca"])

        def queued(ns: str) -> int:
            return sum(s.position is not None for s in list_clusters(ns, api))

        while queued("small") < 10 or queued("large") < args.clusters:  # Kueue has queued them all
            time.sleep(0.5)
        print(
            f"setup: {10 + args.clusters} clusters queued by Kueue in {time.perf_counter() - started:.1f} s"
        )

        def counted(ns: str) -> tuple[list[Any], int]:
            proc.stdin.write("count\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            assert proc.stdout.readline().strip() == "ok"  # type: ignore[union-attr]
            found = list_clusters(ns, api)
            proc.stdin.write("stop\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            return found, int(proc.stdout.readline())  # type: ignore[union-attr]

        small, calls_small = counted("small")
        large, calls_large = counted("large")
        assert len(small) == 10 and len(large) == args.clusters
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            found = list_clusters("large", api)
            times.append(time.perf_counter() - t0)
        median = statistics.median(times)
        positions = sorted(s.position for s in found if s.position is not None)
        verdict = "met" if median < TARGET else "NOT met"
        print(
            f"list_clusters: {args.clusters} clusters in {median:.3f} s median of {args.runs} "
            f"(min {min(times):.3f} s, max {max(times):.3f} s); target < {TARGET} s: {verdict}"
        )
        equal = "equal" if calls_small == calls_large else "NOT equal"
        print(
            f"API calls: {calls_small} for 10 clusters, {calls_large} for {args.clusters} clusters: {equal}"
        )
        print(f"positions known for {len(positions)} of {args.clusters} queued clusters")
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


if __name__ == "__main__":
    main()
