"""Each bad input of the issue gets the API server's code and Status reason; the server keeps serving."""

from __future__ import annotations

import json
from typing import Any

import pytest


def _ok(raw: Any, namespace: str) -> None:
    """A good request right after the bad one (on the same connection where it stayed open)."""
    status, body, _ = raw.request("GET", f"/api/v1/namespaces/{namespace}/configmaps")
    assert status == 200 and body["kind"] == "ConfigMapList"


def _cm(name: str, **extra: Any) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **extra})


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ('{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": ', "application/json"),
        ("[1, 2, 3]", "application/json"),
        ("", "application/json"),
        (b"\xff\xfe{not utf-8", "application/json"),
        ("metadata: [unclosed", "application/yaml"),
    ],
    ids=["truncated-json", "not-an-object", "empty", "not-utf8", "malformed-yaml"],
)
def test_malformed_body_is_400(raw: Any, namespace: str, body: Any, content_type: str) -> None:
    status, resp, _ = raw.request(
        "POST", f"/api/v1/namespaces/{namespace}/configmaps", body, content_type=content_type
    )
    assert status == 400
    assert resp["kind"] == "Status" and resp["reason"] == "BadRequest" and resp["code"] == 400
    _ok(raw, namespace)


def test_malformed_apply_yaml_is_400(raw: Any, namespace: str) -> None:
    status, resp, _ = raw.request(
        "PATCH",
        f"/api/v1/namespaces/{namespace}/configmaps/x?fieldManager=t",
        "kind: ConfigMap\n  bad: indentation: here",
        content_type="application/apply-patch+yaml",
    )
    assert status == 400 and resp["reason"] == "BadRequest"
    _ok(raw, namespace)


def test_malformed_json_patch_is_400(raw: Any, namespace: str) -> None:
    raw.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", _cm("p"))
    status, resp, _ = raw.request(
        "PATCH",
        f"/api/v1/namespaces/{namespace}/configmaps/p",
        "{oops",
        content_type="application/merge-patch+json",
    )
    assert status == 400 and resp["reason"] == "BadRequest"
    _ok(raw, namespace)


@pytest.mark.parametrize(
    "path",
    [
        "/apis/ray.io/v1/namespaces/{ns}/rayclustrs",
        "/apis/ray.io/v2/namespaces/{ns}/rayclusters",
        "/apis/kueue.x-k8s.io/v1alpha9/clusterqueues",
        "/api/v1/namespaces/{ns}/widgets/w",
        "/api/v1/namespaces/{ns}/configmaps/c/nosuchsub",
        "/apis/kueue.x-k8s.io/v1beta2/namespaces/{ns}/clusterqueues",
    ],
    ids=[
        "typo",
        "unknown-version",
        "unknown-kueue-version",
        "unknown-core",
        "unknown-subresource",
        "cluster-scoped-in-ns",
    ],
)
def test_unknown_resource_or_version_is_404(raw: Any, namespace: str, path: str) -> None:
    status, resp, _ = raw.request("GET", path.format(ns=namespace))
    assert status == 404
    assert (
        resp["reason"] == "NotFound" and resp["message"] == "the server could not find the requested resource"
    )
    _ok(raw, namespace)


@pytest.mark.parametrize("name", ["Bad_Name", "UPPER", "-leading", "x" * 254, "a..b", "trailing-newline\n"])
def test_bad_name_is_422(raw: Any, namespace: str, name: str) -> None:
    status, resp, _ = raw.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", _cm(name))
    assert status == 422
    assert resp["reason"] == "Invalid"
    assert resp["message"].startswith(f'ConfigMap "{name}" is invalid: metadata.name: Invalid value')
    assert resp["details"]["causes"][0]["field"] == "metadata.name"
    _ok(raw, namespace)


def test_bad_namespace_name_is_422(raw: Any, namespace: str) -> None:
    body = json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "has.dots"}})
    status, resp, _ = raw.request("POST", "/api/v1/namespaces", body)
    assert status == 422 and resp["reason"] == "Invalid"
    _ok(raw, namespace)


def test_missing_name_is_422(raw: Any, namespace: str) -> None:
    body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})
    status, resp, _ = raw.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", body)
    assert status == 422 and "name or generateName is required" in resp["message"]
    _ok(raw, namespace)


def test_missing_namespace_is_404(raw: Any, namespace: str) -> None:
    status, resp, _ = raw.request("POST", "/api/v1/namespaces/no-such-ns/configmaps", _cm("c"))
    assert status == 404
    assert resp["reason"] == "NotFound" and resp["message"] == 'namespaces "no-such-ns" not found'
    assert resp["details"] == {"name": "no-such-ns", "kind": "namespaces"}
    _ok(raw, namespace)


