"""Decoding Kubernetes protobuf bodies (``application/vnd.kubernetes.protobuf``) of a few core kinds.

kubectl's typed clients (``kubectl create namespace|configmap|secret|serviceaccount``, and ``kubectl
create role|clusterrole|rolebinding|clusterrolebinding`` for ``rbac.authorization.k8s.io/v1``) send their
bodies as protobuf, and client-go does not fall back to JSON when a server answers 415, so this
server decodes them. The format [k8s.io/apimachinery/pkg/runtime/serializer/protobuf]: the 4-byte
magic ``k8s\\x00``, then a ``runtime.Unknown`` message (1: ``typeMeta`` {1: apiVersion, 2: kind},
2: ``raw`` — the object's own message —, 3: contentEncoding, 4: contentType). The object messages
follow ``k8s.io/api/core/v1/generated.proto`` and ``k8s.io/apimachinery/pkg/apis/meta/v1/
generated.proto``; the tables below name the fields of the kinds decoded (unknown field numbers are
skipped, as protobuf does). The result is the JSON form the same object has: Go's ``omitempty``
drops empty strings and zero numbers, ``[]byte`` values become base64, ``Time`` becomes RFC 3339.

A protobuf body of any other kind raises :class:`ProtobufError` with ``unsupported=True``; the API
server answers it 415 UnsupportedMediaType (what upstream answers for custom resources).

Example:
    >>> body = encode_unknown("v1", "ConfigMap", bytes([0x0a, 0x04, 0x0a, 0x02]) + b"cm"
    ...     + bytes([0x12, 0x06, 0x0a, 0x01]) + b"a" + bytes([0x12, 0x01]) + b"b")
    >>> decode(body)
    {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'cm'}, 'data': {'a': 'b'}}
"""

from __future__ import annotations

import base64
import datetime
import json
from typing import Any

from rayqueue_local.apimachinery import protowire
from rayqueue_local.errors import LocalControlPlaneError

__all__ = ["MAGIC", "MEDIA_TYPE", "ProtobufError", "decode", "encode_unknown", "supported_kinds"]

#: The media type of Kubernetes protobuf bodies.
MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
#: The 4 bytes every Kubernetes protobuf body starts with.
MAGIC = protowire.MAGIC


class ProtobufError(LocalControlPlaneError, ValueError):
    """A protobuf body that cannot be decoded; ``unsupported`` when only its kind is the problem.

    Example:
        >>> ProtobufError("bad", unsupported=True).unsupported
        True
    """

    def __init__(self, message: str, *, unsupported: bool = False) -> None:
        super().__init__(message)
        self.unsupported = unsupported


