"""How fast the wait reacts: from a status write to the SDK noticing it (target < 0.5 s).

Against the local control plane over HTTPS with the real kubernetes client, no controllers: the
benchmark plays Kueue and KubeRay by writing status, as tests/sdk/test_wait.py does. Two reactions
are measured per run, from the start of the status PATCH:

- admission: a Workload status write (Admitted=True) -> ``on_progress`` reports ADMITTED;
- ready: a RayCluster status write (HeadPodReady + RayClusterProvisioned) -> ``wait_for_cluster`` returns.

Usage: ``python benchmarks/bench_wait.py [--runs 15] [--crd-dir ../shared/crds]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

from kubernetes import client as k8s

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import ClusterPhase, ClusterStatus
from rayqueue_sdk.cluster.wait import wait_for_cluster

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "sdk" / "api"))
from sdk_helpers import NS, cond, raycluster, workload  # noqa: E402

KUEUE = ("kueue.x-k8s.io", "v1beta2")
TARGET = 0.5


def one_run(api: Any, custom: Any, i: int) -> tuple[float, float]:
    name = f"bench-{i}"
    rc = custom.create_namespaced_custom_object(
        "ray.io", "v1", NS, "rayclusters", raycluster(name, queue="q")
    )
    wl = custom.create_namespaced_custom_object(*KUEUE, NS, "workloads", workload(rc, queue="q"))
    wl_name = wl["metadata"]["name"]
    custom.patch_namespaced_custom_object_status(
        *KUEUE,
        NS,
        "workloads",
        wl_name,
        {"status": {"conditions": [cond("QuotaReserved", "False", "Pending", "x")]}},
    )
    seen: dict[ClusterPhase, float] = {}
    phase_events = {p: threading.Event() for p in ClusterPhase}
    result: dict[str, Any] = {}

    def on_progress(st: ClusterStatus) -> None:
        seen.setdefault(st.phase, time.perf_counter())
        phase_events[st.phase].set()

    def waiter() -> None:
        try:
            result["status"] = wait_for_cluster(name, NS, client=api, timeout=60, on_progress=on_progress)
        except Exception as err:  # reported below
            result["error"] = err
        result["returned"] = time.perf_counter()

    thread = threading.Thread(target=waiter)
    thread.start()
    phase_events[ClusterPhase.QUEUED].wait(30)
    t_admit = time.perf_counter()
    custom.patch_namespaced_custom_object_status(
        *KUEUE,
        NS,
        "workloads",
        wl_name,
        {
            "status": {
                "admission": {"clusterQueue": "cq", "podSetAssignments": [{"name": "head", "count": 1}]},
                "conditions": [
                    cond("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue cq"),
                    cond("Admitted", "True", "Admitted", "The workload is admitted"),
                ],
            }
        },
    )
    phase_events[ClusterPhase.ADMITTED].wait(30)
    custom.patch_namespaced_custom_object(
        "ray.io", "v1", NS, "rayclusters", name, {"spec": {"suspend": False}}
    )
    phase_events[ClusterPhase.STARTING].wait(30)
    t_ready = time.perf_counter()
    custom.patch_namespaced_custom_object_status(
        "ray.io",
        "v1",
        NS,
        "rayclusters",
        name,
        {
            "status": {
                "conditions": [
                    cond("HeadPodReady", "True", "HeadPodRunningAndReady"),
                    cond("RayClusterProvisioned", "True", "AllPodRunningAndReadyFirstTime"),
                ]
            }
        },
    )
    thread.join(60)
    if "error" in result:
        raise result["error"]
    return seen[ClusterPhase.ADMITTED] - t_admit, result["returned"] - t_ready


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--crd-dir", default=str(ROOT.parent / "shared" / "crds"))
    args = parser.parse_args()
    with LocalControlPlane(crd_dir=args.crd_dir, controllers=[]) as cp:
        cp.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        api = cp.api_client()
        custom = k8s.CustomObjectsApi(api)
        admit, ready = [], []
        for i in range(args.runs):
            a, r = one_run(api, custom, i)
            admit.append(a)
            ready.append(r)
    for label, xs in (
        ("admission write -> ADMITTED reported", admit),
        ("ready write -> wait returns", ready),
    ):
        med = statistics.median(xs)
        print(
            f"{label:40s} median {med * 1000:7.1f} ms  max {max(xs) * 1000:7.1f} ms  "
            f"(target {TARGET * 1000:.0f} ms: median is {TARGET / med:.0f}x under)  runs={len(xs)}"
        )


if __name__ == "__main__":
    main()
