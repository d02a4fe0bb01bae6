"""Authentication (401), namespace-limited users (403 with the API server's message) and TLS verification."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

RAY = ("ray.io", "v1")


@pytest.fixture(scope="module")
def alice(cp: Any) -> Any:
    for ns in ("team-a", "team-b"):
        cp.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    token = cp.add_user("alice", ["team-a"])
    return cp.api_client(token)


def _status(err: pytest.ExceptionInfo[ApiException]) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(err.value.body)
    return body


@pytest.mark.parametrize("token", [None, "wrong-token"])
def test_missing_or_wrong_token_is_401(raw: Any, token: str | None) -> None:
    status, body, _ = raw.request("GET", "/api/v1/namespaces", token=token)
    assert status == 401
    assert body["kind"] == "Status" and body["reason"] == "Unauthorized" and body["code"] == 401
    status, _, _ = raw.request("GET", "/api/v1/namespaces")  # and the server keeps serving
    assert status == 200


@pytest.mark.parametrize(
    ("header", "expected"),
    [("bearer {t}", 200), ("BEARER {t}", 200), ("Basic {t}", 401), ("Bearer ", 401), ("{t}", 401)],
)
def test_the_bearer_scheme_is_case_insensitive(cp: Any, raw: Any, header: str, expected: int) -> None:
    """As on a real API server; the kubernetes client's in-cluster loader sends ``bearer``."""
    auth = {"Authorization": header.format(t=cp.token)}
    status, _, _ = raw.request("GET", "/api/v1/namespaces", token=None, headers=auth)
    assert status == expected


def test_wrong_token_through_the_client(cp: Any) -> None:
    api = client.CoreV1Api(cp.api_client("not-the-token"))
    with pytest.raises(ApiException) as err:
        api.list_namespace()
    assert err.value.status == 401


def test_user_manages_ray_objects_in_own_namespace(alice: Any, raycluster: Any) -> None:
    custom = client.CustomObjectsApi(alice)
    custom.create_namespaced_custom_object(*RAY, "team-a", "rayclusters", raycluster("mine"))
    custom.patch_namespaced_custom_object(
        *RAY, "team-a", "rayclusters", "mine", {"metadata": {"labels": {"a": "b"}}}
    )
    core = client.CoreV1Api(alice)
    core.create_namespaced_secret("team-a", {"metadata": {"name": "alice-secret"}})
    core.list_namespaced_pod("team-a")
    assert core.read_namespace("team-a").metadata.name == "team-a"
    custom.list_namespaced_custom_object("kueue.x-k8s.io", "v1beta2", "team-a", "localqueues")
    custom.list_cluster_custom_object("kueue.x-k8s.io", "v1beta2", "clusterqueues")
    custom.list_cluster_custom_object("kueue.x-k8s.io", "v1beta2", "workloadpriorityclasses")
    custom.delete_namespaced_custom_object(*RAY, "team-a", "rayclusters", "mine")


def test_user_cannot_write_in_another_namespace(alice: Any, raycluster: Any) -> None:
    custom = client.CustomObjectsApi(alice)
    with pytest.raises(ApiException) as err:
        custom.create_namespaced_custom_object(*RAY, "team-b", "rayclusters", raycluster("theirs"))
    assert err.value.status == 403
    status = _status(err)
    assert status["reason"] == "Forbidden"
    assert status["message"] == (
        'rayclusters.ray.io is forbidden: User "alice" cannot create resource "rayclusters" '
        'in API group "ray.io" in the namespace "team-b"'
    )
    assert status["details"] == {"group": "ray.io", "kind": "rayclusters"}


def test_user_cannot_write_cluster_queues(alice: Any) -> None:
    custom = client.CustomObjectsApi(alice)
    cq = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "mine"},
        "spec": {},
    }
    with pytest.raises(ApiException) as err:
        custom.create_cluster_custom_object("kueue.x-k8s.io", "v1beta2", "clusterqueues", cq)
    assert err.value.status == 403
    assert _status(err)["message"] == (
        'clusterqueues.kueue.x-k8s.io is forbidden: User "alice" cannot create resource "clusterqueues" '
        'in API group "kueue.x-k8s.io" at the cluster scope'
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda c: client.CustomObjectsApi(c).patch_namespaced_custom_object(
            "kueue.x-k8s.io", "v1beta2", "team-a", "workloads", "w", {"spec": {"active": False}}
        ),
        lambda c: client.CustomObjectsApi(c).list_namespaced_custom_object(
            "kueue.x-k8s.io", "v1beta2", "team-b", "localqueues"
        ),
        lambda c: client.CoreV1Api(c).read_namespace("team-b"),
        lambda c: client.CoreV1Api(c).list_namespace(),
        lambda c: client.CoreV1Api(c).create_namespaced_pod("team-a", {"metadata": {"name": "p"}}),
    ],
    ids=["patch-workload", "other-ns-queues", "other-namespace", "list-namespaces", "create-pod"],
)
def test_user_forbidden_operations(alice: Any, call: Any) -> None:
    with pytest.raises(ApiException) as err:
        call(alice)
    assert err.value.status == 403
    assert 'User "alice" cannot' in _status(err)["message"]


