"""The discovery documents of the registry: ``/api``, ``/apis``, ``/apis/{group}``, ``APIResourceList``.

:class:`RegistryDiscovery` builds them from the registry's types (with ``x/status`` and ``x/scale``
entries); :class:`~rayqueue_local.registry.registry.Registry` inherits it.

Example:
    >>> from rayqueue_local.registry.registry import Registry
    >>> Registry().api_group("ray.io")["preferredVersion"]
    {'groupVersion': 'ray.io/v1', 'version': 'v1'}
"""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any

from rayqueue_local.registry.resourcetypes import ResourceType

__all__ = ["GROUP_PRIORITIES", "RegistryDiscovery", "group_order_key"]

#: The ``groupPriorityMinimum`` of kube-apiserver's own APIServices
#: (``pkg/controlplane/apiserver/aggregator.go`` ``APIVersionPriorities``); a CRD's group gets 1000
#: (``apiextensions-apiserver``'s autoregistration), like any group not listed here.
GROUP_PRIORITIES: dict[str, int] = {
    "": 18000,
    "apps": 17800,
    "events.k8s.io": 17750,
    "authentication.k8s.io": 17700,
    "authorization.k8s.io": 17600,
    "autoscaling": 17500,
    "batch": 17400,
    "certificates.k8s.io": 17300,
    "networking.k8s.io": 17200,
    "policy": 17100,
    "rbac.authorization.k8s.io": 17000,
    "storage.k8s.io": 16800,
    "admissionregistration.k8s.io": 16700,
    "apiextensions.k8s.io": 16700,
    "scheduling.k8s.io": 16600,
    "coordination.k8s.io": 16500,
    "node.k8s.io": 16300,
    "discovery.k8s.io": 16200,
    "flowcontrol.apiserver.k8s.io": 16100,
}
_CRD_GROUP_PRIORITY = 1000


def group_order_key(group: str, versions: list[str]) -> tuple[int, str]:
    """Where ``group`` goes in ``/apis``: the aggregator sorts APIServices by ``groupPriorityMinimum``
    (highest first), then by APIService name (``<version>.<group>``), and lists each group where its
    first APIService falls (``kube-aggregator`` ``SortedByGroupAndVersion``).

    Example:
        >>> sorted(["ray.io", "apps", "keda.sh", "batch"], key=lambda g: group_order_key(g, ["v1alpha1"]
        ...        if g == "keda.sh" else ["v1"]))
        ['apps', 'batch', 'ray.io', 'keda.sh']
    """
    priority = GROUP_PRIORITIES.get(group, _CRD_GROUP_PRIORITY)
    return -priority, min(f"{v}.{group}" for v in versions) if versions else group


class RegistryDiscovery:
    """The discovery methods of :class:`~rayqueue_local.registry.registry.Registry`, over its ``types()``."""

    def types(self) -> list[ResourceType]:
        """All types, in a stable order (the registry provides them)."""
        raise NotImplementedError

    def group_versions(self) -> dict[str, list[str]]:
        """``{group: [versions, preferred first]}`` for every group (core is ``""``).

        Example:
            >>> from rayqueue_local.registry.registry import Registry
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
            >>> from rayqueue_local.registry.registry import Registry
            >>> Registry().api_versions()["versions"]
            ['v1']
        """
        return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}

    def api_group_list(self) -> dict[str, Any]:
        """The ``/apis`` answer (``APIGroupList``), in the aggregator's order (:func:`group_order_key`).

        Example:
            >>> from rayqueue_local.registry.registry import Registry
            >>> [g["name"] for g in Registry().api_group_list()["groups"]][:4]
            ['apps', 'authentication.k8s.io', 'authorization.k8s.io', 'batch']
        """
        groups = []
        served = self.group_versions()
        for group in sorted(served, key=lambda g: group_order_key(g, served[g])):
            versions = served[group]
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
            >>> from rayqueue_local.registry.registry import Registry
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
            if t.storage_version == version and "get" in t.verbs:  # create-only reviews are not stored
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
            if "token" in t.subresources:  # serviceaccounts/token: TokenRequest, create only
                resources.append(
                    {
                        "name": f"{t.plural}/token",
                        "singularName": "",
                        "namespaced": t.namespaced,
                        "group": "authentication.k8s.io",
                        "version": "v1",
                        "kind": "TokenRequest",
                        "verbs": ["create"],
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
    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", v)
    if not m:
        return (3, 0, 0)
    major, level, minor = int(m.group(1)), m.group(2), int(m.group(3) or 0)
    return ({None: 0, "beta": 1, "alpha": 2}[level], -major, -minor)


def _hash(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode()).digest()[:8]).decode()
