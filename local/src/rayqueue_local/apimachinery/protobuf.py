"""Decoding Kubernetes protobuf bodies (``application/vnd.kubernetes.protobuf``) of the built-in kinds.

kubectl's typed clients send protobuf: ``kubectl create namespace|configmap|secret|serviceaccount``,
``create deployment|job|cronjob``, ``create role|rolebinding|clusterrole|clusterrolebinding``, ``create
service ...``, ``create ingress``; client-go does not fall back to JSON when a server answers 415, so
this server decodes them. The format [k8s.io/apimachinery/pkg/runtime/serializer/protobuf]: the 4-byte
magic ``k8s\\x00``, then a ``runtime.Unknown`` message (1: ``typeMeta`` {1: apiVersion, 2: kind},
2: ``raw`` — the object's own message —, 3: contentEncoding, 4: contentType).

The object messages follow k8s.io/api's ``generated.proto`` (the field tables of
:mod:`~rayqueue_local.apimachinery.prototables`, generated from upstream) and apimachinery's
``meta/v1``, ``util/intstr`` and ``api/resource`` messages (the tables below). The result
is what Go's encoding/json writes for the struct the body unmarshals into, so the same object sent as
JSON and as protobuf is stored alike:

- a field with ``omitempty`` is left out when Go's zero value (``""``, ``0``, ``false``, a nil
  pointer, an empty slice or map); structs are never left out (``"status": {}``), so a ``Time``
  that is not set reads ``null`` (``"creationTimestamp": null``), as ``kubectl create --dry-run
  -o json`` shows;
- a field without ``omitempty`` is always written: its zero value, or ``null`` for a nil slice, map
  or pointer; a pointer that was sent keeps its value, ``0`` and ``false`` included;
- embedded structs (``Probe``'s ``ProbeHandler``, ``Volume``'s ``VolumeSource``) are inlined;
- ``[]byte`` becomes base64, ``Time`` RFC 3339 in seconds, ``IntOrString`` a number or a string,
  ``Quantity`` its string form (``"0"`` when unset), ``FieldsV1`` its raw JSON.

A field number a table does not know, and a kind with no table, raise :class:`ProtobufError` with
``unsupported=True``, naming the message and the field: the API server answers 415
UnsupportedMediaType rather than drop a field the client sent.

Example:
    >>> body = encode_unknown("v1", "ConfigMap", bytes([0x0a, 0x04, 0x0a, 0x02]) + b"cm"
    ...     + bytes([0x12, 0x06, 0x0a, 0x01]) + b"a" + bytes([0x12, 0x01]) + b"b")
    >>> decoded = decode(body)
    >>> decoded["metadata"], decoded["data"]
    ({'name': 'cm', 'creationTimestamp': None}, {'a': 'b'})
"""

from __future__ import annotations

import base64
import datetime
import json
from collections.abc import Callable
from typing import Any

from rayqueue_local.apimachinery import protowire
from rayqueue_local.apimachinery.gotypes import MESSAGES
from rayqueue_local.errors import LocalControlPlaneError

__all__ = ["MAGIC", "MEDIA_TYPE", "ProtobufError", "decode", "encode_unknown", "supported_kinds"]

#: The media type of Kubernetes protobuf bodies.
MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
#: The 4 bytes every Kubernetes protobuf body starts with.
MAGIC = protowire.MAGIC

_MAX_DEPTH = 48


class ProtobufError(LocalControlPlaneError, ValueError):
    """A protobuf body that cannot be decoded; ``unsupported`` when the body is well-formed but uses a
    kind or a field this server has no table for.

    Example:
        >>> ProtobufError("bad", unsupported=True).unsupported
        True
    """

    def __init__(self, message: str, *, unsupported: bool = False) -> None:
        super().__init__(message)
        self.unsupported = unsupported


_TABLES = MESSAGES

