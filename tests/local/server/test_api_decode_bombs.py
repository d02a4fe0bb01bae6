"""Bodies that expand: YAML alias bombs, recursive aliases, deep nesting and objects past the size limit.

Each is sent over HTTPS by a namespace-limited user, as an attacker would, and must end in a 4xx
``Status`` quickly, with nothing stored and the server still serving.
"""

from __future__ import annotations

import json
import resource
import time
from typing import Any

import pytest

from rayqueue_local.storage.storetypes import MAX_OBJECT_BYTES


def _laughs(levels: int = 9, width: int = 9) -> str:
    lines = ["a0: &a0 [" + ",".join(["lol"] * width) + "]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines)


def _configmap_patch(name: str, data_yaml: str) -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n" + "\n".join(
        "  " + line for line in data_yaml.splitlines()
    )


@pytest.fixture
def limited_user(cp: Any, namespace: str) -> str:
    return str(cp.auth.add_user(f"user-{namespace}", [namespace]))


def _apply(raw: Any, namespace: str, name: str, body: str, token: str) -> tuple[int, Any]:
    path = f"/api/v1/namespaces/{namespace}/configmaps/{name}?fieldManager=t&force=true"
    status, parsed, _ = raw.request(
        "PATCH", path, body, content_type="application/apply-patch+yaml", token=token
    )
    return status, parsed


def _assert_nothing_stored(raw: Any, namespace: str) -> None:
    status, listed, _ = raw.request("GET", f"/api/v1/namespaces/{namespace}/configmaps")
    assert status == 200 and listed["items"] == []


def test_billion_laughs_apply_patch_is_refused_quickly(
    cp: Any, raw: Any, namespace: str, limited_user: str
) -> None:
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.process_time()
    status, body = _apply(raw, namespace, "bomb", _configmap_patch("bomb", _laughs()), limited_user)
    cpu = time.process_time() - started
    assert status == 400 and body["kind"] == "Status"
    assert "aliases" in body["message"]
    _assert_nothing_stored(raw, namespace)
    # Reported, not asserted as a timing: the bomb used to cost ~69 s of CPU and 1.8 GB.
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
    print(f"bomb refused after {cpu:.3f} s CPU; max RSS grew {grown} KiB")


@pytest.mark.parametrize(
    ("data_yaml", "fragment"),
    [
        ("a: &a [*a]", "refers to itself"),
        ("a: " + "[" * 150 + "]" * 150, "levels deep"),
    ],
    ids=["recursive-alias", "deep-nesting"],
)
def test_recursive_and_deep_yaml_is_400(
    raw: Any, namespace: str, limited_user: str, data_yaml: str, fragment: str
) -> None:
    status, body = _apply(raw, namespace, "odd", _configmap_patch("odd", data_yaml), limited_user)
    assert status == 400 and fragment in body["message"]
    _assert_nothing_stored(raw, namespace)


@pytest.mark.parametrize("depth", [150, 100_000])
def test_deeply_nested_json_is_400_not_500(raw: Any, namespace: str, depth: int) -> None:
    body = (
        '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":'
        + "[" * depth
        + "]" * depth
        + "}"
    )
    status, parsed, _ = raw.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", body)
    assert status == 400 and "levels deep" in parsed["message"]
    _assert_nothing_stored(raw, namespace)


def _raycluster_apply(name: str, params_yaml: str) -> str:
    """A RayCluster apply body whose head rayStartParams (a map of strings with no limit of its own)
    holds ``params_yaml``: what grows here is limited only by the object size limit."""
    params = "\n".join("        " + line for line in params_yaml.splitlines())
    return (
        f"apiVersion: ray.io/v1\nkind: RayCluster\nmetadata:\n  name: {name}\nspec:\n  headGroupSpec:\n"
        f"    rayStartParams:\n{params}\n"
        "    template: {spec: {containers: [{name: ray, image: ray}]}}\n"
    )


def _apply_raycluster(raw: Any, namespace: str, name: str, body: str, token: str) -> tuple[int, Any]:
    path = f"/apis/ray.io/v1/namespaces/{namespace}/rayclusters/{name}?fieldManager=t&force=true"
    status, parsed, _ = raw.request(
        "PATCH", path, body, content_type="application/apply-patch+yaml", token=token
    )
    return status, parsed


