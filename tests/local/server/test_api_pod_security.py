"""Pod Security admission on the local API server, over HTTPS with the real ``kubernetes`` client.

A namespace labelled ``pod-security.kubernetes.io/enforce: restricted`` refuses a pod that violates the
profile with upstream's 403 and words; the pods the SDK writes for its idle reaper, and a RayCluster's
head and workers with ``pod_security="restricted"``, are admitted; namespaces without the label are not
checked (the plane's default is unchanged).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from rayqueue_sdk import Cluster, ClusterConfiguration, IdlePolicy
from rayqueue_sdk.manifests.scaling import reaper_objects


@pytest.fixture
def core(api_client: Any) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


def _labelled(cp: Any, namespace: str, level: str, version: str | None = None) -> str:
    labels = {"pod-security.kubernetes.io/enforce": level}
    if version:
        labels["pod-security.kubernetes.io/enforce-version"] = version
    ns = cp.store.get("namespaces", None, namespace)
    ns["metadata"]["labels"] = {**(ns["metadata"].get("labels") or {}), **labels}
    cp.store.update("namespaces", ns)
    return namespace


@pytest.fixture
def restricted(cp: Any, namespace: str) -> Iterator[str]:
    yield _labelled(cp, namespace, "restricted")


def _pod(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def _refusal(core: client.CoreV1Api, namespace: str, pod: dict[str, Any]) -> dict[str, Any]:
    with pytest.raises(ApiException) as info:
        core.create_namespaced_pod(namespace, pod)
    assert info.value.status == 403
    body: dict[str, Any] = json.loads(info.value.body)
    return body


def test_a_plain_pod_is_refused_with_every_violation_named(core: client.CoreV1Api, restricted: str) -> None:
    pod = _pod("plain", {"containers": [{"name": "main", "image": "busybox"}]})
    body = _refusal(core, restricted, pod)
    assert body["reason"] == "Forbidden" and body["code"] == 403
    assert body["message"] == (
        'pods "plain" is forbidden: violates PodSecurity "restricted:latest": '
        'allowPrivilegeEscalation != false (container "main" must set '
        "securityContext.allowPrivilegeEscalation=false), "
        'unrestricted capabilities (container "main" must set securityContext.capabilities.drop=["ALL"]), '
        'runAsNonRoot != true (pod or container "main" must set securityContext.runAsNonRoot=true), '
        'seccompProfile (pod or container "main" must set securityContext.seccompProfile.type to '
        '"RuntimeDefault" or "Localhost")'
    )
    assert core.list_namespaced_pod(restricted).items == []


def test_one_missing_setting_is_enough_to_refuse(core: client.CoreV1Api, restricted: str) -> None:
    container = {
        "name": "c",
        "image": "busybox",
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"], "add": ["SYS_ADMIN"]},
            "runAsNonRoot": True,
            "runAsUser": 0,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }
    body = _refusal(core, restricted, _pod("root", {"containers": [container]}))
    assert 'must not include "SYS_ADMIN" in securityContext.capabilities.add' in body["message"]
    assert 'runAsUser=0 (container "c" must not set runAsUser=0)' in body["message"]
    assert "allowPrivilegeEscalation" not in body["message"]


def test_the_reapers_pod_and_restricted_ray_pods_are_admitted(
    core: client.CoreV1Api, restricted: str
) -> None:
    objs = reaper_objects(
        IdlePolicy(idle_minutes=5),
        cluster="ws",
        namespace=restricted,
        groups=["g"],
        image="rayproject/ray:2.41.0",
        agent_source="",
        workload="raycluster-ws-1a2b3",
    )
    agent_spec = objs[-1]["spec"]["template"]["spec"]
    agent_spec["volumes"] = [{"name": "agent", "emptyDir": {}}]  # no ConfigMap needed to admit a pod
    created = core.create_namespaced_pod(restricted, _pod("agent", agent_spec))
    assert created.spec.security_context.run_as_non_root is True

    config = ClusterConfiguration(name="ws", namespace=restricted, num_workers=1, pod_security="restricted")
    rc = Cluster(config).to_dict()["spec"]
    core.create_namespaced_pod(restricted, _pod("head", rc["headGroupSpec"]["template"]["spec"]))
    core.create_namespaced_pod(restricted, _pod("worker", rc["workerGroupSpecs"][0]["template"]["spec"]))

    # without the option the SDK's head pod is refused there: the option is what makes it pass
    plain = Cluster(ClusterConfiguration(name="ws", namespace=restricted)).to_dict()["spec"]
    body = _refusal(core, restricted, _pod("plain-head", plain["headGroupSpec"]["template"]["spec"]))
    assert 'container "ray-head" must set securityContext.allowPrivilegeEscalation=false' in body["message"]


def test_namespaces_without_the_label_and_baseline_ones(
    cp: Any, core: client.CoreV1Api, namespace: str
) -> None:
    pod = _pod("plain", {"containers": [{"name": "main", "image": "busybox"}]})
    core.create_namespaced_pod(namespace, pod)  # no label: not checked
    _labelled(cp, namespace, "baseline", "v1.30")
    core.create_namespaced_pod(namespace, _pod("plain-2", pod["spec"]))  # baseline allows it
    host = _pod("host", {"hostNetwork": True, "containers": [{"name": "main", "image": "busybox"}]})
    body = _refusal(core, namespace, host)
    assert body["message"] == (
        'pods "host" is forbidden: violates PodSecurity "baseline:v1.30": host namespaces (hostNetwork=true)'
    )
