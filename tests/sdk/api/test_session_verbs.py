"""The session's writes against the local control plane: apply, create, patch, delete, and Workload
deactivation (:mod:`rayqueue_sdk.kube.lookups`), as a limited user where a data scientist would do it."""

from __future__ import annotations

import pytest
from sdk_helpers import NS, OTHER_NS, cond, raycluster, workload

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk.errors import AlreadyExistsError, ApiError, ForbiddenError, NotFoundError
from rayqueue_sdk.kube.kinds import RAYCLUSTERS, kind_of
from rayqueue_sdk.kube.lookups import find_workload, set_workload_active
from rayqueue_sdk.kube.session import KubeSession


def test_apply_is_idempotent_and_create_says_already_exists(
    plane: LocalControlPlane, user_token: str
) -> None:
    session = KubeSession(plane.api_client(user_token))
    first = session.apply(RAYCLUSTERS, raycluster("applied"))
    again = session.apply(RAYCLUSTERS, raycluster("applied"))
    assert first["metadata"]["uid"] == again["metadata"]["uid"]
    managers = [m.get("manager") for m in again["metadata"].get("managedFields") or []]
    assert "rayqueue-sdk" in managers
    with pytest.raises(AlreadyExistsError):
        session.create(RAYCLUSTERS, raycluster("applied"))


def test_invalid_manifest_is_422_with_causes(plane: LocalControlPlane, user_token: str) -> None:
    body = raycluster("broken")
    del body["spec"]["headGroupSpec"]
    with pytest.raises(ApiError) as info:
        KubeSession(plane.api_client(user_token)).create(RAYCLUSTERS, body)
    assert info.value.status == 422 and info.value.reason == "Invalid"
    assert "headGroupSpec" in str(info.value)


def test_forbidden_namespace_names_verb_and_resource(plane: LocalControlPlane, user_token: str) -> None:
    body = raycluster("elsewhere")
    body["metadata"]["namespace"] = OTHER_NS
    with pytest.raises(ForbiddenError) as info:
        KubeSession(plane.api_client(user_token)).apply(RAYCLUSTERS, body)
    assert (info.value.verb, info.value.resource, info.value.namespace) == (
        "patch",
        "rayclusters.ray.io",
        OTHER_NS,
    )


def test_delete_twice_is_safe(plane: LocalControlPlane, user_token: str) -> None:
    session = KubeSession(plane.api_client(user_token))
    session.create(RAYCLUSTERS, raycluster("short-lived"))
    assert session.delete(RAYCLUSTERS, name="short-lived", namespace=NS) is True
    assert session.delete(RAYCLUSTERS, name="short-lived", namespace=NS) is False
    with pytest.raises(NotFoundError):
        session.get(RAYCLUSTERS, name="short-lived", namespace=NS)


def test_set_workload_active(plane: LocalControlPlane) -> None:
    session = KubeSession(plane.api_client())
    rc = session.create(RAYCLUSTERS, raycluster("pausable"))
    uid = rc["metadata"]["uid"]
    with pytest.raises(NotFoundError):
        set_workload_active(session, owner_uid=uid, active=False, namespace=NS)
    session.create(session.kueue_kind("workloads"), workload(rc))
    assert set_workload_active(session, owner_uid=uid, active=False, namespace=NS)["spec"]["active"] is False
    found = find_workload(session, owner_uid=uid, namespace=NS)
    assert found is not None and found["spec"]["active"] is False
    name = found["metadata"]["name"]
    status = session.patch(
        session.kueue_kind("workloads"),
        name=name,
        patch={"status": {"conditions": [cond("QuotaReserved", "False", "Pending", "x")]}},
        namespace=NS,
        status=True,
    )
    assert status["status"]["conditions"][0]["reason"] == "Pending"
    assert set_workload_active(session, owner_uid=uid, active=True, namespace=NS)["spec"]["active"] is True


def test_list_follows_continue_tokens_to_the_last_page(plane: LocalControlPlane) -> None:
    session = KubeSession(plane.api_client(), namespace=NS)
    configmaps = kind_of({"apiVersion": "v1", "kind": "ConfigMap"})
    names = [f"paged-{i}" for i in range(5)]
    for name in names:
        session.create(
            configmaps,
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"paged": "yes"}}},
        )
    found = session.list(configmaps, label_selector="paged=yes", page_size=2)
    assert sorted(o["metadata"]["name"] for o in found) == names
    assert found.resource_version