@pytest.mark.parametrize(
    ("path", "body", "needle"),
    [
        (
            "/api/v1/namespaces/{ns}/configmaps",
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "k"}},
            "kind",
        ),
        (
            "/apis/ray.io/v1/namespaces/{ns}/rayclusters",
            {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "k"}},
            "kind",
        ),
        (
            "/apis/ray.io/v1/namespaces/{ns}/rayclusters",
            {"apiVersion": "ray.io/v2", "kind": "RayCluster", "metadata": {"name": "k"}},
            "API version",
        ),
        (
            "/api/v1/namespaces/{ns}/configmaps",
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "k", "namespace": "other"}},
            "namespace",
        ),
    ],
    ids=["core-kind", "custom-kind", "api-version", "namespace"],
)
def test_body_that_does_not_match_the_url_is_400(
    raw: Any, namespace: str, path: str, body: dict[str, Any], needle: str
) -> None:
    status, resp, _ = raw.request("POST", path.format(ns=namespace), json.dumps(body))
    assert status == 400 and resp["reason"] == "BadRequest"
    assert needle in resp["message"]
    _ok(raw, namespace)


def test_name_that_does_not_match_the_url_is_400(raw: Any, namespace: str) -> None:
    raw.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", _cm("right"))
    status, resp, _ = raw.request("PUT", f"/api/v1/namespaces/{namespace}/configmaps/right", _cm("wrong"))
    assert status == 400
    assert resp["message"] == "the name of the object (wrong) does not match the name on the URL (right)"
    _ok(raw, namespace)


def test_too_large_body_is_413(raw: Any, namespace: str) -> None:
    big = _cm("big", data={"blob": "x" * (3 * 1024 * 1024 + 10)})
    status, resp, _ = raw.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", big)
    assert status == 413 and resp["reason"] == "RequestEntityTooLarge"
    _ok(raw, namespace)
    status, _, _ = raw.request("GET", f"/api/v1/namespaces/{namespace}/configmaps/big")
    assert status == 404


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/api/v1/namespaces/{ns}/configmaps/named"),
        ("PUT", "/api/v1/namespaces/{ns}/configmaps"),
        ("DELETE", "/version"),
        ("POST", "/apis/ray.io/v1/rayclusters"),
        ("OPTIONS", "/api/v1/namespaces/{ns}/configmaps"),
    ],
)
def test_method_not_allowed_is_405(raw: Any, namespace: str, method: str, path: str) -> None:
    status, resp, _ = raw.request(method, path.format(ns=namespace), _cm("named"))
    assert status == 405 and resp["reason"] == "MethodNotAllowed"
    _ok(raw, namespace)


@pytest.mark.parametrize("query", ["limit=abc", "timeoutSeconds=soon&watch=true", "dryRun=Some"])
def test_bad_query_parameter_is_400(raw: Any, namespace: str, query: str) -> None:
    method = "POST" if query.startswith("dryRun") else "GET"
    status, resp, _ = raw.request(method, f"/api/v1/namespaces/{namespace}/configmaps?{query}", _cm("q"))
    assert status == 400 and resp["reason"] == "BadRequest"
    _ok(raw, namespace)


def test_server_error_in_a_handler_is_500_and_the_server_keeps_serving(
    cp: Any, raw: Any, namespace: str
) -> None:
    def broken(match: Any, query: Any, user: Any) -> Any:
        raise RuntimeError("handler bug")

    cp.add_route(
        "GET", r"/apis/broken.example.com/v1/boom", broken, resource="boom.broken.example.com", verb="get"
    )
    status, resp, _ = raw.request("GET", "/apis/broken.example.com/v1/boom")
    assert status == 500 and resp["reason"] == "InternalError"
    _ok(raw, namespace)


def test_plain_http_and_garbage_on_the_tls_port(cp: Any, raw: Any, namespace: str) -> None:
    import contextlib
    import socket

    host, port = cp.server.removeprefix("https://").split(":")
    for payload in (b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n", b"\x00\xff" * 100, b""):
        # The server answers with a TLS alert or nothing, and closes (possibly before we are done).
        with socket.create_connection((host, int(port)), timeout=30) as sock, contextlib.suppress(OSError):
            if payload:
                sock.sendall(payload)
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(4096):
                pass
    _ok(raw, namespace)


def test_head_is_a_get_without_a_body(raw: Any, namespace: str) -> None:
    status, body, resp = raw.request("HEAD", f"/api/v1/namespaces/{namespace}/configmaps")
    assert status == 200 and body is None and int(resp.getheader("Content-Length")) > 0
    _ok(raw, namespace)


def test_unknown_http_method_is_405_status(raw: Any, namespace: str) -> None:
    status, body, _ = raw.request("BREW", f"/api/v1/namespaces/{namespace}/configmaps")
    assert status == 405 and body["kind"] == "Status" and body["reason"] == "MethodNotAllowed"
    _ok(raw, namespace)


def test_malformed_request_line_is_400_status(cp: Any, raw: Any, namespace: str) -> None:
    data = raw.exchange(b"NOT A REQUEST LINE AT ALL\r\n\r\n")
    head, _, payload = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400")
    assert json.loads(payload)["reason"] == "BadRequest"
    _ok(raw, namespace)
