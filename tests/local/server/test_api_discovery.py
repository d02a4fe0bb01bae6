"""Discovery: /version, /api, /apis, group and resource lists, as the kubernetes client reads them."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client


def test_version_and_health(raw: Any) -> None:
    status, body, _ = raw.request("GET", "/version")
    assert status == 200 and body["major"] == "1" and body["gitVersion"].startswith("v1.")
    for path in ("/healthz", "/readyz", "/livez"):
        status, body, _ = raw.request("GET", path, token=None)
        assert (status, body) == (200, "ok")


def test_version_through_the_client(api_client: Any) -> None:
    info = client.VersionApi(api_client).get_code()
    assert info.major == "1"


def test_core_and_group_lists(api_client: Any) -> None:
    versions = client.CoreApi(api_client).get_api_versions()
    assert versions.versions == ["v1"]
    groups = {g.name: g for g in client.ApisApi(api_client).get_api_versions().groups}
    for name in ("ray.io", "kueue.x-k8s.io", "keda.sh", "rbac.authorization.k8s.io", "networking.k8s.io"):
        assert name in groups
    kueue = groups["kueue.x-k8s.io"]
    assert kueue.preferred_version.version == "v1beta2"
    assert {v.version for v in kueue.versions} == {"v1beta1", "v1beta2"}


def test_core_resources_list_verbs_and_subresources(core: Any) -> None:
    resources = {r.name: r for r in core.get_api_resources().resources}
    for name in ("namespaces", "secrets", "configmaps", "services", "pods", "serviceaccounts", "events"):
        assert name in resources
    assert resources["namespaces"].namespaced is False
    assert resources["pods"].namespaced is True
    assert "watch" in resources["secrets"].verbs
    assert "pods/status" in resources


def test_custom_group_version_resources(raw: Any) -> None:
    status, body, _ = raw.request("GET", "/apis/ray.io/v1")
    assert status == 200 and body["kind"] == "APIResourceList" and body["groupVersion"] == "ray.io/v1"
    names = {r["name"]: r for r in body["resources"]}
    assert names["rayclusters"]["kind"] == "RayCluster"
    assert "rayclusters/status" in names
    status, body, _ = raw.request("GET", "/apis/kueue.x-k8s.io")
    assert status == 200 and body["kind"] == "APIGroup"
    assert body["preferredVersion"]["version"] == "v1beta2"


@pytest.mark.parametrize("path", ["/apis/ray.io/v9", "/apis/nope.example.com", "/api/v2", "/nothing/here"])
def test_unknown_group_or_version_is_404(raw: Any, path: str) -> None:
    status, body, _ = raw.request("GET", path)
    assert status == 404
    assert body["kind"] == "Status" and body["reason"] == "NotFound"
    assert body["message"] == "the server could not find the requested resource"


def test_dynamic_client_discovers_every_resource(dyn: Any) -> None:
    for api_version, kind in [
        ("v1", "Namespace"),
        ("v1", "ConfigMap"),
        ("ray.io/v1", "RayCluster"),
        ("ray.io/v1", "RayJob"),
        ("kueue.x-k8s.io/v1beta2", "Workload"),
        ("kueue.x-k8s.io/v1beta1", "ClusterQueue"),
        ("keda.sh/v1alpha1", "ScaledObject"),
        ("rbac.authorization.k8s.io/v1", "Role"),
        ("networking.k8s.io/v1", "Ingress"),
    ]:
        resource = dyn.resources.get(api_version=api_version, kind=kind)
        assert resource.kind == kind
    assert dyn.resources.get(api_version="ray.io/v1", kind="RayCluster").subresources["status"]
