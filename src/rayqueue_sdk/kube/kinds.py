"""The resource types the SDK reads and writes, as :class:`Kind` values, and the one table that maps a
manifest's ``apiVersion``/``kind`` to its REST path (no discovery round trip).

Kueue's kinds are not constants here: their version is the one the server serves, which a
:class:`~rayqueue_sdk.kube.session.KubeSession` discovers (``session.kueue_kind("workloads")``).

Example:
    >>> RAYCLUSTERS.key, RAYCLUSTERS.path("ds", "ws")
    ('rayclusters.ray.io', '/apis/ray.io/v1/namespaces/ds/rayclusters/ws')
    >>> kind_of({"apiVersion": "v1", "kind": "ConfigMap"}).path("ds", "c")
    '/api/v1/namespaces/ds/configmaps/c'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rayqueue_sdk.errors import ConfigError

__all__ = [
    "KUEUE_GROUP",
    "PLURALS",
    "PODS",
    "RAYCLUSTERS",
    "RAYJOBS",
    "SCALEDOBJECTS",
    "Kind",
    "kind_of",
]

KUEUE_GROUP = "kueue.x-k8s.io"  # Kueue's API group (its version is found per cluster)


@dataclass(frozen=True)
class Kind:
    """A resource type: group (``""`` for the core group), version, plural and scope.

    Example:
        >>> Kind("kueue.x-k8s.io", "v1beta2", "workloadpriorityclasses", namespaced=False).path(None, "high")
        '/apis/kueue.x-k8s.io/v1beta2/workloadpriorityclasses/high'
        >>> Kind("", "v1", "pods").key, Kind("", "v1", "pods").path("ds")
        ('pods', '/api/v1/namespaces/ds/pods')
    """

    group: str
    version: str
    plural: str
    namespaced: bool = True

    @property
    def key(self) -> str:
        """``<plural>.<group>`` (the plural alone for the core group), as in RBAC and error messages."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def api_version(self) -> str:
        """``<group>/<version>`` (the version alone for the core group), as in a manifest.

        Example:
            >>> RAYJOBS.api_version
            'ray.io/v1'
        """
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        """The REST path of the collection (across namespaces when ``namespace`` is ``None``) or of one
        object."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        return f"{base}/{name}" if name else base


# KubeRay's kinds
RAYCLUSTERS = Kind("ray.io", "v1", "rayclusters")
RAYJOBS = Kind("ray.io", "v1", "rayjobs")
# the core group's
PODS = Kind("", "v1", "pods")
# KEDA's
SCALEDOBJECTS = Kind("keda.sh", "v1alpha1", "scaledobjects")

#: Kind -> plural of the plain objects the SDK creates from manifests (besides Ray's and Kueue's).
PLURALS: dict[str, str] = {
    "ServiceAccount": "serviceaccounts",
    "Secret": "secrets",
    "ConfigMap": "configmaps",
    "Role": "roles",
    "RoleBinding": "rolebindings",
    "Deployment": "deployments",
    "TriggerAuthentication": "triggerauthentications",
    "ScaledObject": "scaledobjects",
    "RayCluster": "rayclusters",
    "RayJob": "rayjobs",
}


def kind_of(manifest: Mapping[str, Any]) -> Kind:
    """The :class:`Kind` of a manifest, from its ``apiVersion`` and ``kind`` (see :data:`PLURALS`).

    Raises:
        ConfigError: the manifest's kind is not one the SDK writes.

    Example:
        >>> kind_of({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role"}).key
        'roles.rbac.authorization.k8s.io'
        >>> kind_of({"apiVersion": "v1", "kind": "Node"})
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: kind: ...
    """
    kind = str(manifest.get("kind") or "")
    if kind not in PLURALS:
        raise ConfigError("kind", kind, ", ".join(sorted(PLURALS)), problem="not a kind the SDK writes")
    group, _, version = str(manifest.get("apiVersion") or "").rpartition("/")
    return Kind(group, version, PLURALS[kind])
