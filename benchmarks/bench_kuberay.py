"""KubeRay emulation with real Ray: admission to a dashboard that answers, to a first job SUCCEEDED,
and memory per running cluster, against a bare ``ray start --head`` measured side by side.

Each round runs, one after the other (never two heads at once, so they do not compete):

- **bare**: ``ray start --head`` (no ``--block``; its own temp dir, free GCS and dashboard ports,
  its own session) -> the command returns -> the dashboard answers ``/api/version`` -> a job
  submitted with Ray's ``JobSubmissionClient`` SUCCEEDED. Stopped by killing its session (never a
  machine-wide ``ray stop``).
- **head manager**: :class:`~rayqueue_local.runtime.raylocal.RayHead` alone: start -> ready (raylet
  and GCS health, dashboard) -> the same job SUCCEEDED.
- **local control plane**: a RayCluster (head + 1 worker, 1 GPU each) under a Kueue quota is
  created; from the moment Kueue unsuspends it (admission) -> ``status.state`` ready -> its
  dashboard (``status.endpoints``) answers -> the same job SUCCEEDED. Memory of the head's process
  tree (RSS summed, and PSS) while it runs; then it is deleted.

Usage: ``python benchmarks/bench_kuberay.py [--rounds 2] [--crd-dir ../shared/crds]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubernetes import client as k8s

from rayqueue_local import LocalControlPlane
from rayqueue_local.runtime.interpreter import ray_command
from rayqueue_local.runtime.processes import _kill_session, free_ports, session_pids, tree_memory
from rayqueue_local.runtime.raylocal import RayHead, RayHeadSpec

ROOT = Path(__file__).resolve().parents[1]
NS = "bench"
JOB = 'python -c "import ray; ray.init(); print(ray.get(ray.remote(lambda: 6 * 7).remote()))"'
QUEUE = f"""
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: default-flavor}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: bench-cq}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: ["cpu", "memory", "nvidia.com/gpu"]
    flavors:
    - name: default-flavor
      resources:
      - {{name: cpu, nominalQuota: 8}}
      - {{name: memory, nominalQuota: 32Gi}}
      - {{name: nvidia.com/gpu, nominalQuota: 2}}
