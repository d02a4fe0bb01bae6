"""RayCluster behaviour through the real kubernetes client, without Ray processes (fast)."""

from __future__ import annotations

import uuid

import pytest
from kuberay_helpers import queues, raycluster, wait_for
from kubernetes import client


@pytest.fixture
def ns(api_cp) -> str:
    name = f"rc-{uuid.uuid4().hex[:6]}"
    queues(api_cp, name)
    return name


@pytest.fixture
def apis(api_cp):
    api = api_cp.api_client()
    return client.CustomObjectsApi(api), client.CoreV1Api(api)


def get_rc(custom, ns, name):
    return custom.get_namespaced_custom_object("ray.io", "v1", ns, "rayclusters", name)


def conditions(obj) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in (obj.get("status") or {}).get("conditions", [])}


def test_admitted_cluster_gets_pods_service_and_ready_status(apis, ns):
    custom, core = apis
    custom.create_namespaced_custom_object(
        "ray.io", "v1", ns, "rayclusters", raycluster("demo", workers=2, gpus=1)
    )
    rc = wait_for(
        lambda: get_rc(custom, ns, "demo"), lambda o: (o.get("status") or {}).get("state") == "ready"
    )
    status = rc["status"]
    assert rc["spec"]["suspend"] is False  # Kueue admitted it
    assert conditions(rc) == {
        "HeadPodReady": ("True", "HeadPodRunningAndReady"),
        "RayClusterProvisioned": ("True", "AllPodRunningAndReadyFirstTime"),
        "RayClusterSuspended": ("False", "RayClusterSuspended"),
        "RayClusterSuspending": ("False", "RayClusterSuspending"),
    }
    assert status["desiredWorkerReplicas"] == 2 and status["readyWorkerReplicas"] == 2
    assert status["minWorkerReplicas"] == 2 and status["maxWorkerReplicas"] == 2
    assert status["desiredGPU"] == "3" and status["desiredCPU"] == "3"
    assert status["head"]["serviceName"] == "demo-head-svc" and status["head"]["podIP"] == "127.0.0.1"
    assert set(status["endpoints"]) == {"client", "dashboard", "gcs-server", "metrics"}
    assert status["observedGeneration"] == rc["metadata"]["generation"]

    pods = core.list_namespaced_pod(ns, label_selector="ray.io/cluster=demo").items
    heads = [p for p in pods if p.metadata.labels["ray.io/node-type"] == "head"]
    workers = [p for p in pods if p.metadata.labels["ray.io/node-type"] == "worker"]
    assert len(heads) == 1 and heads[0].metadata.name.startswith("demo-head-")
    assert status["head"]["podName"] == heads[0].metadata.name
    assert len(workers) == 2 and all(p.metadata.name.startswith("demo-small-worker-") for p in workers)
    assert {p.metadata.labels["ray.io/group"] for p in workers} == {"small"}
    assert all(p.status.phase == "Running" for p in pods)
    assert all(p.metadata.owner_references[0].kind == "RayCluster" for p in pods)
    svc = core.read_namespaced_service("demo-head-svc", ns)
    assert svc.spec.cluster_ip == "None" and {p.name for p in svc.spec.ports} >= {"client", "dashboard"}


def test_queued_cluster_stays_suspended_without_pods(apis, api_cp, ns):
    custom, core = apis
    queues(api_cp, ns, gpu=1)  # quota of one GPU: a 3-GPU cluster never fits
    custom.create_namespaced_custom_object(
        "ray.io", "v1", ns, "rayclusters", raycluster("big", workers=2, gpus=1)
    )
    rc = wait_for(
        lambda: get_rc(custom, ns, "big"), lambda o: (o.get("status") or {}).get("state") == "suspended"
    )
    assert rc["spec"]["suspend"] is True
    assert conditions(rc)["RayClusterSuspended"] == ("True", "RayClusterSuspended")
    assert conditions(rc)["HeadPodReady"] == ("False", "HeadPodNotFound")
    assert core.list_namespaced_pod(ns).items == []
    assert core.read_namespaced_service("big-head-svc", ns).metadata.name == "big-head-svc"


