"""What a resource type is: :class:`ResourceType` (names, scope, versions, subresources, schemas).

Also :class:`ScaleHooks` (how ``/scale`` reads and writes replicas), :func:`resource_key` (the
store key ``plural.group``) and :data:`ALL_VERBS`.

Example:
    >>> resource_key("kueue.x-k8s.io", "workloads")
    'workloads.kueue.x-k8s.io'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ALL_VERBS", "KUEUE", "ResourceType", "ScaleHooks", "resource_key"]

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

KUEUE = "kueue.x-k8s.io"  # Kueue's API group


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
    #: a CRD version's ``additionalPrinterColumns`` (name, type, format, description, priority,
    #: jsonPath), per served version; empty for built-ins, which have printers of their own
    printer_columns: dict[str, tuple[dict[str, Any], ...]] = field(
        default_factory=dict, compare=False, repr=False
    )
    #: the CustomResourceDefinition document the type was read from (shared: treat as read-only)
    crd: dict[str, Any] | None = field(default=None, compare=False, repr=False)
    #: versions known (converted to and from storage) but not served: their paths answer 404 and
    #: discovery omits them (:func:`~rayqueue_local.registry.servedversions.with_served_versions`)
    unserved: tuple[str, ...] = ()

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
