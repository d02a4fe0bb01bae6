"""A Deployment in a namespace that enforces Pod Security "restricted": a violating pod template is
reported as upstream's ReplicaSet controller reports it (Warning Event ``FailedCreate``, condition
``ReplicaFailure``, the admission's words), and once the template complies the pod is made and runs."""

from __future__ import annotations

import uuid
from typing import Any

from kubernetes import client
from pods_helpers import eventually

from rayqueue_local import LocalControlPlane
from rayqueue_sdk.manifests.security import make_restricted


def test_a_refused_pod_is_failed_create_until_the_template_complies(pods_cp: LocalControlPlane) -> None:
    ns = f"psa-{uuid.uuid4().hex[:6]}"
    labels = {"pod-security.kubernetes.io/enforce": "restricted"}
    pods_cp.store.create("namespaces", {"metadata": {"name": ns, "labels": labels}})
    api = pods_cp.api_client()
    apps, core = client.AppsV1Api(api), client.CoreV1Api(api)
    pod_spec = {"containers": [{"name": "c", "image": "x", "command": ["sleep", "300"]}]}
    apps.create_namespaced_deployment(
        ns,
        {
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod_spec},
            },
        },
    )

    def failure(d: Any) -> Any:
        conds = {c.type: c for c in (d.status.conditions if d.status else None) or []}
        return conds.get("ReplicaFailure")

    deploy = eventually(lambda: apps.read_namespaced_deployment("web", ns), lambda d: failure(d) is not None)
    cond = failure(deploy)
    assert (cond.status, cond.reason) == ("True", "FailedCreate")
    assert 'is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false' in (
        cond.message
    )
    events = core.list_namespaced_event(ns).items
    assert any(
        e.reason == "FailedCreate" and e.type == "Warning" and e.message.startswith("Error creating: pods ")
        for e in events
    )
    assert core.list_namespaced_pod(ns).items == []

    # the same pod, made to comply as the SDK makes its own pods: admitted, run, and the failure clears
    apps.patch_namespaced_deployment("web", ns, {"spec": {"template": {"spec": make_restricted(pod_spec)}}})
    deploy = eventually(
        lambda: apps.read_namespaced_deployment("web", ns),
        lambda d: d.status is not None and d.status.ready_replicas == 1 and failure(d) is None,
    )
    pod = core.list_namespaced_pod(ns, label_selector="app=web").items[0]
    assert pod.spec.containers[0].security_context.capabilities.drop == ["ALL"]
    apps.delete_namespaced_deployment("web", ns)
    pods_cp.store.delete("namespaces", None, ns)


def test_a_jobs_refused_pod_is_failed_create_on_the_job(pods_cp: LocalControlPlane) -> None:
    """The Job controller reports a refused pod as upstream's does (Warning ``FailedCreate`` on the Job)
    and makes no pod; KubeRay's submitter Job in a restricted namespace takes this path."""
    ns = f"psa-{uuid.uuid4().hex[:6]}"
    labels = {"pod-security.kubernetes.io/enforce": "restricted"}
    pods_cp.store.create("namespaces", {"metadata": {"name": ns, "labels": labels}})
    api = pods_cp.api_client()
    batch, core = client.BatchV1Api(api), client.CoreV1Api(api)
    pod_spec = {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x", "command": ["true"]}]}
    batch.create_namespaced_job(
        ns, {"metadata": {"name": "submit"}, "spec": {"template": {"spec": pod_spec}}}
    )
    events = eventually(
        lambda: [e for e in core.list_namespaced_event(ns).items if e.reason == "FailedCreate"], bool
    )
    assert events[0].type == "Warning" and events[0].involved_object.kind == "Job"
    assert events[0].message.startswith('Error creating: pods "submit-')
    assert 'violates PodSecurity "restricted:latest"' in events[0].message
    assert core.list_namespaced_pod(ns).items == []
    batch.delete_namespaced_job("submit", ns)
    pods_cp.store.delete("namespaces", None, ns)
