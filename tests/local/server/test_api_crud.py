"""CRUD of core and custom objects: CoreV1Api, CustomObjectsApi, RBAC/Networking APIs, dynamic client."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

RAY = ("ray.io", "v1")


def test_configmap_lifecycle(core: Any, namespace: str) -> None:
    created = core.create_namespaced_config_map(namespace, {"metadata": {"name": "cfg"}, "data": {"a": "1"}})
    meta = created.metadata
    assert meta.uid and meta.resource_version and meta.creation_timestamp is not None
    got = core.read_namespaced_config_map("cfg", namespace)
    assert got.data == {"a": "1"} and got.metadata.uid == meta.uid
    got.data["b"] = "2"
    replaced = core.replace_namespaced_config_map("cfg", namespace, got)
    assert replaced.data == {"a": "1", "b": "2"}
    assert int(replaced.metadata.resource_version) > int(meta.resource_version)
    core.delete_namespaced_config_map("cfg", namespace)
    with pytest.raises(ApiException) as err:
        core.read_namespaced_config_map("cfg", namespace)
    assert err.value.status == 404
    assert json.loads(err.value.body)["message"] == 'configmaps "cfg" not found'


def test_secret_and_service_account(core: Any, namespace: str) -> None:
    core.create_namespaced_secret(namespace, {"metadata": {"name": "s"}, "stringData": {"token": "x"}})
    core.create_namespaced_service_account(namespace, {"metadata": {"name": "sa"}})
    assert [s.metadata.name for s in core.list_namespaced_secret(namespace).items] == ["s"]
    assert "sa" in [s.metadata.name for s in core.list_namespaced_service_account(namespace).items]


def test_create_twice_is_409_already_exists(core: Any, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "dup"}})
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map(namespace, {"metadata": {"name": "dup"}})
    assert err.value.status == 409
    assert json.loads(err.value.body)["reason"] == "AlreadyExists"


def test_stale_resource_version_is_409_conflict(core: Any, namespace: str) -> None:
    cm = core.create_namespaced_config_map(namespace, {"metadata": {"name": "c"}, "data": {"v": "0"}})
    stale = cm.metadata.resource_version
    cm.data = {"v": "1"}
    core.replace_namespaced_config_map("c", namespace, cm)
    cm.data = {"v": "2"}
    cm.metadata.resource_version = stale
    with pytest.raises(ApiException) as err:
        core.replace_namespaced_config_map("c", namespace, cm)
    assert err.value.status == 409
    assert json.loads(err.value.body)["reason"] == "Conflict"


def test_generate_name(core: Any, namespace: str) -> None:
    made = core.create_namespaced_config_map(namespace, {"metadata": {"generateName": "gen-"}})
    assert made.metadata.name.startswith("gen-") and len(made.metadata.name) == len("gen-") + 5


def test_custom_object_lifecycle(custom: Any, namespace: str, raycluster: Any) -> None:
    created = custom.create_namespaced_custom_object(*RAY, namespace, "rayclusters", raycluster("rc"))
    assert created["metadata"]["generation"] == 1
    assert created["apiVersion"] == "ray.io/v1" and created["kind"] == "RayCluster"
    got = custom.get_namespaced_custom_object(*RAY, namespace, "rayclusters", "rc")
    got["spec"]["workerGroupSpecs"][0]["replicas"] = 2
    replaced = custom.replace_namespaced_custom_object(*RAY, namespace, "rayclusters", "rc", got)
    assert replaced["metadata"]["generation"] == 2
    listed = custom.list_namespaced_custom_object(*RAY, namespace, "rayclusters")
    assert listed["kind"] == "RayClusterList"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["rc"]
    custom.delete_namespaced_custom_object(*RAY, namespace, "rayclusters", "rc")
    with pytest.raises(ApiException) as err:
        custom.get_namespaced_custom_object(*RAY, namespace, "rayclusters", "rc")
    assert err.value.status == 404


def test_cluster_scoped_custom_object(custom: Any) -> None:
    body = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "crud-flavor"},
        "spec": {"nodeLabels": {"gpu": "a100"}},
    }
    custom.create_cluster_custom_object("kueue.x-k8s.io", "v1beta2", "resourceflavors", body)
    got = custom.get_cluster_custom_object("kueue.x-k8s.io", "v1beta2", "resourceflavors", "crud-flavor")
    assert got["spec"]["nodeLabels"] == {"gpu": "a100"} and "namespace" not in got["metadata"]
    custom.delete_cluster_custom_object("kueue.x-k8s.io", "v1beta2", "resourceflavors", "crud-flavor")


def test_status_subresource(custom: Any, namespace: str, raycluster: Any) -> None:
    rc = raycluster("st")
    rc["status"] = {"state": "ignored"}
    created = custom.create_namespaced_custom_object(*RAY, namespace, "rayclusters", rc)
    assert "status" not in created  # status is a subresource: ignored on the main endpoint
    created["status"] = {"state": "ready", "readyWorkerReplicas": 1}
    updated = custom.replace_namespaced_custom_object_status(*RAY, namespace, "rayclusters", "st", created)
    assert updated["status"]["state"] == "ready"
    assert updated["metadata"]["generation"] == 1  # a status write does not bump the generation
    patched = custom.patch_namespaced_custom_object_status(
        *RAY, namespace, "rayclusters", "st", {"status": {"readyWorkerReplicas": 2}}
    )
    assert patched["status"] == {"state": "ready", "readyWorkerReplicas": 2}
    # spec changes on the status endpoint are ignored
    patched["spec"]["rayVersion"] = "9.9.9"
    again = custom.replace_namespaced_custom_object_status(*RAY, namespace, "rayclusters", "st", patched)
    assert again["spec"]["rayVersion"] == "2.40.0"
    read = custom.get_namespaced_custom_object_status(*RAY, namespace, "rayclusters", "st")
    assert read["status"]["readyWorkerReplicas"] == 2


def test_no_status_subresource_is_404(raw: Any, namespace: str, custom: Any) -> None:
    custom.create_namespaced_custom_object(
        "rbac.authorization.k8s.io", "v1", namespace, "roles", {"metadata": {"name": "r"}, "rules": []}
    )
    status, body, _ = raw.request(
        "GET", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles/r/status"
    )
    assert status == 404 and body["reason"] == "NotFound"
    status, _, _ = raw.request("GET", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles/r")
    assert status == 200


def test_finalizers_and_deletion_timestamp(custom: Any, raw: Any, namespace: str, raycluster: Any) -> None:
    rc = raycluster("fin")
    rc["metadata"]["finalizers"] = ["example.com/hold"]
    custom.create_namespaced_custom_object(*RAY, namespace, "rayclusters", rc)
    # Upstream answers 202 Accepted (with the object) when finalizers keep it
    status, deleting, _ = raw.request("DELETE", f"/apis/ray.io/v1/namespaces/{namespace}/rayclusters/fin")
    assert status == 202 and deleting["metadata"]["deletionTimestamp"]
    still = custom.get_namespaced_custom_object(*RAY, namespace, "rayclusters", "fin")
    assert still["metadata"]["deletionTimestamp"]
    custom.patch_namespaced_custom_object(
        *RAY, namespace, "rayclusters", "fin", {"metadata": {"finalizers": None}}
    )
    with pytest.raises(ApiException) as err:
        custom.get_namespaced_custom_object(*RAY, namespace, "rayclusters", "fin")
    assert err.value.status == 404


def test_owner_reference_garbage_collection(core: Any, namespace: str) -> None:
    owner = core.create_namespaced_config_map(namespace, {"metadata": {"name": "owner"}})
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid}
    core.create_namespaced_secret(namespace, {"metadata": {"name": "dep", "ownerReferences": [ref]}})
    core.delete_namespaced_config_map("owner", namespace)
    assert [s.metadata.name for s in core.list_namespaced_secret(namespace).items] == []


def test_delete_collection(core: Any, namespace: str) -> None:
    for name, team in [("a", "x"), ("b", "x"), ("c", "y")]:
        core.create_namespaced_config_map(namespace, {"metadata": {"name": name, "labels": {"team": team}}})
    core.delete_collection_namespaced_config_map(namespace, label_selector="team=x")
    names = [c.metadata.name for c in core.list_namespaced_config_map(namespace).items]
    assert names == ["c"]


def test_dry_run_stores_nothing(core: Any, namespace: str) -> None:
    made = core.create_namespaced_config_map(namespace, {"metadata": {"name": "dry"}}, dry_run="All")
    assert made.metadata.name == "dry"
    assert core.list_namespaced_config_map(namespace).items == []


def test_rbac_and_networking_apis(api_client: Any, namespace: str) -> None:
    rbac = client.RbacAuthorizationV1Api(api_client)
    role = {
        "metadata": {"name": "reader"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
    }
    rbac.create_namespaced_role(namespace, role)
    binding = {
        "metadata": {"name": "reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": namespace}],
    }
    rbac.create_namespaced_role_binding(namespace, binding)
    assert rbac.read_namespaced_role("reader", namespace).rules[0].verbs == ["get"]
    assert [b.metadata.name for b in rbac.list_namespaced_role_binding(namespace).items] == ["reader"]
    net = client.NetworkingV1Api(api_client)
    ingress = {
        "metadata": {"name": "dash"},
        "spec": {"rules": [{"host": "ray.local"}]},
    }
    net.create_namespaced_ingress(namespace, ingress)
    assert net.read_namespaced_ingress("dash", namespace).spec.rules[0].host == "ray.local"


def test_dynamic_client_crud(dyn: Any, namespace: str, raycluster: Any) -> None:
    api = dyn.resources.get(api_version="ray.io/v1", kind="RayCluster")
    api.create(body=raycluster("dyn"), namespace=namespace)
    got = api.get(name="dyn", namespace=namespace)
    assert got.metadata.name == "dyn"
    patched = api.patch(
        name="dyn",
        namespace=namespace,
        body={"metadata": {"labels": {"x": "y"}}},
        content_type="application/merge-patch+json",
    )
    assert patched.metadata.labels["x"] == "y"
    assert [i.metadata.name for i in api.get(namespace=namespace).items] == ["dyn"]
    api.delete(name="dyn", namespace=namespace)
    assert api.get(namespace=namespace).items == []


def test_namespace_deletion_removes_contents(core: Any) -> None:
    core.create_namespace({"metadata": {"name": "doomed-ns"}})
    core.create_namespaced_config_map("doomed-ns", {"metadata": {"name": "c"}})
    core.delete_namespace("doomed-ns")
    with pytest.raises(ApiException) as err:
        core.read_namespace("doomed-ns")
    assert err.value.status == 404
    with pytest.raises(ApiException) as err:
        core.read_namespaced_config_map("c", "doomed-ns")
    assert err.value.status == 404
