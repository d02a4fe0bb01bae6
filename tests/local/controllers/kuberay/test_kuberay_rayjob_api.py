"""RayJob's deployment state machine through the real kubernetes client (jobs simulated, no Ray)."""

from __future__ import annotations

import re
import uuid

import pytest
from kuberay_helpers import queues, rayjob, wait_for
from kubernetes import client


@pytest.fixture
def ns(api_cp) -> str:
    name = f"rj-{uuid.uuid4().hex[:6]}"
    queues(api_cp, name)
    return name


@pytest.fixture
def custom(api_cp):
    return client.CustomObjectsApi(api_cp.api_client())


def get_job(custom, ns, name):
    return custom.get_namespaced_custom_object("ray.io", "v1", ns, "rayjobs", name)


def clusters(custom, ns):
    return custom.list_namespaced_custom_object("ray.io", "v1", ns, "rayclusters")["items"]


def test_job_owned_cluster_runs_to_complete_and_is_deleted(custom, ns):
    custom.create_namespaced_custom_object(
        "ray.io", "v1", ns, "rayjobs", rayjob("train", "python x.py", jobId="my-id")
    )
    running = wait_for(
        lambda: get_job(custom, ns, "train"),
        lambda j: (j.get("status") or {}).get("jobDeploymentStatus") == "Running",
    )
    status = running["status"]
    assert status["jobId"] == "my-id" and status["jobStatus"] == "RUNNING"
    assert re.fullmatch(r"train-[a-z0-9]{5}", status["rayClusterName"])
    assert status["dashboardURL"].startswith("127.0.0.1:") and "://" not in status["dashboardURL"]
    assert status["rayClusterStatus"]["state"] == "ready"
    owned = [c for c in clusters(custom, ns) if c["metadata"]["name"] == status["rayClusterName"]]
    assert owned and owned[0]["metadata"]["ownerReferences"][0]["kind"] == "RayJob"
    assert owned[0]["metadata"]["labels"]["ray.io/originated-from-crd"] == "RayJob"

    done = wait_for(
        lambda: get_job(custom, ns, "train"), lambda j: j["status"]["jobDeploymentStatus"] == "Complete"
    )
    assert done["status"]["jobStatus"] == "SUCCEEDED" and done["status"]["succeeded"] == 1
    assert done["status"]["startTime"] and done["status"]["endTime"]
    assert wait_for(lambda: clusters(custom, ns), lambda items: not items) == []


def test_active_deadline_fails_the_job(custom, ns):
    job = rayjob("slow", "python x.py", activeDeadlineSeconds=1)
    custom.create_namespaced_custom_object("ray.io", "v1", ns, "rayjobs", job)
    done = wait_for(
        lambda: get_job(custom, ns, "slow"),
        lambda j: (j.get("status") or {}).get("jobDeploymentStatus") == "Failed",
    )
    assert done["status"]["reason"] == "DeadlineExceeded"
    assert "has passed the activeDeadlineSeconds" in done["status"]["message"]


def test_suspension_under_kueue_deletes_the_cluster_and_resumes_with_a_new_one(custom, api_cp, ns):
    assert api_cp.options.simulated_job_seconds == 2.0  # the fixture's: long enough to suspend it running
    custom.create_namespaced_custom_object("ray.io", "v1", ns, "rayjobs", rayjob("pausable", "python x.py"))
    first = wait_for(
        lambda: get_job(custom, ns, "pausable"),
        lambda j: (j.get("status") or {}).get("jobDeploymentStatus") == "Running",
    )
    first_cluster = first["status"]["rayClusterName"]
    workload = custom.list_namespaced_custom_object("kueue.x-k8s.io", "v1beta2", ns, "workloads")["items"][0]
    name = workload["metadata"]["name"]
    custom.patch_namespaced_custom_object(
        "kueue.x-k8s.io", "v1beta2", ns, "workloads", name, {"spec": {"active": False}}
    )
    suspended = wait_for(
        lambda: get_job(custom, ns, "pausable"), lambda j: j["status"]["jobDeploymentStatus"] == "Suspended"
    )
    assert suspended["spec"]["suspend"] is True
    assert "rayClusterName" not in suspended["status"] and suspended["status"]["jobStatus"] == ""
    assert wait_for(lambda: clusters(custom, ns), lambda items: not items) == []

    custom.patch_namespaced_custom_object(
        "kueue.x-k8s.io", "v1beta2", ns, "workloads", name, {"spec": {"active": True}}
    )
    resumed = wait_for(
        lambda: get_job(custom, ns, "pausable"),
        lambda j: j["status"].get("rayClusterName") and j["status"]["jobDeploymentStatus"] == "Running",
    )
    assert resumed["status"]["rayClusterName"] != first_cluster
    done = wait_for(
        lambda: get_job(custom, ns, "pausable"), lambda j: j["status"]["jobDeploymentStatus"] == "Complete"
    )
    assert done["status"]["jobStatus"] == "SUCCEEDED"


@pytest.mark.slow
def test_the_cluster_outlives_the_job_by_the_ttl(custom, ns):
    custom.create_namespaced_custom_object("ray.io", "v1", ns, "rayjobs", rayjob("ttl", "python x.py", ttl=6))
    done = wait_for(
        lambda: get_job(custom, ns, "ttl"),
        lambda j: (j.get("status") or {}).get("jobDeploymentStatus") == "Complete",
    )
    name = done["status"]["rayClusterName"]
    assert [c["metadata"]["name"] for c in clusters(custom, ns)] == [name]  # kept for the TTL (6 s)
    assert wait_for(lambda: clusters(custom, ns), lambda items: not items) == []
    assert get_job(custom, ns, "ttl")["status"]["jobDeploymentStatus"] == "Complete"  # the RayJob stays


def test_a_runtime_env_that_is_not_a_mapping_fails_validation(custom, ns):
    # KubeRay v1.7.0 ValidateRayJobSpec unmarshals runtimeEnvYAML into a map before anything runs
    job = rayjob("badenv", "python x.py", runtimeEnvYAML="- not\n- a mapping\n")
    custom.create_namespaced_custom_object("ray.io", "v1", ns, "rayjobs", job)
    done = wait_for(
        lambda: get_job(custom, ns, "badenv"),
        lambda j: (j.get("status") or {}).get("jobDeploymentStatus") == "ValidationFailed",
    )
    assert done["status"]["reason"] == "ValidationFailed"
    assert done["status"]["message"].startswith("failed to unmarshal RuntimeEnvYAML")
    assert clusters(custom, ns) == []