def test_object_that_expands_past_the_size_limit_is_413(raw: Any, namespace: str, limited_user: str) -> None:
    chunk = "x" * 100_000
    copies = MAX_OBJECT_BYTES // len(chunk) + 2  # a small YAML text, a large object once aliases expand
    params_yaml = f"a: &big {chunk}\n" + "\n".join(f"k{i}: *big" for i in range(copies))
    text = _raycluster_apply("large", params_yaml)
    assert len(text) < MAX_OBJECT_BYTES  # the body itself is under the limit
    status, body = _apply_raycluster(raw, namespace, "large", text, limited_user)
    assert status == 413 and body["reason"] == "RequestEntityTooLarge", body
    status, listed, _ = raw.request("GET", f"/apis/ray.io/v1/namespaces/{namespace}/rayclusters")
    assert status == 200 and listed["items"] == []
    small = _raycluster_apply("small", "a: &v x\nb: *v")
    status, _ = _apply_raycluster(raw, namespace, "small", small, limited_user)
    assert status in (200, 201)  # aliases within the limits still work, and the server still serves


def test_configmap_data_past_one_mebibyte_is_invalid(raw: Any, namespace: str) -> None:
    """Upstream's ValidateConfigMap: at most 1 MiB of data in all (422, before the object size limit)."""
    data = {"a": "x" * (2**20 // 2), "b": "y" * (2**20 // 2 + 1)}
    created = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": data}
    status, parsed, _ = raw.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", json.dumps(created))
    assert (status, parsed["reason"]) == (422, "Invalid"), parsed
    assert parsed["details"]["causes"][0] == {
        "reason": "FieldValueTooLong",
        "field": "data",
        "message": "Too long: must have at most 1048576 bytes",
    }


def test_object_grown_past_the_limit_by_a_merge_patch_is_413(raw: Any, namespace: str) -> None:
    head = {
        "rayStartParams": {"a": "x"},
        "template": {"spec": {"containers": [{"name": "ray", "image": "ray"}]}},
    }
    created = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "grow"},
        "spec": {"headGroupSpec": head},
    }
    path = f"/apis/ray.io/v1/namespaces/{namespace}/rayclusters"
    status, _, _ = raw.request("POST", path, json.dumps(created))
    assert status == 201
    half = "y" * (MAX_OBJECT_BYTES // 2 + 10)
    for key, expected in (("b", 200), ("c", 413)):  # each body is under 3 MiB; the object would not be
        patch = json.dumps({"spec": {"headGroupSpec": {"rayStartParams": {key: half}}}})
        status, parsed, _ = raw.request(
            "PATCH", f"{path}/grow", patch, content_type="application/merge-patch+json"
        )
        assert status == expected, parsed
    status, stored, _ = raw.request("GET", f"{path}/grow")
    assert status == 200 and set(stored["spec"]["headGroupSpec"]["rayStartParams"]) == {"a", "b"}


def _chunked_head(namespace: str, token: str | None) -> bytes:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    return (
        f"POST /api/v1/namespaces/{namespace}/configmaps HTTP/1.1\r\nHost: x\r\n{auth}"
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    ).encode()


def test_chunked_body_past_the_limit_is_413_while_streaming(cp: Any, raw: Any, namespace: str) -> None:
    piece = b"x" * 65536
    sent = []

    def chunks() -> Any:
        for _ in range(512):  # 32 MiB offered in 64 KiB chunks, each under the limit
            sent.append(len(piece))
            yield b"%x\r\n%s\r\n" % (len(piece), piece)
        yield b"0\r\n\r\n"

    answer = raw.exchange(_chunked_head(namespace, cp.token), chunks())
    assert answer.startswith(b"HTTP/1.1 413")
    assert sum(sent) < 32 * 2**20  # the server stopped reading (and closed) instead of buffering it all
    _assert_nothing_stored(raw, namespace)


def test_a_chunk_that_claims_gigabytes_is_refused_before_it_is_read(
    cp: Any, raw: Any, namespace: str
) -> None:
    answer = raw.exchange(_chunked_head(namespace, cp.token) + b"40000000\r\n", [b"x" * 1024])
    assert answer.startswith(b"HTTP/1.1 413")
    answer = raw.exchange(_chunked_head(namespace, cp.token) + b"zz\r\n", [])
    assert answer.startswith(b"HTTP/1.1 400") and b"chunked" in answer


def test_anonymous_body_is_refused_before_it_is_read(raw: Any, namespace: str) -> None:
    big = b"x" * (2 * 2**20)
    chunks = (b"%x\r\n%s\r\n" % (len(big), big) for _ in range(4))
    answer = raw.exchange(_chunked_head(namespace, None), chunks)
    assert answer.startswith(b"HTTP/1.1 401") and b"Connection: close" in answer
    _assert_nothing_stored(raw, namespace)
