"""Strategic merge patch (``application/strategic-merge-patch+json``), an approximation.

Upstream reads the merge key and strategy of every list from Go struct tags. Here a list merges by
key only when its field name is in :data:`MERGE_KEYS` and every element is an object carrying that
key; the primitive lists of :data:`MERGE_PRIMITIVE_LISTS` are unioned; any other list is replaced.
The directives supported are listed in :mod:`rayqueue_local.apimachinery.patch`'s docstring.
:data:`MERGE_KEYS` also gives server-side apply the map-list keys of the built-in types.

Example:
    >>> strategic_merge_patch({"metadata": {"finalizers": ["a"]}}, {"metadata": {"finalizers": ["b"]}})
    {'metadata': {'finalizers': ['a', 'b']}}
"""

from __future__ import annotations

from typing import Any

from rayqueue_local.apimachinery.patchcore import PatchError, deep_copy

__all__ = ["MERGE_KEYS", "MERGE_PRIMITIVE_LISTS", "strategic_merge_patch"]


#: list field name -> key fields of the built-in types' map-lists (strategic merge and apply).
#: ``ports`` is keyed by ``containerPort`` in containers and by ``port`` in services: an element
#: list merges by the first candidate every element carries.
MERGE_KEYS: dict[str, tuple[str, ...]] = {
    "containers": ("name",),
    "initContainers": ("name",),
    "ephemeralContainers": ("name",),
    "env": ("name",),
    "ports": ("containerPort", "port"),
    "volumes": ("name",),
    "volumeMounts": ("mountPath",),
    "volumeDevices": ("devicePath",),
    "conditions": ("type",),
    "imagePullSecrets": ("name",),
    "ownerReferences": ("uid",),
    "hostAliases": ("ip",),
    "topologySpreadConstraints": ("topologyKey",),
    "resourceClaims": ("name",),
    "schedulingGates": ("name",),
    "subjects": ("name",),
}
#: primitive lists strategic merge unions instead of replacing (``patchStrategy:"merge"`` upstream).
MERGE_PRIMITIVE_LISTS = frozenset({"finalizers"})


def _strategic_key(field: str, *lists: Any) -> str | None:
    """The merge key of ``field`` that every element of every given list carries, if any."""
    for candidate in MERGE_KEYS.get(field, ()):
        if all(
            isinstance(lst, list) and all(isinstance(e, dict) and candidate in e for e in lst)
            for lst in lists
        ):
            return candidate
    return None


def strategic_merge_patch(target: Any, patch: Any, _field: str | None = None) -> Any:
    """Apply a strategic merge patch (approximation, see the module docstring); returns a new value.

    Example:
        >>> live = {"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}}
        >>> strategic_merge_patch(live, {"spec": {"containers": [{"name": "b", "image": "z"},
        ...                                                      {"name": "a", "$patch": "delete"}]}})
        {'spec': {'containers': [{'name': 'b', 'image': 'z'}]}}
    """
    if not isinstance(patch, dict):
        return deep_copy(patch)
    directive = patch.get("$patch")
    if directive not in (None, "replace", "delete", "merge"):
        # Upstream (strategicpatch.mergeMap): "unknown patch type: %s in map: %v", a client error.
        raise PatchError(400, "BadRequest", f"unknown patch type: {directive} in map: {patch}")
    if patch.get("$patch") == "replace":
        return {k: deep_copy(v) for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    result = deep_copy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys") or key.startswith("$setElementOrder/"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            if isinstance(result.get(field), list):
                result[field] = [v for v in result[field] if v not in value]
            continue
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            merged = strategic_merge_patch(result.get(key), value, key)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
        elif isinstance(value, list):
            result[key] = _merge_list(result.get(key), value, key)
        else:
            result[key] = value
    return result


def _merge_list(live: Any, patch: list[Any], field: str) -> list[Any]:
    if field in MERGE_PRIMITIVE_LISTS and isinstance(live, list):
        return [*live, *(v for v in patch if v not in live)]
    merge_key = _strategic_key(field, patch, live) if isinstance(live, list) else None
    if merge_key is None:
        return [deep_copy(e) for e in patch if not (isinstance(e, dict) and e.get("$patch") == "delete")]
    result = [deep_copy(e) for e in live]
    positions = {e[merge_key]: i for i, e in enumerate(result)}
    deleted: set[Any] = set()
    for element in patch:
        k = element[merge_key]
        if element.get("$patch") == "delete":
            deleted.add(k)
        elif k in positions:
            result[positions[k]] = strategic_merge_patch(result[positions[k]], element)
        else:
            positions[k] = len(result)
            result.append(strategic_merge_patch({}, element))
    return [e for e in result if e[merge_key] not in deleted]
