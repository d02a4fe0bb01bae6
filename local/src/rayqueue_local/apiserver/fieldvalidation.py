"""``fieldValidation=Strict|Warn|Ignore``: unknown and duplicate fields in create, update and patch bodies.

As upstream (KEP-2885; ``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/{create,update,patch}.go``):

* the default is ``Warn``; another value is a 422 naming the supported values;
* ``Strict`` refuses a body with an unknown field (not in the CRD's structural schema, or not a field
  of the built-in kind: :mod:`~rayqueue_local.registry.knownfields`) or a duplicate JSON field, with a
  400 BadRequest: ``RayCluster in version "v1" cannot be handled as a RayCluster: strict decoding error:
  unknown field "spec.foo"`` for a create or update, ``strict decoding error: ...`` for a merge, JSON
  or strategic patch (judged on what the patch writes), and for an apply patch the field manager's
  ``failed to create typed patch object (...): .spec.foo: field not declared in schema`` or the YAML
  decoder's ``error strict decoding YAML: ... key "a" already set in map``;
* ``Warn`` accepts the body, drops the unknown fields and answers one ``Warning: 299 - "unknown field
  \\"spec.foo\\""`` per problem (kubectl prints them);
* ``Ignore`` drops them silently.

One difference is kept on purpose: upstream's field manager refuses an unknown field in an apply patch
whatever the directive; here ``Warn`` and ``Ignore`` drop it as they do for other patches.

Example:
    >>> from rayqueue_local.registry.registry import Registry
    >>> rt = Registry().get("configmaps")
    >>> check_object(rt, "v1", {"metadata": {"name": "c"}, "dta": {}}, [], "Warn", operation="create")
    ['unknown field "dta"']
    >>> warning_header(['unknown field "dta"'])
    '299 - "unknown field \\\\"dta\\\\""'
"""

from __future__ import annotations

import json
from typing import Any

from rayqueue_local.apimachinery.status import HTTPError
from rayqueue_local.apiserver.http import query_str
from rayqueue_local.registry.knownfields import prune_unknown, unknown_patch_paths, unknown_paths
from rayqueue_local.registry.resourcetypes import ResourceType

__all__ = ["DIRECTIVES", "check_apply", "check_object", "check_patch", "directive", "warning_header"]

#: The values ``fieldValidation`` takes (an empty one means ``Warn``).
DIRECTIVES = ("Ignore", "Warn", "Strict")

_OPTIONS_KIND = {"create": "CreateOptions", "update": "UpdateOptions", "patch": "PatchOptions"}


def directive(query: dict[str, list[str]], verb: str) -> str:
    """The request's directive (``Warn`` when absent); anything else is upstream's 422.

    Example:
        >>> directive({}, "create"), directive({"fieldValidation": ["Strict"]}, "patch")
        ('Warn', 'Strict')
    """
    value = query_str(query, "fieldValidation")
    if value in (None, ""):
        return "Warn"
    if value in DIRECTIVES:
        return value
    kind = _OPTIONS_KIND.get(verb, "CreateOptions")
    message = f'Unsupported value: "{value}": supported values: "", "Ignore", "Strict", "Warn"'
    raise HTTPError.make(
        422,
        "Invalid",
        f'{kind}.meta.k8s.io "" is invalid: fieldValidation: {message}',
        details={"group": "meta.k8s.io", "kind": kind},
        causes=[{"reason": "FieldValueNotSupported", "message": message, "field": "fieldValidation"}],
    )


def warning_header(warnings: list[str]) -> str:
    """The ``Warning`` header value for ``warnings``: code 299, agent ``-``, the text quoted as Go's
    ``strconv.Quote`` does (non-ASCII escaped, so the header stays Latin-1)."""
    return ", ".join(f"299 - {json.dumps(w)}" for w in warnings)


def _errors(duplicates: list[str], unknown: list[str]) -> list[str]:
    return [f'duplicate field "{d}"' for d in duplicates] + [f'unknown field "{u}"' for u in unknown]


