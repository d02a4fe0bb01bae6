"""Reading Kubernetes protobuf bodies: the ``k8s\\x00`` envelope and the protocol buffers wire format.

Typed clients (kubectl's among them) send built-in kinds as ``application/vnd.kubernetes.protobuf``:
the four magic bytes ``k8s\\x00``, then a ``runtime.Unknown`` message whose ``raw`` field holds the
object itself (``k8s.io/apimachinery/pkg/runtime/serializer/protobuf``). :func:`unwrap` opens the
envelope; :func:`decode` reads a message by a small field table (:data:`MessageSpec`: field number ->
name, kind and, for messages, the nested table), skipping fields it does not name, as protobuf
readers do. Only what the server needs is described; this is no general protobuf library.

Malformed input raises :class:`ProtoError`.

Example:
    >>> spec = {1: ("namespace", "string", None), 2: ("verbs", "repeated string", None)}
    >>> decode(b"\\x0a\\x02ns\\x12\\x03get\\x12\\x04list", spec)
    {'namespace': 'ns', 'verbs': ['get', 'list']}
    >>> unwrap(b"k8s\\x00" + b"\\x0a\\x0b\\x0a\\x02v1\\x12\\x05Thing" + b"\\x12\\x00")
    ('v1', 'Thing', b'')
"""

from __future__ import annotations

from typing import Any

from rayqueue_local.errors import LocalControlPlaneError

__all__ = ["MAGIC", "MessageSpec", "ProtoError", "decode", "fields", "unwrap"]

#: The prefix of every Kubernetes protobuf body.
MAGIC = b"k8s\x00"

#: ``{field number: (name, kind, nested spec)}``; kind is ``string``, ``bytes``, ``bool``, ``int``,
#: ``message`` or ``map`` (string -> string), optionally prefixed with ``repeated ``.
MessageSpec = dict[int, tuple[str, str, Any]]

_MAX_DEPTH = 32


class ProtoError(LocalControlPlaneError, ValueError):
    """A body that is not valid protobuf (or not the envelope expected).

    Example:
        >>> try:
        ...     decode(b"\\x0a\\x05ab", {1: ("a", "string", None)})
        ... except ProtoError as err:
        ...     print(err)
        truncated field 1
    """


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ProtoError("truncated or overlong varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def fields(data: bytes) -> list[tuple[int, int, Any]]:
    """``(field number, wire type, value)`` for each field of one message: an int (varint, fixed-size)
    or the bytes of a length-delimited field. The wire format's one reader, shared by
    :mod:`~rayqueue_local.apimachinery.protobuf`.

    Example:
        >>> fields(b"\\x08\\x96\\x01\\x12\\x02hi")
        [(1, 0, 150), (2, 2, b'hi')]
    """
    out: list[tuple[int, int, Any]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise ProtoError(f"truncated field {number}")
            value, pos = data[pos : pos + length], pos + length
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            if pos + size > len(data):
                raise ProtoError(f"truncated field {number}")
            value, pos = int.from_bytes(data[pos : pos + size], "little"), pos + size
        else:
            raise ProtoError(f"unsupported wire type {wire} of field {number}")
        if number == 0:
            raise ProtoError("field number 0")
        out.append((number, wire, value))
    return out


def decode(data: bytes, spec: MessageSpec, *, _depth: int = 0) -> dict[str, Any]:
    """The fields of one message that ``spec`` names, as a JSON-like dict (unknown fields skipped).

    Example:
        >>> decode(b"\\x08\\x01", {1: ("allowed", "bool", None)})
        {'allowed': True}
    """
    if _depth > _MAX_DEPTH:
        raise ProtoError("message nested too deeply")
    out: dict[str, Any] = {}
    for number, wire, value in fields(data):
        if number not in spec:
            continue
        name, kind, nested = spec[number]
        repeated = kind.startswith("repeated ")
        kind = kind.removeprefix("repeated ")
        if kind == "map":
            if wire != 2:
                raise ProtoError(f"field {number} is not length-delimited")
            entry = decode(
                value, {1: ("key", "string", None), 2: ("value", "string", None)}, _depth=_depth + 1
            )
            out.setdefault(name, {})[entry.get("key", "")] = entry.get("value", "")
            continue
        item = _scalar(number, wire, value, kind, nested, _depth)
        if repeated:
            out.setdefault(name, []).append(item)
        else:
            out[name] = item
    return out


def _scalar(number: int, wire: int, value: Any, kind: str, nested: Any, depth: int) -> Any:
    if kind in ("bool", "int"):
        if wire != 0:
            raise ProtoError(f"field {number} is not a varint")
        return bool(value) if kind == "bool" else value
    if wire != 2:
        raise ProtoError(f"field {number} is not length-delimited")
    if kind == "string":
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtoError(f"field {number} is not UTF-8") from None
    if kind == "message":
        return decode(value, nested or {}, _depth=depth + 1)
    return value  # bytes


_TYPE_META: MessageSpec = {1: ("apiVersion", "string", None), 2: ("kind", "string", None)}
_UNKNOWN: MessageSpec = {
    1: ("typeMeta", "message", _TYPE_META),
    2: ("raw", "bytes", None),
    3: ("contentEncoding", "string", None),
    4: ("contentType", "string", None),
}


def unwrap(body: bytes) -> tuple[str, str, bytes]:
    """``(apiVersion, kind, raw object bytes)`` of a Kubernetes protobuf body.

    Example:
        >>> unwrap(b"{}")
        Traceback (most recent call last):
        ...
        rayqueue_local.apimachinery.protowire.ProtoError: not a Kubernetes protobuf body (no k8s\\x00 prefix)
    """
    if not body.startswith(MAGIC):
        raise ProtoError("not a Kubernetes protobuf body (no k8s\\x00 prefix)")
    unknown = decode(body[len(MAGIC) :], _UNKNOWN)
    if unknown.get("contentEncoding"):
        raise ProtoError(f"unsupported content encoding {unknown['contentEncoding']!r}")
    meta = unknown.get("typeMeta") or {}
    return str(meta.get("apiVersion", "")), str(meta.get("kind", "")), bytes(unknown.get("raw", b""))
