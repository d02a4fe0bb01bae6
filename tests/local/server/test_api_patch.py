"""Patches: JSON merge, JSON patch, strategic merge (built-in types only) and server-side apply."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes.client.rest import ApiException

RAY = ("ray.io", "v1")


def test_merge_patch_on_a_custom_object(custom: Any, namespace: str, raycluster: Any) -> None:
    custom.create_namespaced_custom_object(*RAY, namespace, "rayclusters", raycluster("m"))
    out = custom.patch_namespaced_custom_object(
        *RAY, namespace, "rayclusters", "m", {"metadata": {"labels": {"a": "b"}}, "spec": {"suspend": True}}
    )
    assert out["metadata"]["labels"] == {"a": "b"} and out["spec"]["suspend"] is True
    out = custom.patch_namespaced_custom_object(
        *RAY, namespace, "rayclusters", "m", {"spec": {"suspend": None}}
    )
    assert "suspend" not in out["spec"]


def test_json_patch(core: Any, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "j"}, "data": {"a": "1"}})
    ops = [{"op": "add", "path": "/data/b", "value": "2"}, {"op": "remove", "path": "/data/a"}]
    assert core.patch_namespaced_config_map("j", namespace, ops).data == {"b": "2"}
    with pytest.raises(ApiException) as err:
        core.patch_namespaced_config_map("j", namespace, [{"op": "test", "path": "/data/b", "value": "9"}])
    assert err.value.status == 422
    with pytest.raises(ApiException) as err:
        core.patch_namespaced_config_map("j", namespace, [{"op": "remove", "path": "/data/zzz"}])
    assert err.value.status == 422


def test_strategic_merge_patch_merges_containers_by_name(core: Any, namespace: str) -> None:
    pod = {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y:1"}]},
    }
    core.create_namespaced_pod(namespace, pod)
    out = core.patch_namespaced_pod("p", namespace, {"spec": {"containers": [{"name": "b", "image": "y:2"}]}})
    assert [(c.name, c.image) for c in out.spec.containers] == [("a", "x:1"), ("b", "y:2")]


def test_strategic_merge_patch_on_a_custom_resource_is_415(
    raw: Any, custom: Any, namespace: str, raycluster: Any
) -> None:
    custom.create_namespaced_custom_object(*RAY, namespace, "rayclusters", raycluster("s"))
    status, body, _ = raw.request(
        "PATCH",
        f"/apis/ray.io/v1/namespaces/{namespace}/rayclusters/s",
        '{"spec": {"suspend": true}}',
        content_type="application/strategic-merge-patch+json",
    )
    assert status == 415 and body["reason"] == "UnsupportedMediaType"
    status, _, _ = raw.request("GET", f"/apis/ray.io/v1/namespaces/{namespace}/rayclusters/s")
    assert status == 200


def test_server_side_apply_conflict_and_force(custom: Any, namespace: str, raycluster: Any) -> None:
    body = raycluster("ssa")
    out = custom.patch_namespaced_custom_object(
        *RAY,
        namespace,
        "rayclusters",
        "ssa",
        body,
        field_manager="alice",
        _content_type="application/apply-patch+yaml",
    )
    assert out["metadata"]["managedFields"][0]["manager"] == "alice"
    change = {**body, "spec": {**body["spec"], "rayVersion": "2.41.0"}}
    with pytest.raises(ApiException) as err:
        custom.patch_namespaced_custom_object(
            *RAY,
            namespace,
            "rayclusters",
            "ssa",
            change,
            field_manager="bob",
            _content_type="application/apply-patch+yaml",
        )
    assert err.value.status == 409
    status = json.loads(err.value.body)
    assert status["reason"] == "Conflict"
    assert any(c["field"] == ".spec.rayVersion" for c in status["details"]["causes"])
    forced = custom.patch_namespaced_custom_object(
        *RAY,
        namespace,
        "rayclusters",
        "ssa",
        change,
        field_manager="bob",
        force=True,
        _content_type="application/apply-patch+yaml",
    )
    assert forced["spec"]["rayVersion"] == "2.41.0"
    managers = {m["manager"] for m in forced["metadata"]["managedFields"]}
    assert "bob" in managers


def test_apply_yaml_body(raw: Any, namespace: str) -> None:
    doc = f"""
apiVersion: v1
kind: ConfigMap
metadata:
  name: from-yaml
  namespace: {namespace}
data:
  key: value
"""
    path = f"/api/v1/namespaces/{namespace}/configmaps/from-yaml?fieldManager=test"
    status, body, _ = raw.request("PATCH", path, doc, content_type="application/apply-patch+yaml")
    assert status in (200, 201) and body["data"] == {"key": "value"}


def test_apply_without_field_manager_is_rejected(raw: Any, namespace: str) -> None:
    doc = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "nofm"}}'
    status, body, _ = raw.request(
        "PATCH",
        f"/api/v1/namespaces/{namespace}/configmaps/nofm",
        doc,
        content_type="application/apply-patch+yaml",
    )
    assert status == 422 and body["reason"] == "Invalid"


def test_unknown_patch_content_type_is_415(raw: Any, core: Any, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "u"}})
    status, body, _ = raw.request(
        "PATCH", f"/api/v1/namespaces/{namespace}/configmaps/u", "{}", content_type="text/plain"
    )
    assert status == 415 and body["reason"] == "UnsupportedMediaType"


def test_merge_patch_with_stale_resource_version_is_409(core: Any, namespace: str) -> None:
    cm = core.create_namespaced_config_map(namespace, {"metadata": {"name": "rv"}})
    core.patch_namespaced_config_map("rv", namespace, {"data": {"a": "1"}})
    with pytest.raises(ApiException) as err:
        core.patch_namespaced_config_map(
            "rv",
            namespace,
            {"metadata": {"resourceVersion": cm.metadata.resource_version}, "data": {"a": "2"}},
        )
    assert err.value.status == 409
