"""``/openapi/v2`` and ``/openapi/v3`` as kubectl reads them, and protobuf request bodies, over HTTPS.

Issue 15 items 1 and 4, at the HTTP level (the kubectl commands they enable are in
tests/local/server/kubectl/test_kubectl_client.py).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from rayqueue_local.apimachinery.protobuf import MAGIC, encode_unknown

_REF = re.compile(r'"\$ref":\s*"#/(?:components/schemas|definitions)/([^"]+)"')


def _index(raw: Any) -> dict[str, Any]:
    code, body, _ = raw.request("GET", "/openapi/v3", headers={"Accept": "application/json"})
    assert code == 200
    return body["paths"]  # type: ignore[no-any-return]


def test_the_v3_index_names_every_group_version_with_a_hash(raw: Any, cp: Any) -> None:
    paths = _index(raw)
    expected = {"api/v1", "apis/apps/v1", "apis/batch/v1", "apis/apiextensions.k8s.io/v1", "apis/ray.io/v1"}
    expected |= {f"apis/kueue.x-k8s.io/{v}" for v in ("v1beta1", "v1beta2")}
    assert expected <= set(paths)
    for key, entry in paths.items():
        assert re.fullmatch(
            rf"/openapi/v3/{re.escape(key)}\?hash=[0-9A-F]{{128}}", entry["serverRelativeURL"]
        )


@pytest.mark.parametrize("key", ["api/v1", "apis/apps/v1", "apis/ray.io/v1", "apis/kueue.x-k8s.io/v1beta1"])
def test_each_v3_document_is_what_kubectl_needs(raw: Any, key: str) -> None:
    url = _index(raw)[key]["serverRelativeURL"]
    code, doc, resp = raw.request("GET", url)
    assert code == 200 and resp.getheader("Cache-Control") == "public, immutable"
    schemas = doc["components"]["schemas"]
    assert set(_REF.findall(json.dumps(doc))) <= set(schemas)  # every reference resolves in the document
    patches = [op for entry in doc["paths"].values() for m, op in entry.items() if m == "patch"]
    assert patches
    for op in patches:
        # kubectl's QueryParamVerifierV3: the PATCH of a kind, with fieldValidation in the query.
        assert {"group", "version", "kind"} == set(op["x-kubernetes-group-version-kind"])
        assert {"name": "fieldValidation", "in": "query"}.items() <= next(
            p for p in op["parameters"] if p["name"] == "fieldValidation"
        ).items()
    kinds = {
        (g["group"], g["version"], g["kind"])
        for s in schemas.values()
        for g in s.get("x-kubernetes-group-version-kind", [])
    }
    group, _, version = key.removeprefix("apis/").removeprefix("api/").rpartition("/")
    served = {(group, version, k) for k in _served_kinds(raw, key)}
    assert served <= kinds
    assert {(group, version, k + "List") for (_, _, k) in served} <= kinds


def _served_kinds(raw: Any, key: str) -> set[str]:
    code, doc, _ = raw.request("GET", "/" + key)
    assert code == 200
    return {r["kind"] for r in doc["resources"] if "/" not in r["name"]}


def test_a_crd_kind_carries_its_schema_and_object_meta(raw: Any, cp: Any) -> None:
    code, doc, _ = raw.request("GET", "/openapi/v3/apis/ray.io/v1")
    assert code == 200
    rc = doc["components"]["schemas"]["io.ray.v1.RayCluster"]
    crd_schema = cp.registry.get("rayclusters.ray.io").schemas["v1"]
    assert rc["properties"]["spec"] == crd_schema["properties"]["spec"]
    assert rc["properties"]["metadata"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    ]
    # Built-in kinds are patched with strategic merge; custom resources are not.
    item = doc["paths"]["/apis/ray.io/v1/namespaces/{namespace}/rayclusters/{name}"]
    assert "application/strategic-merge-patch+json" not in item["patch"]["requestBody"]["content"]
    code, core, _ = raw.request("GET", "/openapi/v3/api/v1")
    pod = core["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]
    assert "application/strategic-merge-patch+json" in pod["patch"]["requestBody"]["content"]


def test_v3_caching_headers_as_upstream(raw: Any) -> None:
    url = _index(raw)["apis/batch/v1"]["serverRelativeURL"]
    code, _, resp = raw.request("GET", url)
    etag = resp.getheader("Etag")
    assert code == 200 and etag
    code, _, _ = raw.request("GET", url, headers={"If-None-Match": etag})
    assert code == 304
    code, body, resp = raw.request("GET", "/openapi/v3/apis/batch/v1?hash=STALE")
    assert code == 301 and resp.getheader("Location") == url
    assert raw.request("GET", "/openapi/v3/apis/nope.example.com/v1")[0] == 404


def test_v2_is_json_and_protobuf_only_clients_get_406(raw: Any) -> None:
    code, doc, _ = raw.request("GET", "/openapi/v2", headers={"Accept": "application/json"})
    assert code == 200 and doc["swagger"] == "2.0"
    assert "#/components/" not in json.dumps(doc)
    assert set(_REF.findall(json.dumps(doc))) <= set(doc["definitions"])
    assert doc["definitions"]["io.k8s.api.apps.v1.Deployment"]["x-kubernetes-group-version-kind"] == [
        {"group": "apps", "kind": "Deployment", "version": "v1"}
    ]
    protobuf_only = {"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}
    code, status, _ = raw.request("GET", "/openapi/v2", headers=protobuf_only)
    assert code == 406 and status["kind"] == "Status" and status["reason"] == "NotAcceptable"


def _field(number: int, payload: bytes) -> bytes:
    assert len(payload) < 128
    return bytes([number << 3 | 2, len(payload)]) + payload


def _configmap(name: str, namespace: str, data: dict[str, str]) -> bytes:
    meta = _field(1, name.encode()) + _field(3, namespace.encode())
    entries = b"".join(_field(2, _field(1, k.encode()) + _field(2, v.encode())) for k, v in data.items())
    return encode_unknown("v1", "ConfigMap", _field(1, meta) + entries)


PROTOBUF = "application/vnd.kubernetes.protobuf"


def test_protobuf_create_and_protobuf_accept(raw: Any, cp: Any, namespace: str) -> None:
    body = _configmap("pb", namespace, {"k": "v", "empty": ""})
    code, created, resp = raw.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/configmaps",
        body,
        content_type=PROTOBUF,
        headers={"Accept": f"{PROTOBUF}, application/json"},
    )
    assert code == 201 and resp.getheader("Content-Type") == "application/json"
    assert created["data"] == {"k": "v", "empty": ""}
    assert cp.store.get("configmaps", namespace, "pb")["data"] == {"k": "v", "empty": ""}
    code, got, _ = raw.request(
        "GET",
        f"/api/v1/namespaces/{namespace}/configmaps/pb",
        headers={"Accept": f"{PROTOBUF}, application/json"},
    )
    assert code == 200 and got["metadata"]["name"] == "pb"  # kubectl's Accept: JSON is its fallback
    code, got, _ = raw.request(
        "GET", f"/api/v1/namespaces/{namespace}/configmaps/pb", headers={"Accept": PROTOBUF}
    )
    assert code == 406 and got["reason"] == "NotAcceptable"  # protobuf only: nothing this server writes


@pytest.mark.parametrize(
    ("body", "code", "reason"),
    [
        (encode_unknown("policy/v1", "PodDisruptionBudget", b""), 415, "UnsupportedMediaType"),
        (encode_unknown("v1", "ConfigMap", b"\x48\x01"), 415, "UnsupportedMediaType"),  # field 9: unknown
        (encode_unknown("ray.io/v1", "RayCluster", b""), 415, "UnsupportedMediaType"),
        (MAGIC + b"\x0a\xff", 400, "BadRequest"),  # a length that runs past the end
        (b"{}", 400, "BadRequest"),  # no magic
        (encode_unknown("v1", "ConfigMap", b"\x0a\x02\x0a"), 400, "BadRequest"),  # truncated metadata
    ],
)
def test_bad_protobuf_bodies_get_a_status(
    raw: Any, namespace: str, body: bytes, code: int, reason: str
) -> None:
    got, status, _ = raw.request(
        "POST", f"/api/v1/namespaces/{namespace}/configmaps", body, content_type=PROTOBUF
    )
    assert got == code and status["kind"] == "Status" and status["reason"] == reason
    assert "json parse error" not in status["message"] and "Traceback" not in status["message"]
    assert status["message"].startswith("the body of the request was in an unknown format")


def test_a_protobuf_field_not_known_is_415_naming_message_and_field(raw: Any, namespace: str) -> None:
    container = b"\x0a\x01c" + b"\xf8\x06\x01"  # name "c", then field 111 (a varint)
    template = b"\x12" + bytes([len(container) + 2]) + b"\x12" + bytes([len(container)]) + container
    spec = b"\x1a" + bytes([len(template)]) + template
    body = encode_unknown("apps/v1", "Deployment", b"\x12" + bytes([len(spec)]) + spec)
    got, status, _ = raw.request(
        "POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", body, content_type=PROTOBUF
    )
    assert got == 415 and status["reason"] == "UnsupportedMediaType"
    assert "field 111 of core/v1.Container is not known here" in status["message"]