def test_named_object_in_the_message(alice: Any) -> None:
    with pytest.raises(ApiException) as err:
        client.CoreV1Api(alice).read_namespaced_secret("x", "team-b")
    assert _status(err)["message"].startswith(
        'secrets "x" is forbidden: User "alice" cannot get resource "secrets"'
    )
    assert _status(err)["details"] == {"name": "x", "group": "", "kind": "secrets"}


def test_policy_is_data_driven(cp: Any, alice: Any, raw: Any) -> None:
    from rayqueue_local.apiserver.auth import READ, Rule

    cp.add_route(
        "GET",
        r"/apis/example.com/v1/namespaces/(?P<namespace>[^/]+)/things/(?P<name>[^/]+)/peek",
        lambda match, query, user: (200, {"kind": "Peek", "name": match["name"], "user": user.name}),
        resource="things/peek.example.com",
        verb="get",
    )
    token = alice.configuration.api_key["authorization"]
    path = "/apis/example.com/v1/namespaces/team-a/things/t/peek"
    status, body, _ = raw.request("GET", path, token=token)
    assert status == 403
    assert body["message"] == (
        'things.example.com "t" is forbidden: User "alice" cannot get resource "things/peek" '
        'in API group "example.com" in the namespace "team-a"'
    )
    cp.auth.policy.add_rule(Rule("example.com", ("things/peek",), READ))
    status, body, _ = raw.request("GET", path, token=token)
    assert (status, body) == (200, {"kind": "Peek", "name": "t", "user": "alice"})
    status, _, _ = raw.request("GET", path.replace("team-a", "team-b"), token=token)
    assert status == 403


def test_tls_is_verified(cp: Any) -> None:
    config = client.Configuration()
    config.host = cp.server
    config.api_key = {"authorization": f"Bearer {cp.token}"}
    config.retries = False
    untrusting = client.CoreV1Api(client.ApiClient(config))  # no CA given: the system store does not know it
    with pytest.raises(ApiException) as err:
        untrusting.list_namespace()
    assert err.value.status == 0 and "CERTIFICATE_VERIFY_FAILED" in str(err.value.reason)


def test_tokens_never_in_reprs(cp: Any) -> None:
    token = cp.add_user("bob", ["team-b"])
    assert token not in repr(cp) and token not in repr(cp.auth)
    assert cp.token not in repr(cp.auth)


def test_tokens_never_logged(cp: Any, raw: Any, caplog: pytest.LogCaptureFixture) -> None:
    import logging

    token = cp.add_user("carol", ["team-a"])
    with caplog.at_level(logging.DEBUG, logger="rayqueue_local"):
        raw.request("GET", "/api/v1/namespaces/team-a/configmaps", token=token)
        raw.request("GET", "/api/v1/namespaces", token=token)  # 403
        raw.request("GET", "/api/v1/namespaces", token=token + "x")  # 401
        raw.request("GET", "/api/v1/namespaces")
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert caplog.records  # the server does log requests at DEBUG
    assert token not in text and cp.token not in text


def test_version_is_public(raw: Any) -> None:
    status, body, _ = raw.request("GET", "/version", token=None)
    assert status == 200 and body["major"] == "1"


def test_extra_routes_by_method(cp: Any, raw: Any) -> None:
    path = "/apis/example.com/v1/echo"
    cp.add_route(
        "GET",
        path,
        lambda m, q, u: (200, {"kind": "Echo", "method": "GET"}),
        resource="echo.example.com",
        verb="get",
    )
    cp.add_route(
        "POST",
        path,
        lambda m, q, u: (201, {"kind": "Echo", "method": "POST"}),
        resource="echo.example.com",
        verb="create",
    )
    assert raw.request("GET", path)[:2] == (200, {"kind": "Echo", "method": "GET"})
    assert raw.request("POST", path, "{}")[:2] == (201, {"kind": "Echo", "method": "POST"})
    status, body, _ = raw.request("DELETE", path)
    assert status == 405 and body["reason"] == "MethodNotAllowed"
    status, body, _ = raw.request("GET", path, token="wrong")
    assert status == 401
