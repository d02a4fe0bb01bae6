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

__all__ = ["RegistryDiscovery"]


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
        """The ``/apis`` answer (``APIGroupList``).

        Example:
            >>> from rayqueue_local.registry.registry import Registry
            >>> [g["name"] for g in Registry().api_group_list()["groups"]][:4]
            ['apiextensions.k8s.io', 'apps', 'authentication.k8s.io', 'authorization.k8s.io']
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
