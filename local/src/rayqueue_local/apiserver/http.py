"""Parsing of Kubernetes REST requests: path -> :class:`RequestInfo`, query string, bodies.

Follows the API server's ``RequestInfoFactory``: ``/api/v1/...`` is the core group,
``/apis/{group}/{version}/...`` the others; ``namespaces/{ns}`` selects a namespace; a trailing
``/{name}/{subresource}`` addresses one object or its subresource; the HTTP method and the
presence of a name (and ``?watch=true``) give the verb.

Example:
    >>> info = parse_request("GET", "/apis/ray.io/v1/namespaces/team-a/rayclusters/demo/status", {})
    >>> (info.verb, info.group, info.version, info.namespace, info.resource, info.name, info.subresource)
    ('get', 'ray.io', 'v1', 'team-a', 'rayclusters', 'demo', 'status')
    >>> parse_request("GET", "/api/v1/pods", {"watch": ["true"]}).verb
    'watch'
    >>> parse_request("GET", "/api/v1/namespaces/team-a", {}).resource
    'namespaces'
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from rayqueue_local.apimachinery import protobuf
from rayqueue_local.apimachinery.limits import MAX_DEPTH, YAMLLimitError, check_depth, load_yaml
from rayqueue_local.apimachinery.status import HTTPError

__all__ = [
    "MAX_BODY_BYTES",
    "RequestInfo",
    "Response",
    "parse_body",
    "parse_request",
    "query_bool",
    "query_int",
    "query_str",
]

#: etcd's default request size limit (``--max-request-bytes`` 1.5 MiB + overhead): the API server
#: rejects larger bodies with 413 RequestEntityTooLarge. We use 3 MiB like kube-apiserver's own cap.
MAX_BODY_BYTES = 3 * 1024 * 1024

_METHOD_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}
_NAMESPACE_SUBRESOURCES = {"status", "finalize"}


@dataclass
class Response:
    """What a handler returns: a JSON body, or a stream of chunks (watch).

    Example:
        >>> Response(200, {"kind": "Status"}).code
        200
    """

    code: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    stream: Iterator[bytes] | None = None


@dataclass(frozen=True)
class RequestInfo:
    """What a resource request addresses. ``kind`` is ``"resource"``, ``"discovery"`` or ``"other"``.

    Example:
        >>> parse_request("DELETE", "/api/v1/namespaces/a/pods", {}).verb
        'deletecollection'
    """

    kind: str
    verb: str
    path: str
    prefix: str = ""  # "api" | "apis"
    group: str = ""
    version: str = ""
    namespace: str | None = None
    resource: str = ""
    name: str = ""
    subresource: str = ""

    @property
    def group_version(self) -> str:
        """``v1`` or ``group/version``."""
        return f"{self.group}/{self.version}" if self.group else self.version


def parse_request(method: str, path: str, query: dict[str, list[str]]) -> RequestInfo:
    """Classify a request by method, path (without query) and parsed query string."""
    parts = [p for p in path.split("/") if p]
    if not parts or parts[0] not in ("api", "apis"):
        return RequestInfo("other", method.lower(), path)
    prefix = parts[0]
    rest = parts[1:]
    if prefix == "api":
        group = ""
        if not rest:
            return RequestInfo("discovery", "get", path, prefix)
        version, rest = rest[0], rest[1:]
    else:
        if len(rest) < 2:
            return RequestInfo("discovery", "get", path, prefix, group=rest[0] if rest else "")
        group, version, rest = rest[0], rest[1], rest[2:]
    if not rest:
        return RequestInfo("discovery", "get", path, prefix, group, version)

    watch_path = False
    if rest[0] == "watch":  # deprecated /watch/ paths
        watch_path, rest = True, rest[1:]
        if not rest:
            raise HTTPError.not_found_resource()

    namespace: str | None = None
    # /namespaces/{ns}/<resource>...; otherwise the Namespace object itself (or its status/finalize)
    if rest[0] == "namespaces" and len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
        namespace, rest = rest[1], rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if len(rest) > 3:
        raise HTTPError.not_found_resource()

    if watch_path or (method == "GET" and query_bool(query, "watch")):
        verb = "watch"
    elif method in ("GET", "HEAD"):
        verb = "get" if name else "list"
    elif method == "DELETE":
        verb = "delete" if name else "deletecollection"
    else:
        verb = _METHOD_VERBS.get(method, method.lower())
    return RequestInfo("resource", verb, path, prefix, group, version, namespace, resource, name, subresource)


def query_str(query: dict[str, list[str]], key: str, default: str | None = None) -> str | None:
    """The last value of ``key`` in the query, or ``default``.

    Example:
        >>> query_str({"limit": ["5"]}, "limit")
        '5'
    """
    values = query.get(key)
    return values[-1] if values else default


def query_bool(query: dict[str, list[str]], key: str) -> bool:
    """A boolean query parameter (``true``/``1``).

    Example:
        >>> query_bool({"watch": ["1"]}, "watch"), query_bool({}, "watch")
        (True, False)
    """
    return (query_str(query, key) or "").lower() in ("true", "1")


def query_int(query: dict[str, list[str]], key: str) -> int | None:
    """An integer query parameter; a malformed one is a 400 BadRequest.

    Example:
        >>> query_int({"limit": ["10"]}, "limit")
        10
    """
    raw = query_str(query, key)
    if raw in (None, ""):
        return None
    try:
        return int(str(raw))
    except ValueError:
        raise HTTPError.bad_request(
            f'invalid value for {key}: strconv.ParseInt: parsing "{raw}": invalid syntax'
        ) from None


def parse_body(raw: bytes, content_type: str) -> Any:
    """Decode a JSON body (or YAML for ``application/apply-patch+yaml`` and ``application/yaml``, or
    Kubernetes protobuf for the built-in kinds :mod:`~rayqueue_local.apimachinery.protobuf` decodes; 415
    UnsupportedMediaType, with the reason, for any other kind or a field number it has no table for).

    Malformed input is a 400 BadRequest worded like the API server's decoder errors.

    Example:
        >>> parse_body(b'{"a": 1}', "application/json")
        {'a': 1}
        >>> parse_body(b"a: 1", "application/apply-patch+yaml")
        {'a': 1}
        >>> try:
        ...     parse_body(b"{oops", "application/json")
        ... except HTTPError as e:
        ...     print(e.code, e.body["reason"])
        400 BadRequest
        >>> try:
        ...     parse_body(b'{"a": NaN}', "application/json")
        ... except HTTPError as e:
        ...     print(e.body["message"])
        couldn't get version/kind; json parse error: invalid character 'N' looking for beginning of value
    """
    media = content_type.split(";")[0].strip().lower()
    if not raw.strip():
        raise HTTPError.bad_request("the body of the request was in an unknown format - empty body")
    if media == protobuf.MEDIA_TYPE:
        try:
            return protobuf.decode(raw)
        except protobuf.ProtobufError as err:
            if err.unsupported:
                raise HTTPError.make(
                    415,
                    "UnsupportedMediaType",
                    "the body of the request was in an unknown format - accepted media types include: "
                    f"application/json, application/yaml ({err})",
                ) from None
            raise HTTPError.bad_request(f"the body of the request was in an unknown format - {err}") from None
    if media.endswith("yaml"):
        try:
            return load_yaml(raw.decode("utf-8"), max_bytes=MAX_BODY_BYTES)
        except (yaml.YAMLError, UnicodeDecodeError, YAMLLimitError) as err:
            raise HTTPError.bad_request(f"error converting YAML to JSON: {_one_line(err)}") from None
    try:
        text = raw.decode("utf-8")  # JSON on the wire is UTF-8 (RFC 8259); no UTF-16/32 sniffing
    except UnicodeDecodeError as err:
        raise HTTPError.bad_request(
            "couldn't get version/kind; json parse error: invalid character "
            f"'\\x{raw[err.start]:02x}' (not UTF-8) at offset {err.start}"
        ) from None
    try:
        return check_depth(json.loads(text, parse_constant=_no_constant))
    except YAMLLimitError as err:
        raise HTTPError.bad_request(f"couldn't get version/kind; json parse error: {err}") from None
    except RecursionError:  # the decoder's own recursion, on nesting far past MAX_DEPTH
        raise HTTPError.bad_request(
            f"couldn't get version/kind; json parse error: nested more than {MAX_DEPTH} levels deep"
        ) from None
    except (ValueError, UnicodeDecodeError) as err:
        raise HTTPError.bad_request(
            f"couldn't get version/kind; json parse error: {_one_line(err)}"
        ) from None


def _no_constant(name: str) -> Any:
    """``NaN``, ``Infinity`` and ``-Infinity`` are not JSON (Go's decoder refuses them too)."""
    raise ValueError(f"invalid character {name[0]!r} looking for beginning of value")


def _one_line(err: Exception) -> str:
    return " ".join(str(err).split())
