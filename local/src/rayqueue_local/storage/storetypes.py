"""The store's value types and errors: ``StoreError``, ``Event``, ``ListResult`` and small helpers.

Everything here is re-exported by :mod:`rayqueue_local.storage.store`, where users import these names
from; reprs and tracebacks name this module, where they are defined. ``invalid`` builds the upstream-shaped
422 Invalid error; ``now_rfc3339`` is the timestamp format of every ``metadata`` time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from rayqueue_local.errors import LocalControlPlaneError
from rayqueue_local.registry.registry import ResourceType

__all__ = [
    "MAX_OBJECT_BYTES",
    "AdmissionHook",
    "Event",
    "ListResult",
    "ObjKey",
    "Objects",
    "PatchBody",
    "StoreError",
    "invalid",
    "object_key",
    "owner_uids",
    "qualified_kind",
]

#: An admission hook: ``(operation, new object, old object or None)`` to the object to store.
AdmissionHook = Callable[[str, dict[str, Any], "dict[str, Any] | None"], dict[str, Any]]
#: The largest object the store keeps, as compact JSON: the API server's 3 MiB request limit, applied
#: to the stored object, so that a small YAML or patch that expands past it is refused too.
MAX_OBJECT_BYTES = 3 * 1024 * 1024
ObjKey = tuple[str, str]  # (namespace or "", name)
Objects = list[dict[str, Any]]  # a list of objects, as JSON-like dicts
PatchBody = dict[str, Any] | list[Any]  # a patch body: a list for a JSON patch, else a dict


class StoreError(LocalControlPlaneError):
    """An API error carrying what a Kubernetes ``Status`` needs (``to_status()`` renders it).

    Example:
        >>> err = StoreError(409, "Conflict", "boom", details={"name": "x"})
        >>> err.to_status()["code"], err.to_status()["details"]
        (409, {'name': 'x'})
    """

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        causes: list[dict[str, Any]] | None = None,
        *,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.causes: list[dict[str, Any]] = list(causes or [])
        self.details: dict[str, Any] = dict(details or {})

    def to_status(self) -> dict[str, Any]:
        """The ``meta/v1 Status`` body for this error."""
        details = dict(self.details)
        if self.causes:
            details["causes"] = self.causes
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if details:
            status["details"] = details
        return status

    def __repr__(self) -> str:
        return f"StoreError({self.code}, {self.reason!r}, {self.message!r})"


@dataclass(frozen=True)
class Event:
    """A committed write: ``type`` is ``ADDED``, ``MODIFIED`` or ``DELETED``.

    ``object`` is the object after the write (as last stored for ``DELETED``), ``old`` the object
    before it. Both are shared: treat them as read-only.

    Example:
        >>> Event("ADDED", "pods", {"metadata": {"name": "p"}}, None).type
        'ADDED'
    """

    type: str
    key: str
    object: dict[str, Any]
    old: dict[str, Any] | None = None

    @property
    def resource_version(self) -> int:
        """The resourceVersion of the write, as an int."""
        return int(self.object["metadata"]["resourceVersion"])


class ListResult(NamedTuple):
    """One page of a list: items, the list's resourceVersion, the continue token and what remains."""

    items: list[dict[str, Any]]
    resource_version: str
    continue_token: str | None
    remaining_item_count: int | None


# -- helpers ----------------------------------------------------------------------------------------------


def qualified_kind(rt: ResourceType) -> str:
    """``Kind.group`` (or ``Kind`` for core), as 422 messages name a resource."""
    return f"{rt.kind}.{rt.group}" if rt.group else rt.kind


def invalid(rt: ResourceType, name: str, causes: list[dict[str, Any]]) -> StoreError:
    """A 422 Invalid error in the upstream shape: ``Kind.group "name" is invalid: field: msg, ...``.

    Example:
        >>> from rayqueue_local.registry.registry import Registry
        >>> invalid(Registry().get("pods"), "p", [{"reason": "FieldValueRequired",
        ...     "message": "Required value", "field": "spec.containers"}]).message
        'Pod "p" is invalid: spec.containers: Required value'
    """
    parts = [f"{c['field']}: {c['message']}" if c.get("field") else c["message"] for c in causes]
    joined = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    return StoreError(
        422,
        "Invalid",
        f'{qualified_kind(rt)} "{name}" is invalid: {joined}',
        causes,
        details={"name": name, "group": rt.group, "kind": rt.kind},
    )


def object_key(obj: dict[str, Any]) -> ObjKey:
    """An object's key in its resource's bucket: ``(namespace or "", name)``.

    Example:
        >>> object_key({"metadata": {"name": "c", "namespace": "default"}})
        ('default', 'c')
        >>> object_key({"metadata": {"name": "default"}})
        ('', 'default')
    """
    meta = obj["metadata"]
    return meta.get("namespace") or "", meta["name"]


def owner_uids(obj: dict[str, Any]) -> set[str]:
    """The uids of an object's owners (its ``ownerReferences``).

    Example:
        >>> owner_uids({"metadata": {"ownerReferences": [{"uid": "u1"}, {"name": "no-uid"}]}})
        {'u1'}
    """
    return {r["uid"] for r in (obj.get("metadata") or {}).get("ownerReferences") or () if r.get("uid")}