def test_deactivating_the_workload_suspends_deletes_pods_and_keeps_the_service(apis, ns):
    custom, core = apis
    custom.create_namespaced_custom_object("ray.io", "v1", ns, "rayclusters", raycluster("evicted"))
    wait_for(lambda: get_rc(custom, ns, "evicted"), lambda o: (o.get("status") or {}).get("state") == "ready")
    workload = custom.list_namespaced_custom_object("kueue.x-k8s.io", "v1beta2", ns, "workloads")["items"][0]
    custom.patch_namespaced_custom_object(
        "kueue.x-k8s.io",
        "v1beta2",
        ns,
        "workloads",
        workload["metadata"]["name"],
        {"spec": {"active": False}},
    )
    rc = wait_for(
        lambda: get_rc(custom, ns, "evicted"), lambda o: (o.get("status") or {}).get("state") == "suspended"
    )
    assert rc["spec"]["suspend"] is True
    assert conditions(rc)["RayClusterSuspended"] == ("True", "RayClusterSuspended")
    assert conditions(rc)["RayClusterProvisioned"] == ("False", "RayClusterPodsProvisioning")
    assert core.list_namespaced_pod(ns, label_selector="ray.io/cluster=evicted").items == []
    assert core.read_namespaced_service("evicted-head-svc", ns)


def test_worker_replicas_follow_the_spec_and_delete_cleans_up(apis, ns):
    custom, core = apis
    custom.create_namespaced_custom_object(
        "ray.io", "v1", ns, "rayclusters", raycluster("free", queue=None, workers=1)
    )
    wait_for(lambda: get_rc(custom, ns, "free"), lambda o: (o.get("status") or {}).get("state") == "ready")
    groups = get_rc(custom, ns, "free")["spec"]["workerGroupSpecs"]
    groups[0].update(replicas=3, maxReplicas=3)
    custom.patch_namespaced_custom_object(
        "ray.io", "v1", ns, "rayclusters", "free", {"spec": {"workerGroupSpecs": groups}}
    )

    def workers():
        return core.list_namespaced_pod(
            ns, label_selector="ray.io/cluster=free,ray.io/node-type=worker"
        ).items

    assert len(wait_for(workers, lambda items: len(items) == 3)) == 3
    custom.delete_namespaced_custom_object("ray.io", "v1", ns, "rayclusters", "free")
    assert wait_for(lambda: core.list_namespaced_pod(ns).items, lambda items: not items) == []
    assert wait_for(lambda: core.list_namespaced_service(ns).items, lambda items: not items) == []


def test_a_status_write_for_a_cluster_deleted_mid_reconcile_is_dropped_quietly(api_cp, apis, ns, caplog):
    """A quick apply/down: the controller read the RayCluster, then it was deleted before its status was
    written. The write finds nothing (404) and is dropped, not logged as a failed reconcile."""
    custom, _core = apis
    custom.create_namespaced_custom_object("ray.io", "v1", ns, "rayclusters", raycluster("gone", workers=0))
    stale = get_rc(custom, ns, "gone")
    custom.delete_namespaced_custom_object("ray.io", "v1", ns, "rayclusters", "gone")
    wait_for(
        lambda: [
            i["metadata"]["name"]
            for i in custom.list_namespaced_custom_object("ray.io", "v1", ns, "rayclusters")["items"]
        ],
        lambda names: "gone" not in names,
    )
    controller = next(c for c in api_cp.controllers if c.name == "kuberay-raycluster")
    stale["status"] = {}  # differs from what it writes, so the write is attempted
    with caplog.at_level("DEBUG", logger="rayqueue_local.controllers.kuberay.raycluster"):
        controller._write_status(stale, [], None, False)
    assert any("is gone" in r.getMessage() for r in caplog.records)
