"""Resource types served by the local control plane, their versions, conversion and discovery.

A :class:`ResourceType` describes one resource (``rayclusters.ray.io``): group, served versions,
storage version, names, scope, subresources and, when loaded from a CRD, the OpenAPI schema of each
version. A :class:`Registry` holds the built-in types (core v1, rbac, networking, ray.io, kueue,
keda) and, given a CRD directory, replaces the custom ones by what the CRD files say.

The ``/scale`` subresource comes from a CRD's ``subresources.scale`` (replicas and selector paths)
or from :meth:`Registry.enable_scale` (callables; e.g. the seed-000 Workload where replicas 1 <=>
``spec.active``). Discovery documents (``/api``, ``/apis``, ``/apis/{group}``, ``APIResourceList``)
are built from the same types, with ``x/status`` and ``x/scale`` entries.

Objects live in the store in the **storage version**. :meth:`Registry.to_storage` and
:meth:`Registry.from_storage` convert between a served version and storage; for Kueue they apply the
v1beta1 <-> v1beta2 renames of ``reference/k8s-semantics.md`` §2:

* ClusterQueue ``spec.cohort`` <-> ``spec.cohortName``;
* ClusterQueue ``spec.admissionChecks[]`` <-> ``spec.admissionChecksStrategy.admissionChecks[{name}]``;
* LocalQueue ``status.flavorUsage`` <-> ``status.flavorsUsage``;
* Workload ``spec.priorityClassName`` + ``priorityClassSource`` <-> ``spec.priorityClassRef``;
* Workload ``status.accumulatedPastExexcutionTimeSeconds`` (sic) <-> ``accumulatedPastExecutionTimeSeconds``;
* ``apiVersion`` rewritten.

Not converted (lossy in upstream too, or not used by the SDK): ``LocalQueue.status.flavors`` (dropped
going to v1beta2), ``Workload.status.topologyAssignment.domains`` <-> ``slices``, the removed
flavorFungibility enums, ``AdmissionCheck.spec.retryDelayMinutes`` (dropped going to v1beta2).

Example:
    >>> reg = Registry()
    >>> reg.get("rayclusters.ray.io").kind
    'RayCluster'
    >>> reg.to_storage("clusterqueues.kueue.x-k8s.io",
    ...     {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "spec": {"cohort": "a"}},
    ...     "v1beta1")["spec"]
    {'cohortName': 'a'}
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rayqueue_sdk.local.patch import deep_copy

log = logging.getLogger(__name__)

__all__ = ["ALL_VERBS", "Registry", "ResourceType", "ScaleHooks", "resource_key"]

#: Verbs of a normal collection resource, as discovery lists them.
ALL_VERBS: tuple[str, ...] = (
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
)

KUEUE = "kueue.x-k8s.io"


def resource_key(group: str, plural: str) -> str:
    """The store key of a resource: ``plural`` for the core group, ``plural.group`` otherwise.

    Example:
        >>> resource_key("", "pods"), resource_key("ray.io", "rayclusters")
        ('pods', 'rayclusters.ray.io')
    """
    return f"{plural}.{group}" if group else plural


@dataclass(frozen=True)
class ScaleHooks:
    """How ``/scale`` reads and writes a resource's replicas (see :meth:`Registry.enable_scale`).

    ``get_replicas(obj) -> int``; ``set_replicas(obj, n) -> obj`` returns the object to store;
    ``selector`` is the optional ``status.selector`` string reported in the Scale.
    """

    get_replicas: Callable[[dict[str, Any]], int]
    set_replicas: Callable[[dict[str, Any], int], dict[str, Any]]
    selector: str = ""
    #: optional: ``status.replicas`` and ``status.selector`` of the Scale, read from the object
    get_status_replicas: Callable[[dict[str, Any]], int] | None = None
    get_selector: Callable[[dict[str, Any]], str] | None = None


@dataclass(frozen=True)
class ResourceType:
    """One resource type: names, scope, versions, subresources, schemas.

    Example:
        >>> rt = ResourceType(group="ray.io", versions=("v1",), storage_version="v1",
        ...                   plural="rayclusters", singular="raycluster", kind="RayCluster")
        >>> rt.key, rt.api_version, rt.has_status
        ('rayclusters.ray.io', 'ray.io/v1', False)
    """

    group: str
    versions: tuple[str, ...]
    storage_version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool = True
    short_names: tuple[str, ...] = ()
    subresources: frozenset[str] = frozenset()
    categories: tuple[str, ...] = ()
    list_kind: str = ""
    #: openAPIV3Schema per served version (CRD-derived types only)
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict, compare=False, repr=False)
    #: deprecation warning per deprecated version
    deprecated: dict[str, str] = field(default_factory=dict, compare=False)
    #: whether metadata.generation is maintained (CRDs and workload-like core types)
    has_generation: bool = True
    #: whether the object carries a status the main endpoint must not overwrite
    scale: ScaleHooks | None = field(default=None, compare=False, repr=False)
    verbs: tuple[str, ...] = ALL_VERBS
    from_crd: bool = False

    @property
    def key(self) -> str:
        """The store key, e.g. ``rayclusters.ray.io`` or ``pods``."""
        return resource_key(self.group, self.plural)

    @property
    def api_version(self) -> str:
        """``group/storage_version`` (or just ``v1`` for core)."""
        return self.api_version_for(self.storage_version)

    def api_version_for(self, version: str) -> str:
        """``apiVersion`` string of this resource at ``version``."""
        return f"{self.group}/{version}" if self.group else version

    @property
    def has_status(self) -> bool:
        """True when ``status`` is a subresource (the main endpoint keeps the stored status)."""
        return "status" in self.subresources

    def group_versions(self) -> list[str]:
        """All ``apiVersion`` strings served."""
        return [self.api_version_for(v) for v in self.versions]


def _core(
    plural: str, kind: str, *, namespaced: bool = True, short: tuple[str, ...] = (), **kw: Any
) -> ResourceType:
    return ResourceType(
        group="",
        versions=("v1",),
        storage_version="v1",
        plural=plural,
        singular=kind.lower(),
        kind=kind,
        namespaced=namespaced,
        short_names=short,
        list_kind=kind + "List",
        **kw,
    )


def _custom(
    group: str,
    plural: str,
    kind: str,
    *,
    versions: tuple[str, ...],
    storage: str,
    namespaced: bool = True,
    short: tuple[str, ...] = (),
    status: bool = True,
    categories: tuple[str, ...] = (),
) -> ResourceType:
    return ResourceType(
        group=group,
        versions=versions,
        storage_version=storage,
        plural=plural,
        singular=kind.lower(),
        kind=kind,
        namespaced=namespaced,
        short_names=short,
        subresources=frozenset({"status"}) if status else frozenset(),
        categories=categories,
        list_kind=kind + "List",
    )


_KUEUE_V = ("v1beta2", "v1beta1")
_KUEUE_DEPRECATED = {"v1beta1": "This version is deprecated. Use v1beta2 instead."}


def builtin_types() -> list[ResourceType]:
    """The types served without a CRD directory (custom ones without schemas).

    Example:
        >>> "workloads.kueue.x-k8s.io" in {t.key for t in builtin_types()}
        True
    """
    status = frozenset({"status"})
    types = [
        _core(
            "namespaces",
            "Namespace",
            namespaced=False,
            short=("ns",),
            subresources=status,
            has_generation=False,
        ),
        _core("secrets", "Secret", has_generation=False),
        _core("configmaps", "ConfigMap", short=("cm",), has_generation=False),
        _core(
            "services",
            "Service",
            short=("svc",),
            subresources=status,
            has_generation=False,
            categories=("all",),
        ),
        _core("pods", "Pod", short=("po",), subresources=status, categories=("all",)),
        _core("serviceaccounts", "ServiceAccount", short=("sa",), has_generation=False),
        _core("events", "Event", short=("ev",), has_generation=False),
        dataclasses.replace(
            _custom(
                "rbac.authorization.k8s.io", "roles", "Role", versions=("v1",), storage="v1", status=False
            ),
            has_generation=False,
        ),
        dataclasses.replace(
            _custom(
                "rbac.authorization.k8s.io",
                "rolebindings",
                "RoleBinding",
                versions=("v1",),
                storage="v1",
                status=False,
            ),
            has_generation=False,
        ),
        dataclasses.replace(
            _custom(
                "networking.k8s.io", "ingresses", "Ingress", versions=("v1",), storage="v1", short=("ing",)
            ),
            has_generation=True,
        ),
        _custom("ray.io", "rayclusters", "RayCluster", versions=("v1",), storage="v1", categories=("all",)),
        _custom("ray.io", "rayjobs", "RayJob", versions=("v1",), storage="v1", categories=("all",)),
        _custom(
            KUEUE,
            "workloads",
            "Workload",
            versions=_KUEUE_V,
            storage="v1beta2",
            short=("kwl", "kueueworkload", "kueueworkloads"),
        ),
        _custom(
            KUEUE,
            "clusterqueues",
            "ClusterQueue",
            versions=_KUEUE_V,
            storage="v1beta2",
            namespaced=False,
            short=("cq",),
        ),
        _custom(
            KUEUE,
            "localqueues",
            "LocalQueue",
            versions=_KUEUE_V,
            storage="v1beta2",
            short=("queue", "queues", "lq"),
        ),
        _custom(
            KUEUE,
            "resourceflavors",
            "ResourceFlavor",
            versions=_KUEUE_V,
            storage="v1beta2",
            namespaced=False,
            short=("flavor", "flavors", "rf"),
            status=False,
        ),
        _custom(
            KUEUE,
            "workloadpriorityclasses",
            "WorkloadPriorityClass",
            versions=_KUEUE_V,
            storage="v1beta2",
            namespaced=False,
            short=("wpc",),
            status=False,
        ),
        _custom(
            KUEUE, "cohorts", "Cohort", versions=_KUEUE_V, storage="v1beta2", namespaced=False, short=("co",)
        ),
        _custom(
            KUEUE,
            "admissionchecks",
            "AdmissionCheck",
            versions=_KUEUE_V,
            storage="v1beta2",
            namespaced=False,
            short=("ac",),
        ),
        _custom(
            "keda.sh",
            "scaledobjects",
            "ScaledObject",
            versions=("v1alpha1",),
            storage="v1alpha1",
            short=("so",),
        ),
        _custom(
            "keda.sh",
            "triggerauthentications",
            "TriggerAuthentication",
            versions=("v1alpha1",),
            storage="v1alpha1",
            short=("ta", "triggerauth"),
        ),
        _custom(
            "keda.sh",
            "clustertriggerauthentications",
            "ClusterTriggerAuthentication",
            versions=("v1alpha1",),
            storage="v1alpha1",
            namespaced=False,
            short=("cta", "clustertriggerauth"),
        ),
    ]
    return [
        dataclasses.replace(t, deprecated=dict(_KUEUE_DEPRECATED)) if t.group == KUEUE else t for t in types
    ]


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
    # Order: storage version first (preferred), then the others as listed.
    versions = (storage, *[v["name"] for v in served if v["name"] != storage])
    schemas = {
        v["name"]: v["schema"]["openAPIV3Schema"]
        for v in served
        if (v.get("schema") or {}).get("openAPIV3Schema") is not None
    }
    scale = _crd_scale(store_v.get("subresources") or {})
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
    import yaml

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


# -- conversion ---------------------------------------------------------------------------------------

_PRIORITY_SOURCES = {
    "kueue.x-k8s.io/workloadpriorityclass": ("kueue.x-k8s.io", "WorkloadPriorityClass"),
    "scheduling.k8s.io/priorityclass": ("scheduling.k8s.io", "PriorityClass"),
}
_PRIORITY_GROUPS = {group: source for source, (group, _kind) in _PRIORITY_SOURCES.items()}


def _rename(section: dict[str, Any] | None, old: str, new: str) -> None:
    if isinstance(section, dict) and old in section:
        section[new] = section.pop(old)


def _kueue_up(plural: str, obj: dict[str, Any]) -> None:
    """v1beta1 -> v1beta2 in place."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else None
    status = obj.get("status") if isinstance(obj.get("status"), dict) else None
    if plural == "clusterqueues" and spec is not None:
        _rename(spec, "cohort", "cohortName")
        checks = spec.pop("admissionChecks", None)
        if checks:
            strategy = spec.setdefault("admissionChecksStrategy", {})
            strategy.setdefault("admissionChecks", [{"name": n} for n in checks])
    elif plural == "localqueues" and status is not None:
        _rename(status, "flavorUsage", "flavorsUsage")
        status.pop("flavors", None)
    elif plural == "workloads":
        if spec is not None and ("priorityClassName" in spec or "priorityClassSource" in spec):
            name = spec.pop("priorityClassName", None)
            source = spec.pop("priorityClassSource", "") or ""
            if name:
                group, kind = _PRIORITY_SOURCES.get(source, ("scheduling.k8s.io", "PriorityClass"))
                spec["priorityClassRef"] = {"group": group, "kind": kind, "name": name}
        _rename(status, "accumulatedPastExexcutionTimeSeconds", "accumulatedPastExecutionTimeSeconds")
    elif plural == "admissionchecks" and spec is not None:
        spec.pop("retryDelayMinutes", None)