# field number -> (JSON name, type). Types: "string", "bytes" (base64), "int", "pint" (a pointer:
# kept when 0), "bool", "time", "json" (FieldsV1: raw JSON), "map" (string values), "bmap" (bytes
# values), "[]string", a message name, or "[]" + a message name.
_MESSAGES: dict[str, dict[int, tuple[str, str]]] = {
    "ObjectMeta": {
        1: ("name", "string"),
        2: ("generateName", "string"),
        3: ("namespace", "string"),
        4: ("selfLink", "string"),
        5: ("uid", "string"),
        6: ("resourceVersion", "string"),
        7: ("generation", "int"),
        8: ("creationTimestamp", "time"),
        9: ("deletionTimestamp", "time"),
        10: ("deletionGracePeriodSeconds", "pint"),
        11: ("labels", "map"),
        12: ("annotations", "map"),
        13: ("ownerReferences", "[]OwnerReference"),
        14: ("finalizers", "[]string"),
        17: ("managedFields", "[]ManagedFieldsEntry"),
    },
    "OwnerReference": {
        1: ("kind", "string"),
        3: ("name", "string"),
        4: ("uid", "string"),
        5: ("apiVersion", "string"),
        6: ("controller", "bool"),
        7: ("blockOwnerDeletion", "bool"),
    },
    "ManagedFieldsEntry": {
        1: ("manager", "string"),
        2: ("operation", "string"),
        3: ("apiVersion", "string"),
        4: ("time", "time"),
        6: ("fieldsType", "string"),
        7: ("fieldsV1", "FieldsV1"),
        8: ("subresource", "string"),
    },
    "FieldsV1": {1: ("Raw", "json")},
    "Time": {1: ("seconds", "int"), 2: ("nanos", "int")},
    "Namespace": {
        1: ("metadata", "ObjectMeta"),
        2: ("spec", "NamespaceSpec"),
        3: ("status", "NamespaceStatus"),
    },
    "NamespaceSpec": {1: ("finalizers", "[]string")},
    "NamespaceStatus": {1: ("phase", "string"), 2: ("conditions", "[]NamespaceCondition")},
    "NamespaceCondition": {
        1: ("type", "string"),
        2: ("status", "string"),
        4: ("lastTransitionTime", "time"),
        5: ("reason", "string"),
        6: ("message", "string"),
    },
    "ConfigMap": {
        1: ("metadata", "ObjectMeta"),
        2: ("data", "map"),
        3: ("binaryData", "bmap"),
        4: ("immutable", "bool"),
    },
    "Secret": {
        1: ("metadata", "ObjectMeta"),
        2: ("data", "bmap"),
        3: ("type", "string"),
        4: ("stringData", "map"),
        5: ("immutable", "bool"),
    },
    "ServiceAccount": {
        1: ("metadata", "ObjectMeta"),
        2: ("secrets", "[]ObjectReference"),
        3: ("imagePullSecrets", "[]LocalObjectReference"),
        4: ("automountServiceAccountToken", "bool"),
    },
    "ObjectReference": {
        1: ("kind", "string"),
        2: ("namespace", "string"),
        3: ("name", "string"),
        4: ("uid", "string"),
        5: ("apiVersion", "string"),
        6: ("resourceVersion", "string"),
        7: ("fieldPath", "string"),
    },
    "LocalObjectReference": {1: ("name", "string")},
    # k8s.io/api/rbac/v1/generated.proto (kubectl create role|clusterrole|rolebinding|clusterrolebinding)
    "Role": {1: ("metadata", "ObjectMeta"), 2: ("rules", "[]PolicyRule")},
    "ClusterRole": {
        1: ("metadata", "ObjectMeta"),
        2: ("rules", "[]PolicyRule"),
        3: ("aggregationRule", "AggregationRule"),
    },
    "PolicyRule": {
        1: ("verbs", "[]string"),
        2: ("apiGroups", "[]string"),
        3: ("resources", "[]string"),
        4: ("resourceNames", "[]string"),
        5: ("nonResourceURLs", "[]string"),
    },
    "AggregationRule": {1: ("clusterRoleSelectors", "[]LabelSelector")},
    "LabelSelector": {1: ("matchLabels", "map"), 2: ("matchExpressions", "[]LabelSelectorRequirement")},
    "LabelSelectorRequirement": {1: ("key", "string"), 2: ("operator", "string"), 3: ("values", "[]string")},
    "RoleBinding": {1: ("metadata", "ObjectMeta"), 2: ("subjects", "[]Subject"), 3: ("roleRef", "RoleRef")},
    "Subject": {
        1: ("kind", "string"),
        2: ("apiGroup", "string"),
        3: ("name", "string"),
        4: ("namespace", "string"),
    },
    "RoleRef": {1: ("apiGroup", "string"), 2: ("kind", "string"), 3: ("name", "string")},
}

#: (apiVersion, kind) -> the message of the kinds decoded.
_KINDS = {("v1", kind): kind for kind in ("Namespace", "ConfigMap", "Secret", "ServiceAccount")} | {
    ("rbac.authorization.k8s.io/v1", kind): kind
    for kind in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")
}
_MESSAGES["ClusterRoleBinding"] = _MESSAGES["RoleBinding"]


def supported_kinds() -> list[tuple[str, str]]:
    """The ``(apiVersion, kind)`` pairs whose protobuf bodies are decoded.

    Example:
        >>> [kind for _, kind in supported_kinds()][:3]
        ['ClusterRole', 'ClusterRoleBinding', 'Role']
    """
    return sorted(_KINDS)


# -- the wire format -----------------------------------------------------------------------------
def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """One message's fields (:func:`~rayqueue_local.apimachinery.protowire.fields`), errors as ours."""
    try:
        return protowire.fields(data)
    except protowire.ProtoError as err:
        raise ProtobufError(f"malformed protobuf: {err}") from None


def _text(value: Any) -> str:
    if not isinstance(value, bytes):
        raise ProtobufError("a string field is not length-delimited")
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtobufError("a string field is not valid UTF-8") from None


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _time(value: bytes) -> str | None:
    parts = _message(value, "Time")
    seconds = parts.get("seconds", 0)
    if not seconds:
        return None
    when = datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _map_entry(value: bytes, binary: bool) -> tuple[str, str]:
    key, item = "", b"" if binary else ""
    for number, _, raw in _fields(value):
        if number == 1:
            key = _text(raw)
        elif number == 2:
            item = raw if binary else _text(raw)
    if binary:
        if not isinstance(item, bytes):
            raise ProtobufError("a bytes map value is not length-delimited")
        return key, base64.b64encode(item).decode("ascii")
    return key, str(item)


