"""Write helpers of the kube layer against the local control plane: apply, create, patch, delete,
and Workload deactivation, as a limited user where a data scientist would do it."""

from __future__ import annotations

import pytest
from sdk_helpers import NS, OTHER_NS, cond, raycluster, workload

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk.errors import AlreadyExistsError, ApiError, ForbiddenError, NotFoundError
from rayqueue_sdk.kube.resources import (
    RAYCLUSTERS,
    apply_object,
    create_object,
    delete_object,
    find_workload,
    get_raycluster,
    kueue_kind,
    patch_object,
    set_workload_active,
)


def test_apply_is_idempotent_and_create_says_already_exists(
    plane: LocalControlPlane, user_token: str
) -> None:
    api = plane.api_client(user_token)
    first = apply_object(api, RAYCLUSTERS, raycluster("applied"))
    again = apply_object(api, RAYCLUSTERS, raycluster("applied"))
    assert first["metadata"]["uid"] == again["metadata"]["uid"]
    managers = [m.get("manager") for m in again["metadata"].get("managedFields") or []]
    assert "rayqueue-sdk" in managers
    with pytest.raises(AlreadyExistsError):
        create_object(api, RAYCLUSTERS, raycluster("applied"))


def test_invalid_manifest_is_422_with_causes(plane: LocalControlPlane, user_token: str) -> None:
    body = raycluster("broken")
    del body["spec"]["headGroupSpec"]
    with pytest.raises(ApiError) as info:
        create_object(plane.api_client(user_token), RAYCLUSTERS, body)
    assert info.value.status == 422 and info.value.reason == "Invalid"
    assert "headGroupSpec" in str(info.value)


def test_forbidden_namespace_names_verb_and_resource(plane: LocalControlPlane, user_token: str) -> None:
    body = raycluster("elsewhere")
    body["metadata"]["namespace"] = OTHER_NS
    with pytest.raises(ForbiddenError) as info:
        apply_object(plane.api_client(user_token), RAYCLUSTERS, body)
    assert (info.value.verb, info.value.resource, info.value.namespace) == (
        "patch",
        "rayclusters.ray.io",
        OTHER_NS,
    )


def test_delete_twice_is_safe(plane: LocalControlPlane, user_token: str) -> None:
    api = plane.api_client(user_token)
    create_object(api, RAYCLUSTERS, raycluster("short-lived"))
    assert delete_object(api, RAYCLUSTERS, "short-lived", NS) is True
    assert delete_object(api, RAYCLUSTERS, "short-lived", NS) is False
    with pytest.raises(NotFoundError):
        get_raycluster(api, NS, "short-lived")


def test_set_workload_active(plane: LocalControlPlane) -> None:
    api = plane.api_client()
    rc = create_object(api, RAYCLUSTERS, raycluster("pausable"))
    with pytest.raises(NotFoundError):
        set_workload_active(api, NS, rc["metadata"]["uid"], False)
    create_object(api, kueue_kind(api, "workloads"), workload(rc))
    assert set_workload_active(api, NS, rc["metadata"]["uid"], False)["spec"]["active"] is False
    found = find_workload(api, NS, rc["metadata"]["uid"])
    assert found is not None and found["spec"]["active"] is False
    name = found["metadata"]["name"]
    status = patch_object(
        api,
        kueue_kind(api, "workloads"),
        name,
        {"status": {"conditions": [cond("QuotaReserved", "False", "Pending", "x")]}},
        NS,
        status=True,
    )
    assert status["status"]["conditions"][0]["reason"] == "Pending"
    assert set_workload_active(api, NS, rc["metadata"]["uid"], True)["spec"]["active"] is True
