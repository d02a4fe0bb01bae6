"""Benchmark of the local control plane's store (no HTTP): memory, create/get/list/validate times.

Run: ``python benchmarks/bench_store.py [--crd-dir ../shared/crds] [--objects 10000]``

Prints, measured in one run:
* memory held by N stored RayClusters (tracemalloc, after creation, minus the empty store);
* median time of ``create`` and ``get`` in the store (copies included; with CRD validation and
  pruning when a CRD directory is given, which is the configuration the API server uses);
* time to list 1,000 RayClusters of one namespace out of N (copies included), and a page of 500;
* median time of a write with persistence (fsync on) to a state directory, and the restart time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from rayqueue_local.registry.registry import Registry
from rayqueue_local.storage.store import Store

RC = "rayclusters.ray.io"
DEFAULT_CRDS = Path(__file__).resolve().parents[2] / "shared" / "crds"


def raycluster(i: int, ns: str) -> dict[str, Any]:
    """A realistic RayCluster (head + one GPU worker group, Kueue labels), about 1.5 KB of JSON."""

    def container(name: str, gpu: int) -> dict[str, Any]:
        limits: dict[str, Any] = {"cpu": "2", "memory": "8Gi"}
        if gpu:
            limits["nvidia.com/gpu"] = gpu
        return {
            "name": name,
            "image": "rayproject/ray:2.40.0",
            "ports": [{"containerPort": 6379, "name": "gcs"}, {"containerPort": 8265, "name": "dashboard"}],
            "resources": {"limits": limits, "requests": dict(limits)},
            "env": [{"name": "RAY_USAGE_STATS_ENABLED", "value": "0"}],
        }

    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {
            "name": f"cluster-{i:05d}",
            "namespace": ns,
            "labels": {
                "kueue.x-k8s.io/queue-name": "ds-queue",
                "kueue.x-k8s.io/priority-class": "rd-priority",
            },
        },
        "spec": {
            "rayVersion": "2.40.0",
            "enableInTreeAutoscaling": False,
            "headGroupSpec": {
                "rayStartParams": {"dashboard-host": "0.0.0.0"},
                "template": {"spec": {"containers": [container("ray-head", 0)]}},
            },
            "workerGroupSpecs": [
                {
                    "groupName": "gpu",
                    "replicas": 2,
                    "minReplicas": 0,
                    "maxReplicas": 2,
                    "rayStartParams": {},
                    "template": {"spec": {"containers": [container("ray-worker", 1)]}},
                }
            ],
        },
    }


def median_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crd-dir", default=str(DEFAULT_CRDS), help="CRD directory ('' for none)")
    parser.add_argument("--objects", type=int, default=10_000)
    args = parser.parse_args()
    crd_dir = args.crd_dir if args.crd_dir and Path(args.crd_dir).is_dir() else None
    registry = Registry(crd_dir)
    n = args.objects
    namespaces = [f"team-{k}" for k in range(n // 1000 or 1)]

    # Bodies decoded from JSON, as the API server hands them to the store.
    bodies = [json.dumps(raycluster(i, namespaces[i % len(namespaces)])) for i in range(n)]

    def memory(history: int) -> int:
        """Bytes held by a store of n RayClusters (no validation: it does not change what is kept)."""
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        held_store = Store(Registry(), history=history)
        for ns in namespaces:
            held_store.create("namespaces", {"metadata": {"name": ns}})
        for i in range(n):
            held_store.create(RC, json.loads(bodies[i]))
        held = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        return held

    held_objects = memory(history=1)
    held_with_history = memory(history=10_000)

    store = Store(registry, history=10_000)
    for ns in namespaces:
        store.create("namespaces", {"metadata": {"name": ns}})
    objects = [json.loads(body) for body in bodies]
    create_times = []
    for obj in objects:
        t = time.perf_counter()
        store.create(RC, obj)
        create_times.append(time.perf_counter() - t)

    get_times = []
    for i in range(0, n, max(1, n // 2000)):
        t = time.perf_counter()
        store.get(RC, namespaces[i % len(namespaces)], f"cluster-{i:05d}")
        get_times.append(time.perf_counter() - t)

    list_times = []
    for _ in range(5):
        t = time.perf_counter()
        items = store.list(RC, namespaces[0])
        list_times.append(time.perf_counter() - t)
    nocopy_times = []
    for _ in range(5):
        t = time.perf_counter()
        store.list(RC, namespaces[0], copy=False)
        nocopy_times.append(time.perf_counter() - t)
    page_times = []
    for _ in range(5):
        t = time.perf_counter()
        store.list_page(RC, namespaces[0], limit=500, label_selector="kueue.x-k8s.io/queue-name=ds-queue")
        page_times.append(time.perf_counter() - t)

    with tempfile.TemporaryDirectory() as state:
        durable = Store(registry, state_dir=state)  # fsync on every write
        durable_times = []
        for i in range(200):
            obj = raycluster(i, "default")
            t = time.perf_counter()
            durable.create(RC, obj)
            durable_times.append(time.perf_counter() - t)
        durable.close()
    with tempfile.TemporaryDirectory() as state:
        bulk = Store(registry, state_dir=state, fsync=False)
        for ns in namespaces:
            bulk.create("namespaces", {"metadata": {"name": ns}})
        for obj in objects:
            bulk.create(RC, obj)
        bulk.close()
        t = time.perf_counter()
        Store(registry, state_dir=state).close()
        restart = time.perf_counter() - t

    print(f"store benchmark: {n} RayClusters, CRD validation {'on' if store.validating else 'off'}")
    for label, held in (
        ("objects only", held_objects),
        ("objects + 10,000-event watch history", held_with_history),
    ):
        print(f"  memory, {n} RayClusters, {label}: {held / 2**20:.1f} MiB ({held / n / 1024:.1f} KiB each)")
    print(f"  create median: {median_us(create_times):.0f} us   get median: {median_us(get_times):.1f} us")
    print(f"  list {len(items)} RayClusters of one namespace: {min(list_times) * 1e3:.1f} ms (best of 5)")
    print(f"  the same list with copy=False (read-only, for serialisation): {min(nocopy_times) * 1e3:.1f} ms")
    print(f"  list page of 500 with a label selector: {min(page_times) * 1e3:.1f} ms (best of 5)")
    print(
        f"  create with persistence (fsync) median: {median_us(durable_times):.0f} us; "
        f"restart with {n} objects: {restart * 1e3:.0f} ms"
    )


if __name__ == "__main__":
    main()
