"""The store's object map and its indexes: by resource and key, by uid, by owner, and per namespace.

:class:`ObjectIndex` is one part of :class:`~rayqueue_local.storage.store.Store`, held as an attribute.
It holds the stored objects themselves (the store hands out copies) and keeps three indexes in step with
every :meth:`~ObjectIndex.put` and :meth:`~ObjectIndex.remove`: which object a uid names, which objects
an owner's uid has as dependents (``ownerReferences``, for the garbage collector), and how many objects
each namespace holds (a terminating namespace goes once it is empty). It keeps no lock of its own: the
store calls it with the store lock held.

Example:
    >>> index = ObjectIndex()
    >>> owner = {"metadata": {"name": "o", "namespace": "ns", "uid": "u1"}}
    >>> child = {"metadata": {"name": "c", "namespace": "ns", "uid": "u2",
    ...                       "ownerReferences": [{"uid": "u1"}]}}
    >>> index.put("configmaps", ("ns", "o"), owner, None)
    >>> index.put("configmaps", ("ns", "c"), child, None)
    >>> index.where("u1"), sorted(index.dependents("u1")), index.namespace_count("ns")
    (('configmaps', 'ns', 'o'), [('configmaps', 'ns', 'c')], 2)
    >>> index.remove("configmaps", ("ns", "c"), child)
    >>> index.dependents("u1"), index.namespace_count("ns"), index.count("configmaps")
    (set(), 1, 1)
"""

from __future__ import annotations

from typing import Any

from rayqueue_local.storage.storetypes import ObjKey, owner_uids

__all__ = ["Ident", "ObjectIndex"]

#: An object's place: (resource key, namespace or "", name)
Ident = tuple[str, str, str]


class ObjectIndex:
    """The stored objects by resource key and ``(namespace, name)``, with uid, owner and namespace indexes.

    Example:
        >>> index = ObjectIndex()
        >>> index.put("namespaces", ("", "default"), {"metadata": {"name": "default", "uid": "u"}}, None)
        >>> index.get("namespaces", ("", "default"))["metadata"]["name"], index.has_uid("u")
        ('default', True)
    """

    def __init__(self) -> None:
        self._objects: dict[str, dict[ObjKey, dict[str, Any]]] = {}
        self._uids: dict[str, Ident] = {}
        self._dependents: dict[str, set[Ident]] = {}
        self._ns_counts: dict[str, int] = {}

    # -- reads -------------------------------------------------------------------------------------
    def bucket(self, key: str) -> dict[ObjKey, dict[str, Any]]:
        """The stored objects of resource ``key`` by ``(namespace, name)``: the live map, not a copy
        (empty and detached for a resource with no object); callers only read it."""
        return self._objects.get(key, {})

    def get(self, key: str, k: ObjKey) -> dict[str, Any] | None:
        """The stored object of ``key`` at ``k``, or ``None``."""
        return self._objects.get(key, {}).get(k)

    def resource_keys(self) -> list[str]:
        """The resource keys that have (or had) objects."""
        return list(self._objects)

    def count(self, key: str | None = None) -> int:
        """How many objects of ``key`` are stored, or in total."""
        if key is not None:
            return len(self._objects.get(key, {}))
        return sum(len(v) for v in self._objects.values())

    def all_objects(self) -> dict[str, list[dict[str, Any]]]:
        """Every stored object, by resource key (what a snapshot of the state writes)."""
        return {key: list(bucket.values()) for key, bucket in self._objects.items()}

    def where(self, uid: str) -> Ident | None:
        """The place of the object with this uid, or ``None``."""
        return self._uids.get(uid)

    def has_uid(self, uid: Any) -> bool:
        """Whether an object with this uid is stored."""
        return uid in self._uids

    def dependents(self, uid: str) -> set[Ident]:
        """The places of the objects whose ``ownerReferences`` name ``uid`` (the live set)."""
        return self._dependents.get(uid, set())

    def pop_dependents(self, uid: str) -> set[Ident]:
        """:meth:`dependents`, forgotten (its owner is gone)."""
        return self._dependents.pop(uid, set())

    def namespace_count(self, namespace: str) -> int:
        """How many objects namespace ``namespace`` holds."""
        return self._ns_counts.get(namespace, 0)

    # -- writes ------------------------------------------------------------------------------------
    def put(self, key: str, k: ObjKey, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        """Store ``obj`` at ``k`` (replacing ``old``, ``None`` for a new object) and update the indexes."""
        bucket = self._objects.setdefault(key, {})
        bucket[k] = obj
        ident = (key, k[0], k[1])
        uid = obj["metadata"].get("uid")
        if old is None:
            if uid:
                self._uids[uid] = ident
            if k[0]:
                self._ns_counts[k[0]] = self._ns_counts.get(k[0], 0) + 1
        old_owners = owner_uids(old) if old is not None else set()
        new_owners = owner_uids(obj)
        for o in old_owners - new_owners:
            self._dependents.get(o, set()).discard(ident)
        for o in new_owners - old_owners:
            self._dependents.setdefault(o, set()).add(ident)

    def remove(self, key: str, k: ObjKey, obj: dict[str, Any]) -> None:
        """Remove the object ``obj`` stored at ``k`` and its index entries."""
        del self._objects[key][k]
        ident = (key, k[0], k[1])
        self._uids.pop(obj["metadata"].get("uid", ""), None)
        for o in owner_uids(obj):
            self._dependents.get(o, set()).discard(ident)
        if k[0]:
            self._ns_counts[k[0]] -= 1
