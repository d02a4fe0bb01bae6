"""KubeRay in a namespace that enforces Pod Security "restricted" (no Ray processes, fast): a RayCluster
whose head pod the admission refuses starts nothing and says why as KubeRay does (Warning Event
``FailedToCreateHeadPod``, condition ``ReplicaFailure``/``FailedCreateHeadPod`` with the admission's
words); once its templates comply (the SDK's ``pod_security="restricted"``) it runs."""

from __future__ import annotations

import uuid
from typing import Any

from kuberay_helpers import queues, wait_for
from kubernetes import client

from rayqueue_local import LocalControlPlane
from rayqueue_sdk import Cluster, ClusterConfiguration, ManagedClusterConfig, RayJob


def _manifest(ns: str, **extra: Any) -> dict[str, Any]:
    config = ClusterConfiguration(name="psa", namespace=ns, num_workers=1, **extra)
    manifest = Cluster(config).to_dict()
    manifest["metadata"].setdefault("labels", {}).pop("kueue.x-k8s.io/queue-name", None)  # no queue
    return manifest


def test_a_refused_head_starts_nothing_until_the_templates_comply(api_cp: LocalControlPlane) -> None:
    ns = f"psa-{uuid.uuid4().hex[:6]}"
    queues(api_cp, ns)
    nsobj = api_cp.store.get("namespaces", None, ns)
    nsobj["metadata"]["labels"] = {
        **(nsobj["metadata"].get("labels") or {}),
        "pod-security.kubernetes.io/enforce": "restricted",
    }
    api_cp.store.update("namespaces", nsobj)
    api = api_cp.api_client()
    custom, core = client.CustomObjectsApi(api), client.CoreV1Api(api)
    custom.create_namespaced_custom_object("ray.io", "v1", ns, "rayclusters", _manifest(ns))

    def rc() -> dict[str, Any]:
        return dict(custom.get_namespaced_custom_object("ray.io", "v1", ns, "rayclusters", "psa"))

    def failure(obj: dict[str, Any]) -> dict[str, Any]:
        conds = (obj.get("status") or {}).get("conditions") or []
        return next((c for c in conds if c["type"] == "ReplicaFailure"), {})

    refused = wait_for(rc, lambda o: failure(o).get("status") == "True")
    cond = failure(refused)
    assert cond["reason"] == "FailedCreateHeadPod"
    assert cond["message"].startswith('pods "psa-head-')
    assert 'violates PodSecurity "restricted:latest"' in cond["message"]
    assert (refused.get("status") or {}).get("state") != "ready"
    assert core.list_namespaced_pod(ns).items == []
    handle = api_cp.ray_runtime.find(ns, "psa") if api_cp.ray_runtime is not None else None
    assert handle is None or (handle.state, handle.reason, handle.head) == (
        "failed",
        "FailedCreateHeadPod",
        None,
    )
    events = [e for e in core.list_namespaced_event(ns).items if e.reason == "FailedToCreateHeadPod"]
    assert events and events[0].type == "Warning" and "Failed to create head Pod" in events[0].message

    fixed = _manifest(ns, pod_security="restricted")
    current = rc()
    current["spec"] = fixed["spec"]
    custom.replace_namespaced_custom_object("ray.io", "v1", ns, "rayclusters", "psa", current)
    ready = wait_for(rc, lambda o: (o.get("status") or {}).get("state") == "ready")
    assert not failure(ready) or failure(ready).get("status") != "True"
    pods = core.list_namespaced_pod(ns, label_selector="ray.io/cluster=psa").items
    assert len(pods) == 2 and all(p.spec.security_context.run_as_non_root for p in pods)
    custom.delete_namespaced_custom_object("ray.io", "v1", ns, "rayclusters", "psa")


def _restricted_ns(cp: LocalControlPlane, stem: str) -> str:
    ns = f"{stem}-{uuid.uuid4().hex[:6]}"
    queues(cp, ns)
    nsobj = cp.store.get("namespaces", None, ns)
    nsobj["metadata"]["labels"] = {
        **(nsobj["metadata"].get("labels") or {}),
        "pod-security.kubernetes.io/enforce": "restricted",
    }
    cp.store.update("namespaces", nsobj)
    return ns


def _sdk_rayjob(ns: str) -> dict[str, Any]:
    cluster = ManagedClusterConfig(num_workers=1, pod_security="restricted")
    job = RayJob(
        job_name="psa-job",
        entrypoint="python x.py",
        cluster_config=cluster,
        namespace=ns,
        local_queue="user-queue",
    )
    return job.to_dict()


def test_an_sdk_rayjob_runs_in_a_restricted_namespace_its_submitter_pod_included(
    api_cp: LocalControlPlane,
) -> None:
    """Issue 34: the SDK's RayJob with pod_security="restricted" has every pod admitted, KubeRay's
    submitter pod included; the same RayJob with KubeRay's default submitter has that pod refused."""
    api = api_cp.api_client()
    custom, core = client.CustomObjectsApi(api), client.CoreV1Api(api)

    def status(ns: str) -> dict[str, Any]:
        job = custom.get_namespaced_custom_object("ray.io", "v1", ns, "rayjobs", "psa-job")
        return dict(job.get("status") or {})

    ns = _restricted_ns(api_cp, "psa-job")
    custom.create_namespaced_custom_object("ray.io", "v1", ns, "rayjobs", _sdk_rayjob(ns))
    done = wait_for(lambda: status(ns), lambda s: s.get("jobDeploymentStatus") in ("Complete", "Failed"))
    assert (done["jobDeploymentStatus"], done["jobStatus"]) == ("Complete", "SUCCEEDED"), done.get("message")
    submitters = core.list_namespaced_pod(ns, label_selector="batch.kubernetes.io/job-name=psa-job").items
    assert len(submitters) == 1 and submitters[0].spec.security_context.run_as_non_root is True
    assert submitters[0].spec.containers[0].security_context.allow_privilege_escalation is False
    assert [e for e in core.list_namespaced_event(ns).items if e.reason.startswith("FailedCreate")] == []

    # the control: the cluster complies, the submitter is KubeRay's default (no template)
    plain = _restricted_ns(api_cp, "psa-plain")
    manifest = _sdk_rayjob(plain)
    del manifest["spec"]["submitterPodTemplate"]
    custom.create_namespaced_custom_object("ray.io", "v1", plain, "rayjobs", manifest)
    refused = wait_for(
        lambda: [e for e in core.list_namespaced_event(plain).items if e.reason == "FailedCreate"], bool
    )
    assert refused[0].type == "Warning" and refused[0].involved_object.kind == "RayJob"
    assert refused[0].message.startswith('Error creating: pods "psa-job-')
    assert 'violates PodSecurity "restricted:latest"' in refused[0].message
    assert core.list_namespaced_pod(plain, label_selector="batch.kubernetes.io/job-name=psa-job").items == []
    assert status(plain)["jobDeploymentStatus"] == "Initializing"
    for name in (ns, plain):
        custom.delete_namespaced_custom_object("ray.io", "v1", name, "rayjobs", "psa-job")
