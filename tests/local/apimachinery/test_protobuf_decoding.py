"""Decoding Kubernetes protobuf bodies: the JSON form of each field type, and no crash on any input."""

from __future__ import annotations

import base64

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rayqueue_local.apimachinery.protobuf import MAGIC, ProtobufError, decode, encode_unknown, supported_kinds

FUZZ = settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


def ld(number: int, payload: bytes) -> bytes:
    """A length-delimited field (payloads under 128 bytes)."""
    assert len(payload) < 128
    return bytes([number << 3 | 2, len(payload)]) + payload


def varint(number: int, value: int) -> bytes:
    out = bytearray([number << 3])
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def entry(key: str, value: bytes) -> bytes:
    return ld(1, key.encode()) + ld(2, value)


def test_object_meta_fields_as_json() -> None:
    time = varint(1, 1_700_000_000)  # Time{seconds}
    owner = ld(1, b"RayCluster") + ld(3, b"rc") + ld(4, b"uid-1") + ld(5, b"ray.io/v1") + varint(6, 1)
    meta = (
        ld(1, b"cm")
        + ld(2, b"")  # empty strings are omitted, as Go's omitempty omits them
        + ld(3, b"ns")
        + varint(7, 0)  # a zero generation too
        + ld(8, time)
        + ld(11, entry("app", b"x"))
        + ld(11, entry("tier", b""))
        + ld(12, entry("note", b"hi"))
        + ld(13, owner)
        + ld(14, b"example.com/cleanup")
        + varint(10, 0)  # deletionGracePeriodSeconds is a pointer: 0 is kept
    )
    out = decode(encode_unknown("v1", "ConfigMap", ld(1, meta) + varint(4, 1)))
    assert out == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "cm",
            "namespace": "ns",
            "creationTimestamp": "2023-11-14T22:13:20Z",
            "labels": {"app": "x", "tier": ""},
            "annotations": {"note": "hi"},
            "ownerReferences": [
                {
                    "kind": "RayCluster",
                    "name": "rc",
                    "uid": "uid-1",
                    "apiVersion": "ray.io/v1",
                    "controller": True,
                }
            ],
            "finalizers": ["example.com/cleanup"],
            "deletionGracePeriodSeconds": 0,
        },
        "immutable": True,
    }
    # An unset creationTimestamp is a zero metav1.Time: JSON null, as kubectl's own JSON has it.
    bare = decode(encode_unknown("v1", "ConfigMap", ld(1, ld(1, b"cm"))))
    assert bare["metadata"] == {"name": "cm", "creationTimestamp": None}


def test_secret_bytes_are_base64_and_unknown_fields_fail_loudly() -> None:
    raw = bytes(range(200, 256))
    body = ld(1, ld(1, b"s")) + ld(2, entry("key", raw)) + ld(3, b"kubernetes.io/tls")
    out = decode(encode_unknown("v1", "Secret", body))
    assert out["data"] == {"key": base64.b64encode(raw).decode()}
    assert out["type"] == "kubernetes.io/tls"
    # A field number the table does not know is never dropped: the body is refused, naming it.
    for extra, where in (
        (ld(6, b"??"), "field 6 of core/v1.Secret"),
        (ld(1, varint(15, 7)), "field 15 of meta/v1.ObjectMeta"),
    ):
        with pytest.raises(ProtobufError, match=where) as err:
            decode(encode_unknown("v1", "Secret", body + extra))
        assert err.value.unsupported


def test_namespace_and_serviceaccount() -> None:
    ns = decode(encode_unknown("v1", "Namespace", ld(1, ld(1, b"team")) + ld(2, ld(1, b"kubernetes"))))
    assert ns["metadata"]["name"] == "team" and ns["spec"] == {"finalizers": ["kubernetes"]}
    assert ns["status"] == {}  # a struct field: never left out by omitempty
    sa = decode(
        encode_unknown("v1", "ServiceAccount", ld(1, ld(1, b"robot")) + ld(3, ld(1, b"pull")) + varint(4, 0))
    )
    assert sa["imagePullSecrets"] == [{"name": "pull"}] and sa["automountServiceAccountToken"] is False
    assert ("v1", "Secret") in supported_kinds()


@pytest.mark.parametrize(
    ("body", "unsupported"),
    [
        (b"{}", False),
        (MAGIC + b"\x0a\x80", False),  # a varint that never ends
        (MAGIC + b"\x0b", False),  # wire type 3 (groups)
        (encode_unknown("v1", "ConfigMap", ld(1, ld(1, b"\xff\xfe"))), False),  # not UTF-8
        (encode_unknown("v1", "ConfigMap", varint(1, 5)), False),  # a message sent as a number
        (encode_unknown("policy/v1", "PodDisruptionBudget", b""), True),
        (encode_unknown("v1", "ConfigMap", varint(9, 1)), True),  # a field number not in the table
    ],
)
def test_malformed_bodies_raise_protobuf_error(body: bytes, unsupported: bool) -> None:
    with pytest.raises(ProtobufError) as err:
        decode(body)
    assert err.value.unsupported is unsupported


@FUZZ
@given(st.sampled_from(supported_kinds()), st.binary(max_size=200))
def test_any_bytes_decode_or_raise_protobuf_error(kind: tuple[str, str], raw: bytes) -> None:
    try:
        out = decode(encode_unknown(*kind, raw))
    except ProtobufError:
        return
    assert (out["apiVersion"], out["kind"]) == kind and isinstance(out["metadata"], dict)
