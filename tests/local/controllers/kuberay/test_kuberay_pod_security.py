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
from rayqueue_sdk import Cluster, ClusterConfiguration


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