---
apiVersion: v1
kind: Namespace
metadata: {{name: {NS}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{namespace: {NS}, name: q}}
spec: {{clusterQueue: bench-cq}}
"""


def until(check: Callable[[], Any], timeout: float = 300.0, every: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every)
    raise TimeoutError("gave up waiting")


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/api/version", timeout=2) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


def run_job(dashboard: str) -> float:
    from ray.job_submission import JobStatus, JobSubmissionClient

    start = time.monotonic()
    client = JobSubmissionClient(dashboard)
    job_id = client.submit_job(entrypoint=JOB)
    status = until(lambda: (s := client.get_job_status(job_id)).is_terminal() and s)
    if status != JobStatus.SUCCEEDED:
        raise RuntimeError(f"job ended {status}: {client.get_job_logs(job_id)[-500:]}")
    return time.monotonic() - start


def bare_round() -> dict[str, float]:
    tmp = tempfile.mkdtemp(prefix="rqbench-")
    gcs, dash = free_ports(2)
    args = [*ray_command(), "start", "--head", "--port", str(gcs), "--dashboard-host", "127.0.0.1",
            "--dashboard-port", str(dash), "--temp-dir", tmp, "--disable-usage-stats"]  # fmt: skip
    start = time.monotonic()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        proc.wait(timeout=300)
        returned = time.monotonic() - start
        until(lambda: answers(f"http://127.0.0.1:{dash}"))
        dashboard = time.monotonic() - start
        job = run_job(f"http://127.0.0.1:{dash}")
        mem = tree_memory(session_pids(proc.pid))
        return {
            "returned": returned,
            "dashboard": dashboard,
            "job": dashboard + job,
            "rss": mem["rss"],
            "pss": mem["pss"],
        }
    finally:
        _kill_session(proc.pid, 5.0)
        shutil.rmtree(tmp, ignore_errors=True)


def manager_round() -> dict[str, float]:
    """The head manager alone (no control plane): start -> ready -> first job."""
    head = RayHead(RayHeadSpec(num_cpus=2, num_gpus=2, label="bench"))
    start = time.monotonic()
    head.start()
    try:
        head.wait_ready()
        dashboard = time.monotonic() - start
        job = run_job(head.dashboard_url)
        mem = head.memory()
        return {"dashboard": dashboard, "job": dashboard + job, "rss": mem["rss"], "pss": mem["pss"]}
    finally:
        head.stop()


def cluster(name: str) -> dict[str, Any]:
    def template(container: str) -> dict[str, Any]:
        limits = {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": "1"}
        return {
            "spec": {
                "containers": [
                    {"name": container, "image": "rayproject/ray", "resources": {"limits": limits}}
                ]
            }
        }

    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": "q"}},
        "spec": {
            "headGroupSpec": {"rayStartParams": {}, "template": template("ray-head")},
            "workerGroupSpecs": [
                {
                    "groupName": "w",
                    "replicas": 1,
                    "minReplicas": 1,
                    "maxReplicas": 1,
                    "rayStartParams": {},
                    "template": template("w"),
                }
            ],
        },
    }


def control_plane_round(cp: LocalControlPlane, custom: Any, i: int) -> dict[str, float]:
    name = f"bench-{i}"

    def get() -> dict[str, Any]:
        return custom.get_namespaced_custom_object("ray.io", "v1", NS, "rayclusters", name)

    custom.create_namespaced_custom_object("ray.io", "v1", NS, "rayclusters", cluster(name))
    until(lambda: get()["spec"].get("suspend") is False, every=0.01)
    admitted = time.monotonic()
    ready = until(lambda: (rc := get()).get("status", {}).get("state") == "ready" and rc)
    ready_at = time.monotonic() - admitted
    dashboard_url = f"http://127.0.0.1:{ready['status']['endpoints']['dashboard']}"
    until(lambda: answers(dashboard_url))
    dashboard = time.monotonic() - admitted
    job = run_job(dashboard_url)
    handle = cp.ray_runtime.find(NS, name)
    mem = handle.memory() if handle is not None else {"rss": 0, "pss": 0}
    custom.delete_namespaced_custom_object("ray.io", "v1", NS, "rayclusters", name)
    until(lambda: cp.ray_runtime.find(NS, name) is None)
    return {
        "ready": ready_at,
        "dashboard": dashboard,
        "job": dashboard + job,
        "rss": mem["rss"],
        "pss": mem["pss"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--crd-dir", default=os.environ.get("RAYQUEUE_CRDS_DIR", str(ROOT.parent / "shared" / "crds"))
    )
    args = parser.parse_args()

    cp = LocalControlPlane(crd_dir=args.crd_dir, keda_enabled=False, prometheus_enabled=False)
    bare: list[dict[str, float]] = []
    alone: list[dict[str, float]] = []
    ours: list[dict[str, float]] = []
    with cp:
        cp.apply(QUEUE)
        custom = k8s.CustomObjectsApi(cp.api_client())
        for i in range(args.rounds):
            bare.append(bare_round())
            alone.append(manager_round())
            ours.append(control_plane_round(cp, custom, i))
            b, o = bare[-1]["dashboard"], ours[-1]["dashboard"]
            print(
                f"round {i + 1}: dashboard after {b:.1f} s (bare), {o:.1f} s (local control plane)",
                file=sys.stderr,
            )

    def med(rows: list[dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in rows)

    mib = 2**20
    title = f"KubeRay emulation vs bare `ray start --head` ({args.rounds} rounds, medians"
    print(f"{title}, {os.cpu_count()} cores)")
    print(f"  bare: `ray start --head` returned     {med(bare, 'returned'):6.1f} s")
    print(f"  bare: dashboard answers               {med(bare, 'dashboard'):6.1f} s")
    print(f"  bare: first job SUCCEEDED             {med(bare, 'job'):6.1f} s")
    print(f"  head manager alone: start -> ready    {med(alone, 'dashboard'):6.1f} s")
    print(f"  head manager alone: first job done    {med(alone, 'job'):6.1f} s")
    print(f"  ours: admission -> state ready        {med(ours, 'ready'):6.1f} s")
    print(f"  ours: admission -> dashboard answers  {med(ours, 'dashboard'):6.1f} s  "
          f"(overhead {med(ours, 'dashboard') - med(bare, 'dashboard'):+.1f} s)")  # fmt: skip
    print(f"  ours: admission -> first job SUCCEEDED {med(ours, 'job'):5.1f} s  "
          f"(overhead {med(ours, 'job') - med(bare, 'job'):+.1f} s)")  # fmt: skip
    rss, pss = med(ours, "rss") / mib, med(ours, "pss") / mib
    bare_rss, bare_pss = med(bare, "rss") / mib, med(bare, "pss") / mib
    print(f"  memory per running cluster: RSS summed {rss:.0f} MiB, PSS {pss:.0f} MiB")
    print(f"  memory of a bare head:      RSS summed {bare_rss:.0f} MiB, PSS {bare_pss:.0f} MiB")


if __name__ == "__main__":
    main()