def check_object(
    rt: ResourceType,
    version: str,
    obj: dict[str, Any],
    duplicates: list[str],
    mode: str,
    *,
    operation: str,
) -> list[str]:
    """Check a create/update body (``version`` is the request's); returns the warnings to send.

    ``Strict`` raises the 400; otherwise the unknown fields are dropped from ``obj`` in place.
    """
    if mode == "Ignore":
        prune_unknown(rt, version, obj)
        return []
    errors = _errors(duplicates, unknown_paths(rt, version, obj))
    if errors and mode == "Strict":
        raise HTTPError.bad_request(
            f'{rt.kind} in version "{version}" cannot be handled as a {rt.kind}: '
            "strict decoding error: " + ", ".join(errors)
        )
    if errors:
        prune_unknown(rt, version, obj)
    return errors


def check_patch(
    rt: ResourceType, version: str, patch: Any, patch_type: str, duplicates: list[str], mode: str
) -> list[str]:
    """Check what a merge, strategic or JSON patch writes; returns the warnings (``Strict`` raises).

    The stored object has no unknown field, so those of the patched object are the ones the patch
    brings; the store drops them from custom resources, and :func:`check_object`'s pruning is not
    needed for built-ins beyond what the patch itself holds.
    """
    if mode == "Ignore":
        if isinstance(patch, dict):
            prune_unknown(rt, version, patch)
        return []
    if patch_type == "json":
        unknown = unknown_patch_paths(rt, version, patch if isinstance(patch, list) else [])
    else:
        unknown = unknown_paths(rt, version, _without_directives(patch))
    errors = _errors(duplicates, unknown)
    if errors and mode == "Strict":
        raise HTTPError.bad_request("strict decoding error: " + ", ".join(errors))
    if errors and isinstance(patch, dict):
        _prune_patch(rt, version, patch)
    return errors


def _without_directives(value: Any) -> Any:
    """A merge/strategic patch without its ``$patch``-style directives and deletions (``null``)."""
    if isinstance(value, dict):
        return {
            k: _without_directives(v) for k, v in value.items() if not k.startswith("$") and v is not None
        }
    if isinstance(value, list):
        return [_without_directives(v) for v in value]
    return value


def _prune_patch(rt: ResourceType, version: str, patch: dict[str, Any]) -> None:
    """Drop unknown fields from a merge/strategic patch, keeping its directives and ``null`` deletions."""
    kept = {k: v for k, v in patch.items() if k.startswith("$")}
    prune_unknown(rt, version, patch)
    patch.update(kept)


def check_apply(
    rt: ResourceType,
    version: str,
    patch: dict[str, Any],
    yaml_duplicates: list[str],
    mode: str,
) -> list[str]:
    """Check a server-side apply patch; returns the warnings (``Strict`` raises the field manager's 400)."""
    if mode == "Ignore":
        prune_unknown(rt, version, patch)
        return []
    warnings: list[str] = []
    duplicate_error = ""
    if yaml_duplicates:
        duplicate_error = "error converting YAML to JSON: yaml: unmarshal errors:\n  " + "\n  ".join(
            yaml_duplicates
        )
        if mode == "Strict":
            raise HTTPError.bad_request(f"error strict decoding YAML: {duplicate_error}")
        warnings.append(duplicate_error)
    unknown = unknown_paths(rt, version, patch)
    if unknown and mode == "Strict":
        meta = patch.get("metadata") if isinstance(patch.get("metadata"), dict) else {}
        gvk = f"{rt.api_version_for(version)}, Kind={rt.kind}"
        where = f"{(meta or {}).get('namespace') or ''}/{(meta or {}).get('name') or ''}"
        lines = [f".{p}: field not declared in schema" for p in unknown]
        detail = lines[0] if len(lines) == 1 else "errors:\n  " + "\n  ".join(lines)
        raise HTTPError.bad_request(f"failed to create typed patch object ({gvk}; {where}): {detail}")
    if unknown:
        prune_unknown(rt, version, patch)
    return warnings + _errors([], unknown)
