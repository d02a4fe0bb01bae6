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

The parts live in their own modules: :mod:`~rayqueue_local.registry.resourcetypes`,
:mod:`~rayqueue_local.registry.builtintypes`, :mod:`~rayqueue_local.registry.crds`,
:mod:`~rayqueue_local.registry.conversion`, :mod:`~rayqueue_local.registry.servedversions` (serving
fewer versions, e.g. Kueue 0.20's ``v1beta2`` alone) and :mod:`~rayqueue_local.registry.discoverydocs`;
this module holds :class:`Registry` and re-exports their public names.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rayqueue_local.apimachinery.patchcore import deep_copy
from rayqueue_local.registry.builtintypes import builtin_types
from rayqueue_local.registry.conversion import kueue_down, kueue_up
from rayqueue_local.registry.crds import load_crd_dir
from rayqueue_local.registry.crds import type_from_crd as type_from_crd
from rayqueue_local.registry.discoverydocs import RegistryDiscovery
from rayqueue_local.registry.resourcetypes import ALL_VERBS, KUEUE, ResourceType, ScaleHooks, resource_key
from rayqueue_local.registry.servedversions import with_served_versions

log = logging.getLogger(__name__)

__all__ = ["ALL_VERBS", "Registry", "ResourceType", "ScaleHooks", "resource_key"]


class Registry(RegistryDiscovery):
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
        #: bumped by every :meth:`add` and :meth:`remove`: what caches of derived documents key on
        self.revision = 0
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
        """Add or replace a type (keyed by ``plural.group``); bumps :attr:`revision`.

        The table is replaced, never changed in place, so that readers in other threads always see
        a whole one (a CustomResourceDefinition created over HTTP adds a type while others read).
        """
        self._types = {**self._types, rtype.key: rtype}
        self.revision += 1

    def remove(self, key: str) -> ResourceType | None:
        """Stop serving ``key`` (a deleted CustomResourceDefinition); returns the type removed, if any.

        Example:
            >>> reg = Registry()
            >>> reg.remove("rayjobs.ray.io").kind, "rayjobs.ray.io" in reg
            ('RayJob', False)
        """
        types = dict(self._types)
        removed = types.pop(key, None)
        if removed is not None:
            self._types = types
            self.revision += 1
        return removed

    def get(self, key: str) -> ResourceType:
        """The type for ``key``; ``KeyError`` when unknown."""
        return self._types[key]

    def lookup_key(self, key: str) -> ResourceType | None:
        """The type for ``key``, or ``None`` when it is not served.

        Example:
            >>> Registry().lookup_key("nodes").namespaced
            False
        """
        return self._types.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._types

    def types(self) -> list[ResourceType]:
        """All types, in a stable order."""
        types = self._types
        return [types[k] for k in sorted(types)]

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        """The type served at ``/apis/{group}/{version}/.../{plural}`` (or ``None``)."""
        t = self._types.get(resource_key(group, plural))
        return t if t is not None and version in t.versions else None

    def key_for_kind(self, api_version: str, kind: str, *, unserved: bool = False) -> str | None:
        """The store key for an ``apiVersion``/``kind`` pair, if served (or, with ``unserved=True``,
        known though not served: the plane's own writes may use either Kueue generation).

        Example:
            >>> reg = Registry()
            >>> reg.serve_group_versions("kueue.x-k8s.io", ("v1beta1",))
            >>> reg.key_for_kind("kueue.x-k8s.io/v1beta2", "Workload") is None
            True
            >>> reg.key_for_kind("kueue.x-k8s.io/v1beta2", "Workload", unserved=True)
            'workloads.kueue.x-k8s.io'
        """
        group, _, version = api_version.rpartition("/")
        for t in self._types.values():
            if (
                t.group == group
                and t.kind == kind
                and (version in t.versions or (unserved and version in t.unserved))
            ):
                return t.key
        return None

    def serve_group_versions(self, group: str, versions: tuple[str, ...]) -> None:
        """Serve ``group``'s types at ``versions`` only (those each type knows; preferred first).

        The others' paths answer 404 and discovery leaves them out; objects keep their storage
        version (:func:`~rayqueue_local.registry.servedversions.with_served_versions`).

        Example:
            >>> reg = Registry()
            >>> reg.serve_group_versions("kueue.x-k8s.io", ("v1beta2",))
            >>> reg.group_versions()["kueue.x-k8s.io"], reg.lookup("kueue.x-k8s.io", "v1beta1", "workloads")
            (['v1beta2'], None)
        """
        for t in self.types():
            if t.group == group:
                narrowed = with_served_versions(t, versions)
                if narrowed is not t:
                    self.add(narrowed)

    def resolve(self, name: str) -> ResourceType | None:
        """Find a type by plural, singular, short name or key (like ``kubectl get <name>``).

        Example:
            >>> Registry().resolve("lq").key
            'localqueues.kueue.x-k8s.io'
        """
        exact = self._types.get(name)
        if exact is not None:
            return exact
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
        self.add(
            dataclasses.replace(
                t,
                subresources=t.subresources | {"scale"},
                scale=ScaleHooks(get_replicas, set_replicas, selector),
            )
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
            kueue_up(t.plural, out)
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
            kueue_down(t.plural, out)
        out["apiVersion"] = t.api_version_for(to_version)
        return out