def _kueue_down(plural: str, obj: dict[str, Any]) -> None:
    """v1beta2 -> v1beta1 in place."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else None
    status = obj.get("status") if isinstance(obj.get("status"), dict) else None
    if plural == "clusterqueues" and spec is not None:
        _rename(spec, "cohortName", "cohort")
        strategy = spec.get("admissionChecksStrategy")
        if isinstance(strategy, dict):
            checks = strategy.get("admissionChecks") or []
            # Only a strategy of plain names maps back to the v1beta1 list.
            if checks and all(set(c) <= {"name"} for c in checks):
                spec.pop("admissionChecksStrategy")
                spec["admissionChecks"] = [c["name"] for c in checks]
    elif plural == "localqueues" and status is not None:
        _rename(status, "flavorsUsage", "flavorUsage")
    elif plural == "workloads":
        if spec is not None and isinstance(spec.get("priorityClassRef"), dict):
            ref = spec.pop("priorityClassRef")
            spec["priorityClassName"] = ref.get("name")
            spec["priorityClassSource"] = _PRIORITY_GROUPS.get(ref.get("group", ""), "")
        _rename(status, "accumulatedPastExecutionTimeSeconds", "accumulatedPastExexcutionTimeSeconds")


class Registry:
    """The resource types served, looked up by key, by URL parts or by apiVersion/kind.

    ``Registry(crd_dir)`` loads every CRD found under ``crd_dir``; a CRD-derived type replaces the
    built-in type with the same key (and brings its schemas).

    Example:
        >>> reg = Registry()
        >>> reg.lookup("kueue.x-k8s.io", "v1beta1", "workloads").kind
        'Workload'
        >>> reg.key_for_kind("ray.io/v1", "RayJob")
        'rayjobs.ray.io'
    """

    def __init__(
        self, crd_dir: str | os.PathLike[str] | None = None, *, extra: Iterable[ResourceType] = ()
    ) -> None:
        self._types: dict[str, ResourceType] = {}
        for t in builtin_types():
            self.add(t)
        self.crd_dir = Path(crd_dir) if crd_dir is not None else None
        if crd_dir is not None:
            for t in load_crd_dir(crd_dir):
                self.add(t)
        for t in extra:
            self.add(t)

    # -- lookups ---------------------------------------------------------------------------------
    def add(self, rtype: ResourceType) -> None:
        """Add or replace a type (keyed by ``plural.group``)."""
        self._types[rtype.key] = rtype

    def get(self, key: str) -> ResourceType:
        """The type for ``key``; ``KeyError`` when unknown."""
        return self._types[key]

    def __contains__(self, key: object) -> bool:
        return key in self._types

    def types(self) -> list[ResourceType]:
        """All types, in a stable order."""
        return [self._types[k] for k in sorted(self._types)]

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        """The type served at ``/apis/{group}/{version}/.../{plural}`` (or ``None``)."""
        t = self._types.get(resource_key(group, plural))
        return t if t is not None and version in t.versions else None

    def key_for_kind(self, api_version: str, kind: str) -> str | None:
        """The store key for an ``apiVersion``/``kind`` pair, if served."""
        group, _, version = api_version.rpartition("/")
        for t in self._types.values():
            if t.group == group and t.kind == kind and version in t.versions:
                return t.key
        return None

    def resolve(self, name: str) -> ResourceType | None:
        """Find a type by plural, singular, short name or key (like ``kubectl get <name>``).

        Example:
            >>> Registry().resolve("lq").key
            'localqueues.kueue.x-k8s.io'
        """
        if name in self._types:
            return self._types[name]
        for t in self.types():
            if name in (t.plural, t.singular, t.kind.lower(), *t.short_names):
                return t
        return None

    # -- scale -----------------------------------------------------------------------------------
    def enable_scale(
        self,
        key: str,
        get_replicas: Callable[[dict[str, Any]], int],
        set_replicas: Callable[[dict[str, Any], int], dict[str, Any]],
        selector: str = "",
    ) -> None:
        """Serve ``/scale`` (autoscaling/v1 ``Scale``) for ``key`` through the two callables.

        Example:
            >>> reg = Registry()
            >>> reg.enable_scale("workloads.kueue.x-k8s.io",
            ...     lambda o: int(o["spec"].get("active", True)),
            ...     lambda o, n: {**o, "spec": {**o["spec"], "active": n > 0}})
            >>> "scale" in reg.get("workloads.kueue.x-k8s.io").subresources
            True
        """
        t = self.get(key)
        self._types[key] = dataclasses.replace(
            t, subresources=t.subresources | {"scale"}, scale=ScaleHooks(get_replicas, set_replicas, selector)
        )

    def scale_of(self, key: str, obj: dict[str, Any]) -> dict[str, Any]:
        """The autoscaling/v1 ``Scale`` object for a stored object (``KeyError`` if not enabled).

        Example:
            >>> reg = Registry()
            >>> reg.enable_scale("rayjobs.ray.io", lambda o: 1, lambda o, n: o)
            >>> reg.scale_of("rayjobs.ray.io", {"metadata": {"name": "j"}})["spec"]
            {'replicas': 1}
        """
        t = self.get(key)
        if t.scale is None:
            raise KeyError(f"{key} has no scale subresource")
        meta = obj.get("metadata", {})
        replicas = int(t.scale.get_replicas(obj))
        current = int(t.scale.get_status_replicas(obj)) if t.scale.get_status_replicas else replicas
        selector = t.scale.get_selector(obj) if t.scale.get_selector else t.scale.selector
        scale_meta = {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        }
        return {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": scale_meta,
            "spec": {"replicas": replicas},
            "status": {"replicas": current, **({"selector": selector} if selector else {})},
        }

    # -- conversion ------------------------------------------------------------------------------
    def to_storage(self, key: str, obj: dict[str, Any], from_version: str) -> dict[str, Any]:
        """A copy of ``obj`` (at ``from_version``) converted to the storage version.

        Example:
            >>> Registry().to_storage("workloads.kueue.x-k8s.io", {"apiVersion": "kueue.x-k8s.io/v1beta1",
            ...     "kind": "Workload", "spec": {"priorityClassName": "high",
            ...     "priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass"}}, "v1beta1")["spec"]
            {'priorityClassRef': {'group': 'kueue.x-k8s.io', 'kind': 'WorkloadPriorityClass', 'name': 'high'}}
        """
        t = self.get(key)
        out = deep_copy(obj)
        if from_version != t.storage_version and t.group == KUEUE:
            _kueue_up(t.plural, out)
        if "apiVersion" in out or from_version != t.storage_version:
            out["apiVersion"] = t.api_version
        return out

    def from_storage(self, key: str, obj: dict[str, Any], to_version: str) -> dict[str, Any]:
        """A copy of stored ``obj`` converted to ``to_version`` (the object itself when no change).

        Example:
            >>> Registry().from_storage("localqueues.kueue.x-k8s.io", {"apiVersion": "kueue.x-k8s.io/v1beta2",
            ...     "kind": "LocalQueue", "status": {"flavorsUsage": []}}, "v1beta1")
            {'apiVersion': 'kueue.x-k8s.io/v1beta1', 'kind': 'LocalQueue', 'status': {'flavorUsage': []}}
        """
        t = self.get(key)
        if to_version == t.storage_version:
            return obj
        out = deep_copy(obj)
        if t.group == KUEUE:
            _kueue_down(t.plural, out)
        out["apiVersion"] = t.api_version_for(to_version)
        return out

    # -- discovery -------------------------------------------------------------------------------
    def group_versions(self) -> dict[str, list[str]]:
        """``{group: [versions, preferred first]}`` for every group (core is ``""``).

        Example:
            >>> Registry().group_versions()["kueue.x-k8s.io"]
            ['v1beta2', 'v1beta1']
        """
        out: dict[str, list[str]] = {}
        for t in self.types():
            versions = out.setdefault(t.group, [])
            for v in t.versions:
                if v not in versions:
                    versions.append(v)
        for group, versions in out.items():
            preferred = [t.storage_version for t in self.types() if t.group == group][0]
            versions.sort(key=lambda v, p=preferred: (v != p, _version_rank(v)))  # type: ignore[misc]
        return out

    def api_versions(self) -> dict[str, Any]:
        """The ``/api`` answer (``APIVersions``).

        Example:
            >>> Registry().api_versions()["versions"]
            ['v1']
        """
        return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}

    def api_group_list(self) -> dict[str, Any]:
        """The ``/apis`` answer (``APIGroupList``).

        Example:
            >>> [g["name"] for g in Registry().api_group_list()["groups"]][:2]
            ['keda.sh', 'kueue.x-k8s.io']
        """
        groups = []
        for group, versions in sorted(self.group_versions().items()):
            if not group:
                continue
            entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
            groups.append({"name": group, "versions": entries, "preferredVersion": entries[0]})
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def api_group(self, group: str) -> dict[str, Any] | None:
        """The ``/apis/{group}`` answer (``APIGroup``), or ``None`` if the group is not served."""
        for entry in self.api_group_list()["groups"]:
            if entry["name"] == group:
                return {"kind": "APIGroup", "apiVersion": "v1", **entry}
        return None

    def api_resource_list(self, group: str, version: str) -> dict[str, Any] | None:
        """The ``/api/v1`` or ``/apis/{group}/{version}`` answer (``APIResourceList``), or ``None``.

        Example:
            >>> doc = Registry().api_resource_list("ray.io", "v1")
            >>> [(r["name"], r["verbs"][:2]) for r in doc["resources"]][:2]
            [('rayclusters', ['create', 'delete']), ('rayclusters/status', ['get', 'patch'])]
        """
        resources: list[dict[str, Any]] = []
        for t in self.types():
            if t.group != group or version not in t.versions:
                continue
            entry: dict[str, Any] = {
                "name": t.plural,
                "singularName": t.singular,
                "namespaced": t.namespaced,
                "kind": t.kind,
                "verbs": list(t.verbs),
            }
            if t.short_names:
                entry["shortNames"] = list(t.short_names)
            if t.categories:
                entry["categories"] = list(t.categories)
            if t.storage_version == version:
                entry["storageVersionHash"] = _hash(t.key)
            resources.append(entry)
            if "status" in t.subresources:
                resources.append(
                    {
                        "name": f"{t.plural}/status",
                        "singularName": "",
                        "namespaced": t.namespaced,
                        "kind": t.kind,
                        "verbs": ["get", "patch", "update"],
                    }
                )
            if "scale" in t.subresources:
                resources.append(
                    {
                        "name": f"{t.plural}/scale",
                        "singularName": "",
                        "namespaced": t.namespaced,
                        "kind": "Scale",
                        "group": "autoscaling",
                        "version": "v1",
                        "verbs": ["get", "patch", "update"],
                    }
                )
        if not resources:
            return None
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version,
            "resources": resources,
        }


def _version_rank(v: str) -> tuple[int, int, int]:
    """Kubernetes version priority: GA > beta > alpha, higher numbers first."""
    import re

    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", v)
    if not m:
        return (3, 0, 0)
    major, level, minor = int(m.group(1)), m.group(2), int(m.group(3) or 0)
    return ({None: 0, "beta": 1, "alpha": 2}[level], -major, -minor)


def _hash(text: str) -> str:
    import base64
    import hashlib

    return base64.b64encode(hashlib.sha256(text.encode()).digest()[:8]).decode()
