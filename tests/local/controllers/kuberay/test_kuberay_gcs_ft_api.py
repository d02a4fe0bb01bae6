"""gcsFaultToleranceOptions without Ray processes (fast): a password Secret that does not exist keeps the head
pod Pending in the kubelet's CreateContainerConfigError with its message, and the head starts once the
Secret is there (here at the RayCluster's next reconcile: the local KubeRay does not watch Secrets; a kubelet
retries by itself). The real-Redis restart is in tests/sdk/e2e/cluster/test_gcs_fault_tolerance.py.
"""

from __future__ import annotations

import base64
import uuid

from kuberay_helpers import queues, raycluster, wait_for
from kubernetes import client


def _head_pod(core: client.CoreV1Api, ns: str, name: str) -> dict | None:
    pods = core.list_namespaced_pod(ns, label_selector=f"ray.io/cluster={name},ray.io/node-type=head").items
    return client.ApiClient().sanitize_for_serialization(pods[0]) if pods else None


def test_a_missing_password_secret_holds_the_head_until_the_secret_exists(api_cp) -> None:
    ns = f"ft-{uuid.uuid4().hex[:6]}"
    queues(api_cp, ns)
    api = api_cp.api_client()
    custom, core = client.CustomObjectsApi(api), client.CoreV1Api(api)
    rc = raycluster("ft")
    rc["spec"]["gcsFaultToleranceOptions"] = {
        "redisAddress": "127.0.0.1:6390",
        "redisPassword": {"valueFrom": {"secretKeyRef": {"name": "redis-pw", "key": "password"}}},
    }
    custom.create_namespaced_custom_object("ray.io", "v1", ns, "rayclusters", rc)

    def waiting_reason() -> str | None:
        pod = _head_pod(core, ns, "ft")
        statuses = ((pod or {}).get("status") or {}).get("containerStatuses") or [{}]
        return ((statuses[0].get("state") or {}).get("waiting") or {}).get("message")

    message = wait_for(waiting_reason, lambda m: m is not None)
    assert message == 'secret "redis-pw" not found'
    pod = _head_pod(core, ns, "ft")
    assert pod["status"]["phase"] == "Pending"
    assert pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "CreateContainerConfigError"

    secret = {"password": base64.b64encode(b"s3cret").decode()}
    core.create_namespaced_secret(ns, {"metadata": {"name": "redis-pw"}, "data": secret})
    custom.patch_namespaced_custom_object(
        "ray.io", "v1", ns, "rayclusters", "ft", {"metadata": {"labels": {"x": "1"}}}
    )
    ready = wait_for(
        lambda: (_head_pod(core, ns, "ft") or {}).get("status", {}).get("phase"), lambda p: p == "Running"
    )
    assert ready == "Running"
    core.delete_namespace(ns)
