"""What a REST request carries besides its object, read and checked as the API server does: the media
type of its body and of its answer, ``fieldManager``, ``dryRun``, a delete's ``DeleteOptions``, a patch
body applied by its type, duplicate fields turned into warnings. :mod:`.rest` calls these.

Example:
    >>> accepts_json("application/json, */*"), is_dry_run({"dryRun": ["All"]})
    (True, True)
"""

from __future__ import annotations

from typing import Any

from rayqueue_local.apimachinery import patch as patches
from rayqueue_local.apimachinery.status import HTTPError
from rayqueue_local.apimachinery.strictjson import loads_checked, yaml_duplicate_keys
from rayqueue_local.apiserver import fieldvalidation
from rayqueue_local.apiserver.http import RequestInfo, Response, parse_body, query_str
from rayqueue_local.registry.registry import ResourceType

__all__ = [
    "BODY_TYPES",
    "FIELD_MANAGER_MAX_LENGTH",
    "accepts_json",
    "add_warnings",
    "delete_options",
    "is_dry_run",
    "field_manager",
    "duplicate_fields",
    "media_type",
    "not_acceptable",
    "patch_error",
    "patched",
]


def accepts_json(accept: str | None) -> bool:
    """Whether an ``Accept`` header admits JSON (absent or empty: yes).

    Example:
        >>> accepts_json("application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
        False
        >>> accepts_json("application/json, */*"), accepts_json(None)
        (True, True)
    """
    if not accept or not accept.strip():
        return True
    media = {part.split(";")[0].strip().lower() for part in accept.split(",")}
    return bool(media & {"application/json", "application/*", "*/*", "*"})


#: The media types a create or update body may have. Protobuf is decoded for the core kinds kubectl
#: sends it for (:mod:`~rayqueue_local.apimachinery.protobuf`); any other kind's protobuf body is a 415.
BODY_TYPES = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")


#: Upstream's ``FieldManagerMaxLength`` (k8s.io/apimachinery/pkg/apis/meta/v1/validation).
FIELD_MANAGER_MAX_LENGTH = 128


def field_manager(query: Any, options_kind: str) -> str | None:
    """The ``fieldManager`` parameter, checked as upstream's ``ValidateFieldManager``: at most 128
    bytes, printable characters only (422 Invalid on the request's options object).

    Example:
        >>> field_manager({"fieldManager": ["kubectl"]}, "PatchOptions")
        'kubectl'
        >>> try:
        ...     field_manager({"fieldManager": ["m" * 129]}, "PatchOptions")
        ... except HTTPError as e:
        ...     print(e.body["message"])
        PatchOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes
    """
    manager = query_str(query, "fieldManager")
    if manager is None:
        return None
    problem = None
    if len(manager.encode()) > FIELD_MANAGER_MAX_LENGTH:
        problem = f"Too long: may not be more than {FIELD_MANAGER_MAX_LENGTH} bytes"
    else:
        bad = next(((i, ch) for i, ch in enumerate(manager) if not ch.isprintable()), None)
        if bad is not None:
            problem = (
                f'Invalid value: "{manager}": invalid character U+{ord(bad[1]):04X} (at position {bad[0]})'
            )
    if problem is None:
        return manager
    raise HTTPError.make(
        422,
        "Invalid",
        f'{options_kind}.meta.k8s.io "" is invalid: fieldManager: {problem}',
        causes=[{"reason": "FieldValueInvalid", "field": "fieldManager", "message": problem}],
    )


def media_type(headers: Any) -> str:
    """The request's ``Content-Type`` without parameters, lower case (default JSON)."""
    return (headers.get("Content-Type") or "application/json").split(";")[0].strip().lower()


def delete_options(query: Any, headers: Any, body: bytes) -> dict[str, Any]:
    """A delete's ``DeleteOptions``: its body, and ``propagationPolicy`` from the query (checked)."""
    options: dict[str, Any] = {}
    if body.strip():
        parsed = parse_body(body, media_type(headers))
        if not isinstance(parsed, dict):
            raise HTTPError.bad_request("DeleteOptions must be an object")
        options = parsed
    policy = query_str(query, "propagationPolicy")
    if policy:
        options["propagationPolicy"] = policy
    if options.get("propagationPolicy") not in (None, "Background", "Foreground", "Orphan"):
        raise HTTPError.make(
            422,
            "Invalid",
            f'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
            f'"{options["propagationPolicy"]}": supported values: "Foreground", "Background", "Orphan"',
        )
    return options


def add_warnings(response: Response, warnings: list[str]) -> Response:
    """Add ``Warning: 299`` headers (one comma-separated value, as RFC 7234 allows) to a response."""
    if warnings:
        value = fieldvalidation.warning_header(warnings)
        existing = response.headers.get("Warning")
        response.headers["Warning"] = f"{existing}, {value}" if existing else value
    return response


def duplicate_fields(body: bytes, media: str) -> list[str]:
    """The duplicate fields of a JSON body (already parsed once, so it is well-formed)."""
    if media.endswith("yaml"):
        return yaml_duplicate_keys(body.decode("utf-8", "replace"))
    try:
        return loads_checked(body)[1]
    except (ValueError, RecursionError):
        return []


def not_acceptable(kind: str) -> HTTPError:
    """The 406 of a transformation that does not fit the request (a list asked of a get, ...)."""
    return HTTPError.make(406, "NotAcceptable", f"the requested object cannot be returned as {kind}")


def patched(
    obj: dict[str, Any],
    patch: Any,
    patch_type: str,
    info: RequestInfo,
    rt: ResourceType,
    *,
    strategic: bool = True,
) -> dict[str, Any]:
    """``obj`` with ``patch`` applied: a JSON patch, a merge patch, or else a strategic merge patch (a merge
    patch where not ``strategic``: the ``/scale`` subresource); its errors as the API server's."""
    try:
        if patch_type == "json":
            return patches.json_patch(obj, patch)
        if patch_type == "merge" or not strategic:
            return patches.merge_patch(obj, patch)
        return patches.strategic_merge_patch(obj, patch)
    except patches.PatchError as err:
        raise patch_error(err, info, rt) from None


def patch_error(err: Any, info: RequestInfo, rt: ResourceType) -> HTTPError:
    """A patch algorithm's error as the API server's ``Status`` (details name the object)."""
    details = {"name": info.name, "group": rt.group, "kind": rt.kind if err.code == 422 else rt.plural}
    return HTTPError.make(err.code, err.reason, err.message, details=details, causes=err.causes)


def is_dry_run(query: dict[str, list[str]]) -> bool:
    """Whether ``dryRun=All`` was asked (400 for any other value)."""
    values = query.get("dryRun") or []
    for v in values:
        if v not in ("All", ""):
            raise HTTPError.bad_request(f'dryRun: Unsupported value: "{v}": supported values: "All"')
    return "All" in values
