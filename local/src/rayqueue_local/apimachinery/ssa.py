"""Server-side apply and ``managedFields`` bookkeeping, as pure functions on JSON-like objects.

:func:`server_side_apply` merges an apply configuration as a field manager (409 Conflict on another
manager's field unless forced); :func:`record_update` records the fields a plain update or patch
changed. Field sets are FieldsV1 (:func:`fieldset_to_paths`, :func:`paths_to_fieldset`).

Example:
    >>> obj = server_side_apply(None, {"spec": {"replicas": 1}}, "alice")
    >>> record_update(obj, {"spec": {"replicas": 2}}, "kubectl")[-1]["manager"]
    'kubectl'
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from rayqueue_local.apimachinery.patchcore import PatchError, deep_copy
from rayqueue_local.apimachinery.strategic import MERGE_KEYS

__all__ = [
    "ListKeys",
    "Path",
    "default_list_keys",
    "fieldset_to_paths",
    "paths_to_fieldset",
    "record_update",
    "server_side_apply",
]


# -- server-side apply ------------------------------------------------------------------------------------
#
# Field sets use the FieldsV1 shape of real managedFields: {"f:spec": {"f:replicas": {}}}; elements of
# map-type lists are 'k:{"name":"x"}' entries; every other list is atomic (owned as a whole). Which
# lists are maps comes from a resolver: structural path (field names, no indexes) -> key fields.
# For custom resources the store derives it from the CRD's x-kubernetes-list-type/-map-keys
# (rayqueue_local.registry.schema.list_map_keys); for the built-in types :func:`default_list_keys` uses
# :data:`MERGE_KEYS`.

#: A structural path: field names, no list indexes.
Path = tuple[str, ...]
#: The resolver: a list's structural path to its map keys (``None`` for an atomic list).
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
