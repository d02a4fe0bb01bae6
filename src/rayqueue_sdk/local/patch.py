"""The four patch kinds of the Kubernetes API, as pure functions on JSON-like values.

* :func:`merge_patch` — JSON merge patch, RFC 7386 (``application/merge-patch+json``).
* :func:`json_patch` — JSON patch, RFC 6902 (``application/json-patch+json``): add, remove, replace,
  move, copy, test.
* :func:`strategic_merge_patch` — strategic merge (``application/strategic-merge-patch+json``),
  **an approximation**: upstream reads the merge key and strategy of every list from Go struct tags.
  Here a list merges by key only when its field name is in :data:`MERGE_KEYS` (``containers``,
  ``initContainers``, ``env``, ``ports``, ``volumes``, ``volumeMounts``, ``conditions``, ...) and every
  element is an object carrying that key (``ports`` merge by ``containerPort`` or ``port``);
  ``finalizers`` are unioned (``patchStrategy: merge`` upstream); any other list is replaced, as
  upstream does for lists without a patch strategy. Supported directives: ``$patch: delete`` (in a
  list element: remove the element with that key; in a map: remove the map), ``$patch: replace`` (in
  a map: replace instead of merging), ``$retainKeys`` is ignored,
  ``$deleteFromPrimitiveList/<field>`` removes values from a primitive list,
  ``$setElementOrder/<field>`` is accepted and ignored. Custom resources get merge
  patch semantics upstream (415 for strategic); the server decides whether to refuse.
* :func:`server_side_apply` — server-side apply with ``managedFields`` bookkeeping (see its docstring).

Errors are raised as :class:`PatchError` carrying the HTTP status code, reason and causes the API
server would send; the store turns them into ``StoreError``.

Example:
    >>> merge_patch({"a": 1, "b": {"c": 2}}, {"b": {"c": None, "d": 3}})
    {'a': 1, 'b': {'d': 3}}
    >>> json_patch({"a": [1, 2]}, [{"op": "add", "path": "/a/-", "value": 3}])
    {'a': [1, 2, 3]}
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from typing import Any

__all__ = [
    "MERGE_KEYS",
    "PatchError",
    "deep_copy",
    "interned_copy",
    "json_patch",
    "merge_patch",
    "server_side_apply",
    "strategic_merge_patch",
]


class PatchError(ValueError):
    """A patch that cannot be applied: ``code`` (400/409/422), ``reason`` and ``causes``.

    Example:
        >>> PatchError(422, "Invalid", "bad").code
        422
    """

    def __init__(
        self, code: int, reason: str, message: str, causes: list[dict[str, Any]] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.causes = list(causes or [])


def deep_copy(value: Any) -> Any:
    """Copy a JSON-like value (dicts, lists, scalars) several times faster than ``copy.deepcopy``.

    Tuples become lists, as they would after a JSON round trip.

    Example:
        >>> a = {"x": [1, {"y": 2}]}; b = deep_copy(a); b["x"][1]["y"] = 3; a["x"][1]["y"]
        2
    """
    t = type(value)
    if t is dict:
        return {k: deep_copy(v) for k, v in value.items()}
    if t is list or t is tuple:
        return [deep_copy(v) for v in value]
    return value


def interned_copy(value: Any) -> Any:
    """Like :func:`deep_copy`, with dict keys and short strings interned (objects kept for long).

    Objects decoded from JSON carry their own copies of every key; a store of thousands of objects
    shares one copy of ``"metadata"``, ``"name"``, ``"containerPort"``... instead.

    Example:
        >>> import sys
        >>> key = next(iter(interned_copy({"".join(["na", "me"]): "x"})))
        >>> key is sys.intern("name")
        True
    """
    t = type(value)
    if t is dict:
        return {_intern(k): interned_copy(v) for k, v in value.items()}
    if t is list or t is tuple:
        return [interned_copy(v) for v in value]
    if t is str and len(value) <= 32:
        return _intern(value)
    return value


_intern = sys.intern


# -- RFC 7386 ---------------------------------------------------------------------------------------------


def merge_patch(target: Any, patch: Any) -> Any:
    """Apply a JSON merge patch (RFC 7386) and return the result; ``target`` is not modified.

    Example:
        >>> merge_patch({"a": [1]}, {"a": [2], "b": None})
        {'a': [2]}
    """
    if not isinstance(patch, dict):
        return deep_copy(patch)
    result = deep_copy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# -- RFC 6902 ---------------------------------------------------------------------------------------------


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(
            422,
            "Invalid",
            f'the server rejected our request due to an error in our request: invalid JSON pointer "{path}"',
        )
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _index(container: list[Any], token: str, *, allow_end: bool, path: str) -> int:
    if token == "-" and allow_end:
        return len(container)
    if not token.isdigit() or (token != "0" and token.startswith("0")):
        raise PatchError(422, "Invalid", f"unable to access invalid index: {token} in path {path}")
    i = int(token)
    if i > len(container) or (i == len(container) and not allow_end):
        raise PatchError(422, "Invalid", f"unable to access invalid index: {i} (out of range) in path {path}")
    return i


def _parent(doc: Any, tokens: list[str], path: str) -> Any:
    cur = doc
    for token in tokens[:-1]:
        if isinstance(cur, dict):
            if token not in cur:
                raise PatchError(422, "Invalid", f"doc is missing path: {path}: missing value")
            cur = cur[token]
        elif isinstance(cur, list):
            cur = cur[_index(cur, token, allow_end=False, path=path)]
        else:
            raise PatchError(422, "Invalid", f"doc is missing path: {path}: missing value")
    return cur


def _get(doc: Any, path: str) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return doc
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(422, "Invalid", f"doc is missing path: {path}: missing value")
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, allow_end=False, path=path)]
    raise PatchError(422, "Invalid", f"doc is missing path: {path}: missing value")


def _add(doc: Any, path: str, value: Any) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return value
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, allow_end=True, path=path), value)
    else:
        raise PatchError(422, "Invalid", f"doc is missing path: {path}: missing value")
    return doc


def _remove(doc: Any, path: str) -> tuple[Any, Any]:
    tokens = _pointer(path)
    if not tokens:
        raise PatchError(422, "Invalid", "unable to remove the whole document")
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(422, "Invalid", f"Unable to remove nonexistent key: {last}: missing value")
        return doc, parent.pop(last)
    if isinstance(parent, list):
        return doc, parent.pop(_index(parent, last, allow_end=False, path=path))
    raise PatchError(422, "Invalid", f"doc is missing path: {path}: missing value")


def json_patch(target: Any, operations: list[dict[str, Any]]) -> Any:
    """Apply a JSON patch (RFC 6902) and return the result; ``target`` is not modified.

    A failing ``test`` raises ``PatchError(422)``, as the API server answers.

    Example:
        >>> json_patch({"a": {"b": 1}}, [{"op": "move", "from": "/a/b", "path": "/c"}])
        {'a': {}, 'c': 1}
    """
    if not isinstance(operations, list):
        raise PatchError(
            400, "BadRequest", "json: cannot unmarshal object into Go value of type jsonpatch.Patch"
        )
    doc = deep_copy(target)
    for op in operations:
        if not isinstance(op, dict) or "op" not in op:
            raise PatchError(400, "BadRequest", f"Unexpected kind: {op!r}")
        kind = op["op"]
        path = op.get("path")
        if not isinstance(path, str):
            raise PatchError(422, "Invalid", f"operation {kind!r} has no path")
        if kind == "add":
            doc = _add(doc, path, deep_copy(_need(op, "value")))
        elif kind == "remove":
            doc, _ = _remove(doc, path)
        elif kind == "replace":
            _get(doc, path)  # must exist
            if _pointer(path):
                doc, _ = _remove(doc, path)
            doc = _add(doc, path, deep_copy(_need(op, "value")))
        elif kind == "move":
            src = _need(op, "from")
            if path.startswith(src + "/"):
                raise PatchError(422, "Invalid", f"cannot move {src} into its own child {path}")
            doc, value = _remove(doc, src)
            doc = _add(doc, path, value)
        elif kind == "copy":
            doc = _add(doc, path, deep_copy(_get(doc, _need(op, "from"))))
        elif kind == "test":
            if _get(doc, path) != _need(op, "value"):
                raise PatchError(
                    422,
                    "Invalid",
                    f"the server rejected our request due to an error in our request: "
                    f"testing value {path} failed: test failed",
                )
        else:
            raise PatchError(400, "BadRequest", f"Unexpected kind: {kind}")
    return doc


def _need(op: dict[str, Any], field: str) -> Any:
    if field not in op:
        raise PatchError(422, "Invalid", f"operation {op.get('op')!r} is missing the {field!r} field")
    return op[field]


# -- strategic merge (approximation) ----------------------------------------------------------------------

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


# -- server-side apply ------------------------------------------------------------------------------------
#
# Field sets use the FieldsV1 shape of real managedFields: {"f:spec": {"f:replicas": {}}}; elements of
# map-type lists are 'k:{"name":"x"}' entries; every other list is atomic (owned as a whole). Which
# lists are maps comes from a resolver: structural path (field names, no indexes) -> key fields.
# For custom resources the store derives it from the CRD's x-kubernetes-list-type/-map-keys
# (rayqueue_sdk.local.schema.list_map_keys); for the built-in types :func:`default_list_keys` uses
# :data:`MERGE_KEYS`.

Path = tuple[str, ...]
ListKeys = Callable[[tuple[str, ...]], "tuple[str, ...] | None"]


def default_list_keys(path: tuple[str, ...]) -> tuple[str, ...] | None:
    """Map-list keys of the built-in types, by the list's field name (see :data:`MERGE_KEYS`).

    Example:
        >>> default_list_keys(("spec", "containers")), default_list_keys(("spec", "args"))
        (('name',), None)
    """
    return MERGE_KEYS.get(path[-1]) if path else None


def _element_id(keys: tuple[str, ...], element: Any) -> dict[str, Any] | None:
    """The identity of a map-list element: its key fields (the first one is required)."""
    if not isinstance(element, dict) or keys[0] not in element:
        return None
    return {k: element[k] for k in keys if k in element}


def _ident_str(ident: dict[str, Any]) -> str:
    return "k:" + json.dumps(ident, separators=(",", ":"), sort_keys=True)


def _map_list_keys(value: Any, spath: tuple[str, ...], list_keys: ListKeys) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not value:
        return None
    keys = list_keys(spath)
    if not keys or any(_element_id(keys, e) is None for e in value):
        return None
    return keys


def _leaves(
    value: Any, list_keys: ListKeys, prefix: Path = (), spath: Path = ()
) -> Iterator[tuple[Path, Any]]:
    """Leaf paths (and their values) of an applied configuration."""
    if isinstance(value, dict) and value:
        for k, v in value.items():
            yield from _leaves(v, list_keys, (*prefix, f"f:{k}"), (*spath, k))
        return
    keys = _map_list_keys(value, spath, list_keys)
    if keys is not None:
        for element in value:
            ident = _element_id(keys, element)
            assert ident is not None
            item = (*prefix, _ident_str(ident))
            for k, v in ident.items():
                yield (*item, f"f:{k}"), v
            rest = {k: v for k, v in element.items() if k not in ident}
            if rest:
                yield from _leaves(rest, list_keys, item, spath)
        return
    yield prefix, value


def _matches(element: Any, ident: dict[str, Any]) -> bool:
    return isinstance(element, dict) and all(element.get(k) == v for k, v in ident.items())


def _lookup(obj: Any, path: Path) -> tuple[bool, Any]:
    cur = obj
    for part in path:
        if part.startswith("f:") and isinstance(cur, dict):
            if part[2:] not in cur:
                return False, None
            cur = cur[part[2:]]
        elif part.startswith("k:") and isinstance(cur, list):
            ident = json.loads(part[2:])
            cur = next((e for e in cur if _matches(e, ident)), None)
            if cur is None:
                return False, None
        else:
            return False, None
    return True, cur


def _remove_path(obj: Any, path: Path) -> None:
    parents = []
    cur = obj
    for part in path[:-1]:
        parents.append((cur, part))
        found, cur = _lookup(cur, (part,))
        if not found:
            return
    last = path[-1]
    if last.startswith("f:") and isinstance(cur, dict):
        cur.pop(last[2:], None)
    elif last.startswith("k:") and isinstance(cur, list):
        ident = json.loads(last[2:])
        cur[:] = [e for e in cur if not _matches(e, ident)]
    # Prune containers the removal left empty (apply does not leave {} behind for removed fields).
    for parent, part in reversed(parents):
        found, child = _lookup(parent, (part,))
        if found and child in ({}, []):
            _remove_path(parent, (part,))
        else:
            break


def fieldset_to_paths(fields: dict[str, Any], prefix: Path = ()) -> set[Path]:
    """The leaf paths of a FieldsV1 set.

    Example:
        >>> sorted(fieldset_to_paths({"f:spec": {"f:a": {}, "f:b": {}}}))
        [('f:spec', 'f:a'), ('f:spec', 'f:b')]
    """
    out: set[Path] = set()
    for k, v in fields.items():
        if k == ".":
            continue
        if v:
            out |= fieldset_to_paths(v, (*prefix, k))
        else:
            out.add((*prefix, k))
    return out


def paths_to_fieldset(paths: set[Path]) -> dict[str, Any]:
    """A FieldsV1 set from leaf paths (inverse of :func:`fieldset_to_paths`).

    Example:
        >>> paths_to_fieldset({("f:spec", "f:a")})
        {'f:spec': {'f:a': {}}}
    """
    root: dict[str, Any] = {}
    for path in sorted(paths):
        cur = root
        for part in path:
            cur = cur.setdefault(part, {})
    return root


_IGNORED_METADATA = {
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "generation",
    "managedFields",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
}


def _applied_paths(applied: dict[str, Any], list_keys: ListKeys) -> dict[Path, Any]:
    config = {k: v for k, v in applied.items() if k not in ("apiVersion", "kind")}
    meta = {
        k: v
        for k, v in (config.get("metadata") or {}).items()
        if k not in _IGNORED_METADATA | {"name", "namespace"}
    }
    config = {**config, "metadata": meta} if meta else {k: v for k, v in config.items() if k != "metadata"}
    return dict(_leaves(config, list_keys))


def _apply_merge(live: Any, applied: Any, list_keys: ListKeys, spath: Path = ()) -> Any:
    """Merge an applied configuration into a live value: maps merge, map-lists merge by key, the rest
    is replaced."""
    if isinstance(applied, dict) and isinstance(live, dict):
        out = deep_copy(live)
        for k, v in applied.items():
            out[k] = _apply_merge(live.get(k), v, list_keys, (*spath, k))
        return out
    keys = _map_list_keys(applied, spath, list_keys)
    if keys is not None and isinstance(live, list) and all(_element_id(keys, e) is not None for e in live):
        out_list = [deep_copy(e) for e in live]
        for element in applied:
            ident = _element_id(keys, element)
            assert ident is not None
            at = next((i for i, e in enumerate(out_list) if _matches(e, ident)), None)
            if at is None:
                out_list.append(deep_copy(element))
            else:
                out_list[at] = _apply_merge(out_list[at], element, list_keys, spath)
        return out_list
    return deep_copy(applied)


def _overlaps(a: Path, b: Path) -> bool:
    """One path is the other or inside it (owning ``.spec.x`` covers ``.spec.x.y``)."""
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def server_side_apply(
    live: dict[str, Any] | None,
    applied: dict[str, Any],
    manager: str,
    *,
    force: bool = False,
    api_version: str = "",
    now: str = "",
    subresource: str = "",
    list_keys: ListKeys | None = None,
) -> dict[str, Any]:
    """Merge ``applied`` (an apply configuration) into ``live`` as ``manager``; return the new object.

    Ownership is tracked per leaf field in ``metadata.managedFields`` (FieldsV1, operation ``Apply``);
    lists are atomic except map-type lists (``list_keys``; by default the lists of
    :data:`MERGE_KEYS`), whose elements are owned one by one. A field the configuration sets to a
    value different from the live one, owned by another manager, is a conflict:
    ``PatchError(409, "Conflict")`` naming every such field in ``causes``, unless ``force`` (the
    fields then change hands). Fields this manager applied before and no longer applies are
    removed, unless another manager also owns them.

    Approximations: ownership of fields written by plain updates/patches is recorded only when the
    store is given a field manager; ``set``-type lists are treated as atomic; no defaulting of
    map-list keys (a ``ports`` element without ``protocol`` is keyed by ``containerPort`` alone).

    Example:
        >>> obj = server_side_apply(None, {"spec": {"replicas": 1}}, "alice")
        >>> obj["metadata"]["managedFields"][0]["fieldsV1"]
        {'f:spec': {'f:replicas': {}}}
        >>> try:
        ...     server_side_apply(obj, {"spec": {"replicas": 2}}, "bob")
        ... except PatchError as err:
        ...     print(err.code, err.causes[0]["field"])
        409 .spec.replicas
    """
    list_keys = list_keys or default_list_keys
    live = deep_copy(live) if live is not None else {}
    applied_paths = _applied_paths(applied, list_keys)
    managed: list[dict[str, Any]] = deep_copy((live.get("metadata") or {}).get("managedFields") or [])
    owners: dict[str, set[Path]] = {}
    for entry in managed:
        if entry.get("subresource", "") != subresource:
            continue
        owners.setdefault(entry.get("manager", ""), set()).update(
            fieldset_to_paths(entry.get("fieldsV1") or {})
        )

    conflicts: list[tuple[str, Path]] = []
    for path, value in applied_paths.items():
        found, current = _lookup(live, path)
        if found and current == value:
            continue
        for other, paths in owners.items():
            if other != manager and any(_overlaps(p, path) for p in paths):
                conflicts.append((other, path))
    if conflicts and not force:
        using = f" using {api_version}" if api_version else ""
        causes = [
            {
                "type": "FieldManagerConflict",
                "reason": "FieldManagerConflict",
                "message": f'conflict with "{other}"{using}',
                "field": _dotted(path),
            }
            for other, path in conflicts
        ]
        n = len(conflicts)
        lines = [f'conflict with "{o}"{using}: {_dotted(p)}' for o, p in conflicts]
        message = f"Apply failed with {n} conflict{'s' if n > 1 else ''}: " + "\n".join(lines)
        raise PatchError(409, "Conflict", message, causes)

    new_paths = set(applied_paths)
    previously = owners.get(manager, set())
    others = set().union(*(p for m, p in owners.items() if m != manager)) if owners else set()
    result = _apply_merge(live, {k: v for k, v in applied.items() if k != "metadata"}, list_keys)
    meta = result.setdefault("metadata", {})
    for k, v in (applied.get("metadata") or {}).items():
        if k not in _IGNORED_METADATA:
            meta[k] = _apply_merge(meta.get(k), v, list_keys, ("metadata", k))
    for path in sorted(previously - new_paths, key=len, reverse=True):
        if path not in others and not any(p[: len(path)] == path for p in new_paths):
            _remove_path(result, path)

    # Record ownership: this manager owns exactly the applied paths; forced fields leave the others.
    owners[manager] = new_paths
    if force:
        for other in list(owners):
            if other != manager:
                owners[other] = {p for p in owners[other] if not any(_overlaps(p, q) for q in new_paths)}
    kept = [e for e in managed if e.get("subresource", "") != subresource or e.get("manager") not in owners]
    for m, paths in owners.items():
        if not paths:
            continue
        old = next(
            (e for e in managed if e.get("manager") == m and e.get("subresource", "") == subresource), None
        )
        kept_from = old if old is not None and m != manager else {}
        entry = {
            "manager": m,
            "operation": kept_from.get("operation", "Apply"),
            "apiVersion": kept_from.get("apiVersion", api_version),
            "time": kept_from.get("time", now),
            "fieldsType": "FieldsV1",
            "fieldsV1": paths_to_fieldset(paths),
        }
        if subresource:
            entry["subresource"] = subresource
        kept.append(entry)
    if (
        live
        and _without_managed(result) == _without_managed(live)
        and _ownership(kept) == _ownership(managed)
    ):
        return live  # re-applying the same configuration changes nothing, not even timestamps
    result.setdefault("metadata", {})["managedFields"] = kept
    return result


def _without_managed(obj: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    return {**obj, "metadata": meta}


def _ownership(managed: list[dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    return sorted(
        (
            e.get("manager", ""),
            e.get("operation", ""),
            e.get("subresource", ""),
            json.dumps(e.get("fieldsV1"), sort_keys=True),
        )
        for e in managed
    )


def record_update(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    manager: str,
    *,
    api_version: str = "",
    now: str = "",
    subresource: str = "",
    list_keys: ListKeys | None = None,
) -> list[dict[str, Any]]:
    """managedFields after a non-apply write by ``manager``: it takes the leaf fields it changed.

    Example:
        >>> mf = record_update({"spec": {"a": 1}}, {"spec": {"a": 2}}, "kubectl")
        >>> mf[0]["operation"], mf[0]["fieldsV1"]
        ('Update', {'f:spec': {'f:a': {}}})
    """
    list_keys = list_keys or default_list_keys
    managed: list[dict[str, Any]] = deep_copy(((old or {}).get("metadata") or {}).get("managedFields") or [])
    before = _applied_paths(old or {}, list_keys)
    after = _applied_paths(new, list_keys)
    changed = {p for p, v in after.items() if before.get(p, _MISSING) != v}
    if not changed:
        return managed
    out = []
    mine: set[Path] = set(changed)
    for entry in managed:
        paths = fieldset_to_paths(entry.get("fieldsV1") or {})
        if (
            entry.get("manager") == manager
            and entry.get("operation") == "Update"
            and entry.get("subresource", "") == subresource
        ):
            mine |= paths & set(after)
            continue
        remaining = {p for p in paths if p not in changed}
        if remaining:
            out.append({**entry, "fieldsV1": paths_to_fieldset(remaining)})
    entry = {
        "manager": manager,
        "operation": "Update",
        "apiVersion": api_version,
        "time": now,
        "fieldsType": "FieldsV1",
        "fieldsV1": paths_to_fieldset(mine),
    }
    if subresource:
        entry["subresource"] = subresource
    out.append(entry)
    return out


_MISSING = object()


def _dotted(path: Path) -> str:
    out = ""
    for part in path:
        if part.startswith("f:"):
            out += "." + part[2:]
        else:
            out += "[" + part[2:] + "]"
    return out
