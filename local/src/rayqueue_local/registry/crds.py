"""Resource types from ``CustomResourceDefinition`` documents, and the loading of a CRD directory.

:func:`type_from_crd` reads names, scope, served and storage versions, schemas, deprecations and the
status/scale subresources of one CRD; :func:`load_crd_dir` parses every YAML file under a directory
(cached by the files' paths, mtimes and sizes).

Example:
    >>> load_crd_dir("/nonexistent")
    []
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import yaml

from rayqueue_local.apimachinery.patchcore import deep_copy
from rayqueue_local.registry.resourcetypes import ResourceType, ScaleHooks

__all__ = ["load_crd_dir", "type_from_crd"]


def type_from_crd(crd: dict[str, Any]) -> ResourceType:
    """Build a :class:`ResourceType` from a ``CustomResourceDefinition`` document.

    Example:
        >>> crd = {"kind": "CustomResourceDefinition", "spec": {"group": "x.io", "scope": "Cluster",
        ...     "names": {"plural": "foos", "singular": "foo", "kind": "Foo"},
        ...     "versions": [{"name": "v1", "served": True, "storage": True,
        ...                   "subresources": {"status": {}}}]}}
        >>> t = type_from_crd(crd); (t.key, t.namespaced, t.has_status)
        ('foos.x.io', False, True)
    """
    spec = crd["spec"]
    names = spec["names"]
    served = [v for v in spec["versions"] if v.get("served", True)]
    storage = next(v["name"] for v in spec["versions"] if v.get("storage"))
    # Subresources are per version upstream; take the storage version's (they agree in our CRDs).
    store_v = next(v for v in spec["versions"] if v["name"] == storage)
    subs = frozenset(k for k in (store_v.get("subresources") or {}) if k in ("status", "scale"))
    # Order: storage version first (preferred) where served, then the others as listed. A storage
    # version that is not served (``served: false``) is not listed, but its schema is kept: stored
    # objects are checked against it.
    served_names = [v["name"] for v in served]
    versions = (*[storage] * (storage in served_names), *[n for n in served_names if n != storage])
    unserved = tuple(v["name"] for v in spec["versions"] if v["name"] not in served_names)
    schemas = {
        v["name"]: v["schema"]["openAPIV3Schema"]
        for v in spec["versions"]
        if (v.get("schema") or {}).get("openAPIV3Schema") is not None
    }
    scale = _crd_scale(store_v.get("subresources") or {})
    # Upstream defaults a version without columns to one "Age" column (apiextensions-apiserver
    # pkg/apis/apiextensions/v1/defaults.go, SetDefaults_CustomResourceDefinitionSpec).
    age = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
    printer_columns = {v["name"]: tuple(v.get("additionalPrinterColumns") or (age,)) for v in served}
    deprecated = {
        v["name"]: v.get("deprecationWarning") or f"{spec['group']}/{v['name']} {names['kind']} is deprecated"
        for v in served
        if v.get("deprecated")
    }
    return ResourceType(
        group=spec["group"],
        versions=versions,
        storage_version=storage,
        plural=names["plural"],
        singular=names.get("singular", names["kind"].lower()),
        kind=names["kind"],
        namespaced=spec.get("scope", "Namespaced") == "Namespaced",
        short_names=tuple(names.get("shortNames", ())),
        subresources=subs,
        categories=tuple(names.get("categories", ())),
        list_kind=names.get("listKind", names["kind"] + "List"),
        schemas=schemas,
        deprecated=deprecated,
        scale=scale,
        from_crd=True,
        printer_columns=printer_columns,
        crd=crd,
        unserved=unserved,
    )


def _path_parts(path: str) -> list[str]:
    """``.spec.replicas`` -> ``["spec", "replicas"]`` (the simple JSONPaths CRD scale subresources use)."""
    return [p for p in path.split(".") if p]


def _get_path(obj: dict[str, Any], parts: list[str]) -> Any:
    cur: Any = obj
    for part in parts:
        cur = cur.get(part) if isinstance(cur, dict) else None
    return cur


def _crd_scale(subresources: dict[str, Any]) -> ScaleHooks | None:
    """Scale hooks from a CRD's ``subresources.scale`` (spec/status replicas and selector paths)."""
    spec = subresources.get("scale")
    if not isinstance(spec, dict):
        return None
    spec_path = _path_parts(spec.get("specReplicasPath", ".spec.replicas"))
    status_path = _path_parts(spec.get("statusReplicasPath", ".status.replicas"))
    selector_path = _path_parts(spec.get("labelSelectorPath") or "")

    def set_replicas(obj: dict[str, Any], n: int) -> dict[str, Any]:
        out = deep_copy(obj)
        cur = out
        for part in spec_path[:-1]:
            cur = cur.setdefault(part, {})
        cur[spec_path[-1]] = n
        return out

    return ScaleHooks(
        get_replicas=lambda o: int(_get_path(o, spec_path) or 0),
        set_replicas=set_replicas,
        get_status_replicas=lambda o: int(_get_path(o, status_path) or 0),
        get_selector=(lambda o: str(_get_path(o, selector_path) or "")) if selector_path else None,
    )


def load_crd_dir(crd_dir: str | os.PathLike[str]) -> list[ResourceType]:
    """Walk ``crd_dir`` and return a type for every ``CustomResourceDefinition`` YAML document.

    Example:
        >>> load_crd_dir("/nonexistent")
        []
    """
    root = Path(crd_dir).resolve()
    if not root.is_dir():
        return []
    files = sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    stamp = (str(root), tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files))
    with _CRD_CACHE_LOCK:
        cached = _CRD_CACHE.get(stamp)
    if cached is not None:
        return list(cached)
    try:
        loader: Any = yaml.CSafeLoader
    except AttributeError:  # pragma: no cover - libyaml missing
        loader = yaml.SafeLoader
    types: list[ResourceType] = []
    for path in files:
        with path.open("rb") as fh:
            for doc in yaml.load_all(fh, Loader=loader):
                if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                    types.append(type_from_crd(doc))
    with _CRD_CACHE_LOCK:
        _CRD_CACHE[stamp] = tuple(types)
    return types


# Parsed CRD directories, keyed by their files' paths, mtimes and sizes: parsing the vendored CRDs
# (4 MB of YAML) takes about a second, and a test session builds many registries. ResourceTypes
# are frozen; their schema dicts are shared and must be treated as read-only.
_CRD_CACHE: dict[tuple[str, tuple[tuple[str, int, int], ...]], tuple[ResourceType, ...]] = {}
_CRD_CACHE_LOCK = threading.Lock()
