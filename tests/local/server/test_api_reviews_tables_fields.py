"""Issue 15 (items 2, 3, 6, 9) through the real ``kubernetes`` client and raw HTTPS: the review APIs,
Table output, fieldValidation and CRD defaults, and the smaller protocol details."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

RAY = ("ray.io", "v1")
TABLE = ",".join(
    [
        "application/json;as=Table;v=v1;g=meta.k8s.io",
        "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
        "application/json",
    ]
)


@pytest.fixture(scope="module")
def dana(cp: Any) -> tuple[str, Any]:
    """A user limited to the namespace ``dana-ns`` (token, ApiClient)."""
    cp.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "dana-ns"}})
    token = cp.add_user("dana", ["dana-ns"])
    return token, cp.api_client(token)


# -- item 2: authentication and authorization reviews ------------------------------------------------
def test_token_review_answers_valid_and_invalid_tokens(api_client: Any, dana: tuple[str, Any]) -> None:
    authn = client.AuthenticationV1Api(api_client)
    good = authn.create_token_review(client.V1TokenReview(spec=client.V1TokenReviewSpec(token=dana[0])))
    assert good.status.authenticated is True
    assert good.status.user.username == "dana" and good.status.user.groups == ["system:authenticated"]
    bad = authn.create_token_review(client.V1TokenReview(spec=client.V1TokenReviewSpec(token="not-a-token")))
    assert not bad.status.authenticated and not bad.status.user.username


def test_token_review_needs_create_permission_and_a_token(raw: Any, dana: tuple[str, Any]) -> None:
    review = client.V1TokenReview(spec=client.V1TokenReviewSpec(token=dana[0]))
    with pytest.raises(ApiException) as err:
        client.AuthenticationV1Api(dana[1]).create_token_review(review)
    assert err.value.status == 403 and "tokenreviews.authentication.k8s.io is forbidden" in err.value.body
    status, body, _ = raw.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", '{"spec": {}}')
    assert status == 400 and body["message"] == "token is required for TokenReview in authentication"


def _ssar(api: Any, namespace: str, verb: str, resource: str, group: str = "ray.io") -> bool:
    attrs = client.V1ResourceAttributes(namespace=namespace, verb=verb, group=group, resource=resource)
    review = client.V1SelfSubjectAccessReview(
        spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=attrs)
    )
    return bool(client.AuthorizationV1Api(api).create_self_subject_access_review(review).status.allowed)


def test_self_subject_access_review_follows_the_enforced_policy(
    dana: tuple[str, Any], raycluster: Any
) -> None:
    api = dana[1]
    assert _ssar(api, "dana-ns", "create", "rayclusters") is True
    assert _ssar(api, "default", "create", "rayclusters") is False
    assert _ssar(api, "dana-ns", "create", "workloads", group="kueue.x-k8s.io") is False
    custom = client.CustomObjectsApi(api)  # and the server does what the review said
    custom.create_namespaced_custom_object(*RAY, "dana-ns", "rayclusters", raycluster("allowed"))
    with pytest.raises(ApiException) as err:
        custom.create_namespaced_custom_object(*RAY, "default", "rayclusters", raycluster("denied"))
    assert err.value.status == 403


def test_subject_access_review_and_rules_review(api_client: Any, dana: tuple[str, Any]) -> None:
    authz = client.AuthorizationV1Api(api_client)
    attrs = client.V1ResourceAttributes(
        namespace="dana-ns", verb="delete", group="ray.io", resource="rayjobs"
    )
    sar = client.V1SubjectAccessReview(
        spec=client.V1SubjectAccessReviewSpec(user="dana", resource_attributes=attrs)
    )
    assert authz.create_subject_access_review(sar).status.allowed is True
    sar.spec.user = "nobody"
    assert authz.create_subject_access_review(sar).status.allowed is False
    rules = client.AuthorizationV1Api(dana[1]).create_self_subject_rules_review(
        client.V1SelfSubjectRulesReview(spec=client.V1SelfSubjectRulesReviewSpec(namespace="dana-ns"))
    )
    ray = [r for r in rules.status.resource_rules if "rayclusters" in r.resources]
    assert ray and "create" in ray[0].verbs and ray[0].api_groups == ["ray.io"]
    assert any("/version" in r.non_resource_urls for r in rules.status.non_resource_rules)


def test_access_review_needs_exactly_one_kind_of_attributes(raw: Any) -> None:
    status, body, _ = raw.request(
        "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json.dumps({"spec": {}})
    )
    assert status == 422 and body["reason"] == "Invalid"
    assert "exactly one of nonResourceAttributes or resourceAttributes must be specified" in body["message"]


def test_reviews_are_create_only_and_listed_in_discovery(raw: Any) -> None:
    status, body, _ = raw.request("GET", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
    assert status == 405 and body["kind"] == "Status"
    _, doc, _ = raw.request("GET", "/apis/authentication.k8s.io/v1")
    verbs = {r["name"]: r["verbs"] for r in doc["resources"]}
    assert verbs == {"tokenreviews": ["create"], "selfsubjectreviews": ["create"]}


# -- item 3: Table output ----------------------------------------------------------------------------
def test_table_for_a_custom_resource_has_the_crd_columns(
    cp: Any, raw: Any, namespace: str, raycluster: Any
) -> None:
    obj = cp.store.create(
        "rayclusters.ray.io",
        {
            **raycluster("tbl", labels={"team": "a"}),
            "metadata": {"name": "tbl", "namespace": namespace, "labels": {"team": "a"}},
        },
    )
    obj["status"] = {"state": "ready", "desiredWorkerReplicas": 2, "desiredCPU": "3"}
    cp.store.update_status("rayclusters.ray.io", obj)
    status, table, _ = raw.request(
        "GET", f"/apis/ray.io/v1/namespaces/{namespace}/rayclusters", headers={"Accept": TABLE}
    )
    assert status == 200 and table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    columns = [c["name"] for c in table["columnDefinitions"]]
    assert columns[:3] == ["Name", "desired workers", "available workers"] and "status" in columns
    assert {c["name"]: c["priority"] for c in table["columnDefinitions"]}["head pod IP"] == 1
    row = dict(zip(columns, table["rows"][0]["cells"], strict=True))
    assert (row["Name"], row["desired workers"], row["status"], row["cpus"]) == ("tbl", 2, "ready", "3")
    assert row["available workers"] is None and row["age"].endswith("s")
    partial = table["rows"][0]["object"]
    assert partial["kind"] == "PartialObjectMetadata" and partial["metadata"]["labels"] == {"team": "a"}


def test_table_for_built_ins_and_include_object(api_client: Any, raw: Any, namespace: str) -> None:
    client.CoreV1Api(api_client).create_namespaced_config_map(
        namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="cm"), data={"a": "1", "b": "2"})
    )
    path = f"/api/v1/namespaces/{namespace}/configmaps/cm?includeObject=Object"
    status, table, _ = raw.request("GET", path, headers={"Accept": TABLE})
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert table["rows"][0]["cells"][:2] == ["cm", 2] and table["rows"][0]["object"]["data"] == {
        "a": "1",
        "b": "2",
    }
    status, body, _ = raw.request(
        "GET", path, headers={"Accept": "application/json;as=Table;v=v9;g=meta.k8s.io"}
    )
    assert status == 406 and body["reason"] == "NotAcceptable"


def test_table_through_the_client_with_the_accept_header(cp: Any, api_client: Any, namespace: str) -> None:
    response = api_client.call_api(
        "GET",
        f"{cp.server}/api/v1/namespaces/{namespace}/pods",
        header_params={"Authorization": f"Bearer {cp.token}", "Accept": TABLE},
    )
    response.read()
    table = json.loads(response.data)
    assert table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]][:5] == [
        "Name",
        "Ready",
        "Status",
        "Restarts",
        "Age",
    ]


# -- item 6: fieldValidation and defaults -------------------------------------------------------------
def test_strict_field_validation_refuses_unknown_and_duplicate_fields(
    custom: Any, raw: Any, namespace: str, raycluster: Any
) -> None:
    body = raycluster("strict")
    body["spec"]["foo"] = 1
    with pytest.raises(ApiException) as err:
        custom.create_namespaced_custom_object(
            *RAY, namespace, "rayclusters", body, field_validation="Strict"
        )
    assert err.value.status == 400
    assert json.loads(err.value.body)["message"] == (
        'RayCluster in version "v1" cannot be handled as a RayCluster: strict decoding error: '
        'unknown field "spec.foo"'
    )
    text = json.dumps(raycluster("dupe"))
    text = text.replace('"rayVersion": "2.40.0"', '"rayVersion": "2.40.0", "rayVersion": "2.41.0"')
    path = f"/apis/ray.io/v1/namespaces/{namespace}/rayclusters?fieldValidation=Strict"
    status, answer, _ = raw.request("POST", path, text)
    assert status == 400 and 'duplicate field "spec.rayVersion"' in answer["message"]
    status, answer, _ = raw.request("POST", path.replace("Strict", "Bogus"), text)
    assert status == 422 and 'fieldValidation: Unsupported value: "Bogus"' in answer["message"]


def test_warn_and_ignore_drop_unknown_fields(raw: Any, namespace: str, raycluster: Any) -> None:
    body = raycluster("warned")
    body["spec"]["foo"] = 1
    base = f"/apis/ray.io/v1/namespaces/{namespace}/rayclusters"
    status, created, resp = raw.request("POST", base, json.dumps(body))  # Warn is the default
    assert status == 201 and "foo" not in created["spec"]
    assert resp.getheader("Warning") == '299 - "unknown field \\"spec.foo\\""'
    body["metadata"]["name"] = "ignored"
    status, created, resp = raw.request("POST", base + "?fieldValidation=Ignore", json.dumps(body))
    assert status == 201 and "foo" not in created["spec"] and resp.getheader("Warning") is None
    status, answer, _ = raw.request(
        "PATCH",
        base + "/ignored?fieldValidation=Strict",
        json.dumps({"spec": {"bar": 1}}),
        content_type="application/merge-patch+json",
    )
    assert status == 400 and answer["message"] == 'strict decoding error: unknown field "spec.bar"'


def test_crd_defaults_are_applied(custom: Any) -> None:
    cq = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "defaulted-cq"},
        "spec": {"namespaceSelector": {}, "resourceGroups": []},
    }
    created = custom.create_cluster_custom_object("kueue.x-k8s.io", "v1beta2", "clusterqueues", cq)
    try:
        assert created["spec"]["queueingStrategy"] == "BestEffortFIFO"
        assert created["spec"]["preemption"]["withinClusterQueue"] == "Never"
        assert created["spec"]["stopPolicy"] == "None"
    finally:
        custom.delete_cluster_custom_object("kueue.x-k8s.io", "v1beta2", "clusterqueues", "defaulted-cq")


# -- item 9: protocol details ---------------------------------------------------------------------------
def test_a_wrong_token_cannot_read_version(raw: Any) -> None:
    assert raw.request("GET", "/version", token=None)[0] == 200
    status, body, _ = raw.request("GET", "/version", token="wrong")
    assert status == 401 and body["reason"] == "Unauthorized"


def test_resource_version_match(raw: Any, api_client: Any, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    meta = client.V1ObjectMeta(name="rv")
    first = core.create_namespaced_config_map(namespace, client.V1ConfigMap(metadata=meta, data={"v": "1"}))
    core.patch_namespaced_config_map("rv", namespace, {"data": {"v": "2"}})
    rv = first.metadata.resource_version
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    _, exact, _ = raw.request("GET", f"{base}?resourceVersion={rv}&resourceVersionMatch=Exact")
    assert exact["metadata"]["resourceVersion"] == rv and exact["items"][0]["data"] == {"v": "1"}
    _, newer, _ = raw.request("GET", f"{base}?resourceVersion={rv}&resourceVersionMatch=NotOlderThan")
    assert newer["items"][0]["data"] == {"v": "2"}
    status, body, _ = raw.request("GET", f"{base}?resourceVersionMatch=Exact")
    assert status == 422 and body["message"] == (
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
        "resourceVersionMatch is forbidden unless resourceVersion is provided"
    )


def test_list_from_a_future_resource_version_is_too_large(cp: Any, raw: Any, namespace: str) -> None:
    future = int(cp.store.resource_version) + 10_000
    status, body, resp = raw.request(
        "GET", f"/api/v1/namespaces/{namespace}/configmaps?resourceVersion={future}"
    )
    assert status == 504 and body["reason"] == "Timeout" and resp.getheader("Retry-After") == "1"
    assert body["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"


def _watch_lines(raw: Any, path: str, count: int) -> list[dict[str, Any]]:
    raw.conn.request("GET", path, headers={"Authorization": f"Bearer {raw.cp.token}"})
    resp = raw.conn.getresponse()
    events = []
    while len(events) < count:
        events.append(json.loads(resp.readline()))
    raw.conn.close()
    return events


def test_watch_list_ends_initial_events_with_a_bookmark(api_client: Any, raw: Any, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    for name in ("a", "b"):
        core.create_namespaced_config_map(
            namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name))
        )
    path = (
        f"/api/v1/namespaces/{namespace}/configmaps?watch=true&sendInitialEvents=true"
        "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=5"
    )
    events = _watch_lines(raw, path, 3)
    assert [e["type"] for e in events] == ["ADDED", "ADDED", "BOOKMARK"]
    assert events[2]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


def test_watch_from_a_future_version_sends_only_later_events(
    cp: Any, api_client: Any, raw: Any, namespace: str
) -> None:
    core = client.CoreV1Api(api_client)
    future = int(cp.store.resource_version) + 2
    path = f"/api/v1/namespaces/{namespace}/configmaps?watch=true&resourceVersion={future}&timeoutSeconds=10"
    raw.conn.request("GET", path, headers={"Authorization": f"Bearer {cp.token}"})
    resp = raw.conn.getresponse()  # the headers come once the watch is registered
    assert resp.status == 200
    names = ("w1", "w2", "w3")
    for name in names:
        core.create_namespaced_config_map(
            namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name))
        )
    first = json.loads(resp.readline())
    raw.conn.close()
    assert first["type"] == "ADDED" and int(first["object"]["metadata"]["resourceVersion"]) > future
    assert first["object"]["metadata"]["name"] == "w3"
