"""Ray's own autoscaler under Kueue's elastic Workload slices (issue 36, part 1).

An elastic, autoscaling RayCluster runs its head only (``replicas: 0``, ``minReplicas: 0``). A Ray task
that needs the worker group's custom resource makes Ray's KubeRay autoscaler patch ``replicas`` to 1;
with the quota taken by another Workload the scale-up waits as a new Workload slice (Kueue's reason and
message) and the worker Pod stays gated; once the quota is free the slice is admitted, the old slice is
``Finished``/``WorkloadSliceReplaced``, a real Ray worker node joins and runs the task. When the worker
is idle for ``idleTimeoutSeconds`` the autoscaler removes it (``workersToDelete``) and the Workload
shrinks in place: the ClusterQueue's usage goes back to the head's.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from kuberay_helpers import queues, raycluster, wait_for

from rayqueue_sdk import get_cluster

pytestmark = [pytest.mark.ray, pytest.mark.slow]

KUEUE = "kueue.x-k8s.io/v1beta2"


def _workloads(cp: Any, ns: str) -> list[dict[str, Any]]:
    return cp.store.list("workloads.kueue.x-k8s.io", ns)


def _condition(obj: dict[str, Any], ctype: str) -> dict[str, Any]:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == ctype), {})


def _cq_cpu(cp: Any, cq: str) -> str:
    obj = cp.store.get("clusterqueues.kueue.x-k8s.io", None, cq)
    for flavor in (obj.get("status") or {}).get("flavorsUsage") or []:
        for res in flavor.get("resources") or []:
            if res["name"] == "cpu":
                return str(res.get("total"))
    return ""


def _blocker(ns: str) -> dict[str, Any]:
    container = {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1500m"}}}
    return {
        "apiVersion": KUEUE,
        "kind": "Workload",
        "metadata": {"name": "blocker", "namespace": ns},
        "spec": {
            "queueName": "user-queue",
            "podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [container]}}}],
        },
    }


def test_autoscaled_cluster_grows_as_a_queued_slice_and_shrinks_returning_quota(ray_cp) -> None:
    from ray.job_submission import JobSubmissionClient

    cp = ray_cp
    ns = f"slc-{uuid.uuid4().hex[:6]}"
    cq = f"cq-{ns}"
    queues(cp, ns, cpu=3)
    rc = raycluster("elastic", workers=0)
    rc["metadata"]["namespace"] = ns
    rc["metadata"]["annotations"] = {"kueue.x-k8s.io/elastic-job": "true"}
    rc["spec"]["enableInTreeAutoscaling"] = True
    rc["spec"]["autoscalerOptions"] = {"idleTimeoutSeconds": 5}
    group = rc["spec"]["workerGroupSpecs"][0]
    group.update({"minReplicas": 0, "maxReplicas": 2, "rayStartParams": {"resources": '"{\\"wk\\": 1}"'}})
    cp.apply(rc)

    def cluster() -> dict[str, Any]:
        return cp.store.get("rayclusters.ray.io", ns, "elastic")

    ready = wait_for(cluster, lambda o: (o.get("status") or {}).get("state") == "ready", timeout=300)
    assert ready["status"].get("state") == "ready", ready.get("status")
    assert "InTreeAutoscaling" not in {c["type"] for c in ready["status"]["conditions"]}
    assert _cq_cpu(cp, cq) == "1500m"  # the head and its autoscaler sidecar (500m, as KubeRay adds it)

    cp.apply(_blocker(ns))  # takes the rest of the ClusterQueue's CPUs
    wait_for(lambda: _cq_cpu(cp, cq), lambda v: v == "3")
    assert _cq_cpu(cp, cq) == "3"

    dashboard = f"http://127.0.0.1:{ready['status']['endpoints']['dashboard']}"
    script = (
        "import ray; ray.init(); "
        "f = ray.remote(resources={'wk': 1}, num_cpus=1)(lambda: ray.get_runtime_context().get_node_id()); "
        "print('ran on', ray.get(f.remote()))"
    )
    job = JobSubmissionClient(dashboard).submit_job(entrypoint=f'python -c "{script}"')

    # Ray's autoscaler asks for a worker; Kueue makes it a slice that waits for the blocker's quota
    grown = wait_for(cluster, lambda o: o["spec"]["workerGroupSpecs"][0].get("replicas") == 1, timeout=240)
    assert grown["spec"]["workerGroupSpecs"][0]["replicas"] == 1

    def pending_slice() -> dict[str, Any]:
        for wl in _workloads(cp, ns):
            if "kueue.x-k8s.io/workload-slice-replacement-for" in (wl["metadata"].get("annotations") or {}):
                return wl
        return {}

    waiting = wait_for(pending_slice, lambda wl: _condition(wl, "QuotaReserved").get("reason") == "Pending")
    reserved = _condition(waiting, "QuotaReserved")
    assert reserved.get("status") == "False", waiting.get("status")
    assert "insufficient unused quota for cpu in flavor default-flavor, 1 more needed" in reserved["message"]
    # the gated worker Pod, once the scheduler has written why it waits (it is created first, then
    # its PodScheduled condition is written: reading it between the two found no condition yet)
    worker_pods = wait_for(
        lambda: cp.store.list("pods", ns, label_selector="ray.io/node-type=worker"),
        lambda pods: len(pods) == 1 and bool(_condition(pods[0], "PodScheduled")),
    )
    assert len(worker_pods) == 1 and worker_pods[0]["spec"].get("schedulingGates")
    assert _condition(worker_pods[0], "PodScheduled").get("reason") == "SchedulingGated"
    assert cluster()["status"].get("state") == "ready"  # the cluster runs on at its admitted size
    seen = get_cluster("elastic", ns, client=cp.api_client()).status()  # what the SDK says meanwhile
    assert seen.ready and seen.scaling is not None, seen
    assert (seen.scaling.desired, seen.scaling.running, seen.scaling.waiting) == (1, 0, True)
    assert seen.scaling.slice == waiting["metadata"]["name"] and seen.scaling.queue == "user-queue"
    assert "scale-up waits in queue 'user-queue'" in seen.explanation
    assert "insufficient unused quota" in seen.explanation
    assert seen.to_dict()["scaling"]["reason"] == "Pending"

    cp.store.delete("workloads.kueue.x-k8s.io", ns, "blocker")  # the quota frees up
    admitted = wait_for(pending_slice, lambda wl: _condition(wl, "Admitted").get("status") == "True")
    assert _condition(admitted, "Admitted").get("status") == "True", admitted.get("status")
    (psa,) = [p for p in admitted["status"]["admission"]["podSetAssignments"] if p["name"] == "small"]
    assert psa["count"] == 1
    old_key = admitted["metadata"]["annotations"]["kueue.x-k8s.io/workload-slice-replacement-for"]
    old = cp.store.get("workloads.kueue.x-k8s.io", ns, old_key.split("/", 1)[1])
    assert (_condition(old, "Finished").get("status"), _condition(old, "Finished").get("reason")) == (
        "True",
        "WorkloadSliceReplaced",
    )
    assert _cq_cpu(cp, cq) == "2500m"  # head + one worker, held by the new slice alone

    client = JobSubmissionClient(dashboard)
    status = wait_for(lambda: str(client.get_job_status(job)), lambda s: s in ("SUCCEEDED", "FAILED"), 300)
    assert status == "SUCCEEDED", client.get_job_logs(job)
    running = wait_for(
        lambda: cp.store.list("pods", ns, label_selector="ray.io/node-type=worker"),
        lambda pods: pods and (pods[0].get("status") or {}).get("phase") == "Running",
    )
    assert running and running[0]["status"]["podIP"].startswith("127.1.")

    # idle for idleTimeoutSeconds: the autoscaler removes the worker, the Workload shrinks in place
    shrunk = wait_for(cluster, lambda o: o["spec"]["workerGroupSpecs"][0].get("replicas") == 0, timeout=240)
    assert shrunk["spec"]["workerGroupSpecs"][0]["replicas"] == 0
    wait_for(lambda: _cq_cpu(cp, cq), lambda v: v == "1500m")
    assert _cq_cpu(cp, cq) == "1500m"
    current = cp.store.get("workloads.kueue.x-k8s.io", ns, admitted["metadata"]["name"])
    assert _condition(current, "Admitted").get("status") == "True"
    (psa,) = [p for p in current["status"]["admission"]["podSetAssignments"] if p["name"] == "small"]
    assert psa["count"] == 0
    gone = wait_for(
        lambda: cp.store.list("pods", ns, label_selector="ray.io/node-type=worker"), lambda p: not p
    )
    assert gone == []
    seen = get_cluster("elastic", ns, client=cp.api_client()).status()
    assert seen.scaling is not None and (seen.scaling.desired, seen.scaling.waiting) == (0, False)
    cp.store.delete("rayclusters.ray.io", ns, "elastic")