def _value(kind: str, wire: int, raw: Any) -> Any:
    if kind == "string":
        return _text(raw)
    if kind in ("int", "pint", "bool"):
        if wire != 0:
            raise ProtobufError("a number field is not a varint")
        return bool(raw) if kind == "bool" else _signed(raw)
    if not isinstance(raw, bytes):
        raise ProtobufError("a message field is not length-delimited")
    if kind == "bytes":
        return base64.b64encode(raw).decode("ascii")
    if kind == "time":
        return _time(raw)
    if kind == "json":
        try:
            return json.loads(raw) if raw else {}
        except ValueError:
            raise ProtobufError("fieldsV1 is not JSON") from None
    return _message(raw, kind)


def _message(data: bytes, name: str) -> dict[str, Any]:
    table = _MESSAGES[name]
    out: dict[str, Any] = {}
    for number, wire, raw in _fields(data):
        spec = table.get(number)
        if spec is None:
            continue  # a field this table does not know: skipped, as protobuf does
        key, kind = spec
        if kind in ("map", "bmap"):
            if not isinstance(raw, bytes):
                raise ProtobufError("a map entry is not length-delimited")
            k, v = _map_entry(raw, binary=kind == "bmap")
            out.setdefault(key, {})[k] = v
        elif kind.startswith("[]"):
            out.setdefault(key, []).append(_value(kind[2:], wire, raw))
        else:
            out[key] = _value(kind, wire, raw)
    if name == "FieldsV1":
        raw_json: dict[str, Any] = out.get("Raw", {})
        return raw_json
    # Go's omitempty: empty strings and zero non-pointer numbers are not in the JSON form.
    return {
        k: v
        for k, v in out.items()
        if not (v == "" or v is None or (v == 0 and not isinstance(v, bool) and _kind_of(table, k) == "int"))
    }


def _kind_of(table: dict[int, tuple[str, str]], key: str) -> str:
    return next(kind for name, kind in table.values() if name == key)


def decode(body: bytes) -> dict[str, Any]:
    """The JSON form of a Kubernetes protobuf body (raises :class:`ProtobufError`).

    Example:
        >>> decode(encode_unknown("v1", "Namespace", bytes([0x0a, 0x05, 0x0a, 0x03]) + b"foo"))
        {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': 'foo'}}
        >>> try:
        ...     decode(encode_unknown("apps/v1", "Deployment", b""))
        ... except ProtobufError as err:
        ...     print(err.unsupported, err)
        True apps/v1 Deployment is not decoded from protobuf here
    """
    if not body.startswith(MAGIC):
        raise ProtobufError("the body does not start with the Kubernetes protobuf prefix")
    api_version = kind = ""
    raw = b""
    for number, _, value in _fields(body[len(MAGIC) :]):
        if number == 1 and isinstance(value, bytes):
            for n, _, v in _fields(value):
                if n == 1:
                    api_version = _text(v)
                elif n == 2:
                    kind = _text(v)
        elif number == 2 and isinstance(value, bytes):
            raw = value
        elif number == 3 and value:
            raise ProtobufError("content encodings are not supported")
    message = _KINDS.get((api_version, kind))
    if message is None:
        raise ProtobufError(f"{api_version} {kind} is not decoded from protobuf here", unsupported=True)
    return {"apiVersion": api_version, "kind": kind, **_message(raw, message)}


def _length_delimited(number: int, payload: bytes) -> bytes:
    out = bytearray([number << 3 | 2])
    size = len(payload)
    while True:
        byte = size & 0x7F
        size >>= 7
        out.append(byte | (0x80 if size else 0))
        if not size:
            return bytes(out) + payload


def encode_unknown(api_version: str, kind: str, raw: bytes) -> bytes:
    """A Kubernetes protobuf body: the magic and a ``runtime.Unknown`` around an encoded object.

    Example:
        >>> encode_unknown("v1", "Namespace", b"")[:6]
        b'k8s\\x00\\n\\x0f'
    """
    type_meta = _length_delimited(1, api_version.encode()) + _length_delimited(2, kind.encode())
    return MAGIC + _length_delimited(1, type_meta) + _length_delimited(2, raw)