#: (apiVersion, kind) -> the message of the kinds decoded.
_KINDS: dict[tuple[str, str], str] = {
    **{("v1", k): f"core/v1.{k}" for k in ("Namespace", "ConfigMap", "Secret", "ServiceAccount")},
    **{("v1", k): f"core/v1.{k}" for k in ("Pod", "Service", "PodTemplate")},
    **{("apps/v1", k): f"apps/v1.{k}" for k in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")},
    **{("batch/v1", k): f"batch/v1.{k}" for k in ("Job", "CronJob")},
    **{
        ("rbac.authorization.k8s.io/v1", k): f"rbac/v1.{k}"
        for k in ("Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")
    },
    ("networking.k8s.io/v1", "Ingress"): "networking/v1.Ingress",
}


def supported_kinds() -> list[tuple[str, str]]:
    """The ``(apiVersion, kind)`` pairs whose protobuf bodies are decoded.

    Example:
        >>> ("apps/v1", "Deployment") in supported_kinds(), supported_kinds()[0]
        (True, ('apps/v1', 'DaemonSet'))
    """
    return sorted(_KINDS)


# -- the wire format -----------------------------------------------------------------------------
def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """One message's fields (:func:`~rayqueue_local.apimachinery.protowire.fields`), errors as ours."""
    try:
        return protowire.fields(data)
    except protowire.ProtoError as err:
        raise ProtobufError(f"malformed protobuf: {err}") from None


def _text(value: Any, where: str) -> str:
    if not isinstance(value, bytes):
        raise ProtobufError(f"{where}: a string field is not length-delimited")
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtobufError(f"{where}: a string field is not valid UTF-8") from None


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _varint_list(data: bytes, where: str) -> list[int]:
    """A packed repeated varint field (proto3 style; proto2 writers send one field per element)."""
    out, pos = [], 0
    while pos < len(data):
        value = shift = 0
        while True:
            if pos >= len(data) or shift > 63:
                raise ProtobufError(f"{where}: truncated packed varints")
            byte = data[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                break
            shift += 7
        out.append(_signed(value))
    return out


# -- the apimachinery types with a JSON form of their own ------------------------------------------
def _scalars(data: bytes, name: str, kinds: dict[int, str]) -> dict[int, Any]:
    """The fields of a small special message by number; an unknown number is unsupported."""
    out: dict[int, Any] = {}
    for number, wire, raw in _fields(data):
        kind = kinds.get(number)
        if kind is None:
            raise ProtobufError(f"field {number} of {name} is not known here", unsupported=True)
        where = f"{name} field {number}"
        if kind == "int":
            if wire != 0:
                raise ProtobufError(f"{where}: a number field is not a varint")
            out[number] = _signed(raw)
        elif kind == "string":
            out[number] = _text(raw, where)
        elif not isinstance(raw, bytes):
            raise ProtobufError(f"{where}: a bytes field is not length-delimited")
        else:
            out[number] = raw
    return out


def _time(data: bytes) -> str | None:
    # metav1.Time's Unmarshal (time_proto.go): empty data is the zero time, which is JSON null;
    # otherwise time.Unix(seconds, 0): the nanoseconds are dropped, and JSON has RFC 3339 in seconds.
    if not data:
        return None
    parts = _scalars(data, "meta/v1.Time", {1: "int", 2: "int"})
    try:
        when = datetime.datetime.fromtimestamp(parts.get(1, 0), tz=datetime.UTC)
    except (OverflowError, OSError, ValueError):
        raise ProtobufError("meta/v1.Time: seconds out of range") from None
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _int_or_string(data: bytes) -> int | str:
    parts = _scalars(data, "intstr.IntOrString", {1: "int", 2: "int", 3: "string"})
    return str(parts.get(3, "")) if parts.get(1, 0) == 1 else int(parts.get(2, 0))


def _quantity(data: bytes) -> str:
    return str(_scalars(data, "resource.Quantity", {1: "string"}).get(1, "")) or "0"


def _fields_v1(data: bytes) -> Any:
    raw = _scalars(data, "meta/v1.FieldsV1", {1: "bytes"}).get(1)
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        raise ProtobufError("meta/v1.FieldsV1: the raw field is not JSON") from None


_SPECIAL: dict[str, Callable[[bytes], Any]] = {
    "meta/v1.Time": _time,
    "meta/v1.FieldsV1": _fields_v1,
    "intstr.IntOrString": _int_or_string,
    "resource.Quantity": _quantity,
}


# -- messages ------------------------------------------------------------------------------------
def _value(kind: str, wire: int, raw: Any, where: str, depth: int) -> Any:
    if kind == "string":
        return _text(raw, where)
    if kind in ("int", "bool"):
        if wire != 0:
            raise ProtobufError(f"{where}: a number field is not a varint")
        return bool(raw) if kind == "bool" else _signed(raw)
    if not isinstance(raw, bytes):
        raise ProtobufError(f"{where}: a message field is not length-delimited")
    if kind == "bytes":
        return base64.b64encode(raw).decode("ascii")
    return _message(raw, kind, depth + 1)


def _map_entry(raw: Any, kind: str, where: str, depth: int) -> tuple[str, Any]:
    if not isinstance(raw, bytes):
        raise ProtobufError(f"{where}: a map entry is not length-delimited")
    key, value = "", None
    for number, wire, item in _fields(raw):
        if number == 1:
            key = _text(item, where)
        elif number == 2:
            value = _value(kind, wire, item, where, depth)
        else:
            raise ProtobufError(
                f"field {number} of a map entry in {where} is not known here", unsupported=True
            )
    if value is None:  # a map value that was not sent: Go's zero value of the value type
        value = "" if kind in ("string", "bytes") else _message(b"", kind, depth + 1)
    return key, value


def _zero(kind: str, flags: str, depth: int) -> Any:
    """What Go's encoding/json writes for a field the body did not carry."""
    if "p" in flags or kind.startswith(("[]", "map")) or kind == "bytes":
        return None
    if kind == "string":
        return ""
    if kind == "int":
        return 0
    if kind == "bool":
        return False
    return _message(b"", kind, depth + 1)


def _empty(value: Any, kind: str, flags: str) -> bool:
    """Go's ``omitempty``: nil pointers, empty slices and maps, zero scalars; never a struct."""
    if "p" in flags:
        return value is None
    if kind.startswith(("[]", "map")) or kind in ("string", "int", "bool", "bytes"):
        return not value
    return False


def _message(data: bytes, name: str, depth: int = 0) -> Any:
    if depth > _MAX_DEPTH:
        raise ProtobufError("message nested too deeply")
    special = _SPECIAL.get(name)
    if special is not None:
        return special(data)
    table = _TABLES[name]
    got: dict[int, Any] = {}
    for number, wire, raw in _fields(data):
        spec = table.get(number)
        if spec is None:
            raise ProtobufError(f"field {number} of {name} is not known here", unsupported=True)
        key, kind, _ = spec
        where = f"{name}.{key or kind}"
        if kind.startswith("map"):
            k, v = _map_entry(raw, kind[3:], where, depth)
            got.setdefault(number, {})[k] = v
        elif kind.startswith("[]"):
            item_kind = kind[2:]
            if item_kind in ("int", "bool") and wire == 2:
                items: list[Any] = _varint_list(raw, where)
                got.setdefault(number, []).extend(bool(i) if item_kind == "bool" else i for i in items)
            else:
                got.setdefault(number, []).append(_value(item_kind, wire, raw, where, depth))
        else:
            got[number] = _value(kind, wire, raw, where, depth)
    out: dict[str, Any] = {}
    for number, (key, kind, flags) in table.items():
        value = got[number] if number in got else _zero(kind, flags, depth)
        if "i" in flags:
            out.update(value)
        elif not ("o" in flags and _empty(value, kind, flags)):
            out[key] = value
    return out


def decode(body: bytes) -> dict[str, Any]:
    """The JSON form of a Kubernetes protobuf body (raises :class:`ProtobufError`).

    Example:
        >>> ns = decode(encode_unknown("v1", "Namespace", bytes([0x0a, 0x05, 0x0a, 0x03]) + b"foo"))
        >>> ns["kind"], ns["metadata"], ns["spec"], ns["status"]
        ('Namespace', {'name': 'foo', 'creationTimestamp': None}, {}, {})
        >>> try:
        ...     decode(encode_unknown("policy/v1", "PodDisruptionBudget", b""))
        ... except ProtobufError as err:
        ...     print(err.unsupported, err)
        True policy/v1 PodDisruptionBudget is not decoded from protobuf here
        >>> try:
        ...     decode(encode_unknown("v1", "Namespace", bytes([0x20, 0x01])))
        ... except ProtobufError as err:
        ...     print(err.unsupported, err)
        True field 4 of core/v1.Namespace is not known here
    """
    if not body.startswith(MAGIC):
        raise ProtobufError("the body does not start with the Kubernetes protobuf prefix")
    api_version = kind = ""
    raw = b""
    for number, _, value in _fields(body[len(MAGIC) :]):
        if number == 1 and isinstance(value, bytes):
            for n, _, v in _fields(value):
                if n == 1:
                    api_version = _text(v, "runtime.Unknown typeMeta")
                elif n == 2:
                    kind = _text(v, "runtime.Unknown typeMeta")
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
