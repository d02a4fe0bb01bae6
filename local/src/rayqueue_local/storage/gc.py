"""Deletion: finalizers and ``deletionTimestamp``, ownerReference garbage collection, namespaces.

A delete marks an object held by finalizers (``deletionTimestamp``, a generation bump) and removes
it once the last finalizer goes; otherwise it removes it at once. A removal garbage-collects the
dependents (background propagation, cascading): a dependent whose owners are all gone is deleted,
one that still has another owner loses the dangling reference. ``Orphan`` strips the
ownerReferences of the dependents instead. Deleting a namespace marks it ``Terminating``, deletes
its contents and finalizes it once it is empty.
The examples run with :mod:`rayqueue_local.storage.store`'s doctests.
"""

from __future__ import annotations

from typing import Any

from rayqueue_local.apimachinery.patch import deep_copy
from rayqueue_local.apimachinery.time import now_rfc3339
from rayqueue_local.storage.reads import StoreReads
from rayqueue_local.storage.storetypes import Objects, StoreError

__all__ = ["StoreDeletion"]


class StoreDeletion(StoreReads):
    """The deletion methods of :class:`~rayqueue_local.storage.store.Store` and the garbage collector."""

    def delete(
        self,
        key: str,
        namespace: str | None,
        name: str,
        *,
        propagation_policy: str = "Background",
        resource_version: str | None = None,
        uid: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any] | None:
        """Delete an object; returns it (with ``deletionTimestamp`` when finalizers keep it).

        With finalizers the object stays, marked for deletion, until the last finalizer is removed.
        Dependents (ownerReferences) are garbage-collected once it is gone; ``Orphan`` strips their
        ownerReferences instead. ``resource_version``/``uid`` are preconditions (409 on mismatch).

        Example:
            >>> from rayqueue_local.storage.store import Store
            >>> store = Store()
            >>> cm = store.create("configmaps", {"metadata": {"name": "c", "namespace": "default",
            ...                                               "finalizers": ["x/y"]}})
            >>> "deletionTimestamp" in store.delete("configmaps", "default", "c")["metadata"]
            True
            >>> _ = store.patch("configmaps", "default", "c", {"metadata": {"finalizers": None}})
            >>> store.list("configmaps", "default")
            []
        """
        rt = self._type(key)
        with self._txn():
            old = self._stored(key, namespace, name)
            ometa = old["metadata"]
            if (resource_version and resource_version != ometa["resourceVersion"]) or (
                uid and uid != ometa["uid"]
            ):
                which = (
                    "ResourceVersion"
                    if resource_version and resource_version != ometa["resourceVersion"]
                    else "UID"
                )
                have = ometa["resourceVersion"] if which == "ResourceVersion" else ometa["uid"]
                want = resource_version if which == "ResourceVersion" else uid
                raise StoreError(
                    409,
                    "Conflict",
                    f'Operation cannot be fulfilled on {key} "{name}": the {which} in the '
                    f"precondition ({want}) does "
                    f"not match the {which} in record ({have}). The object might have been modified",
                    details={"name": name, "group": rt.group, "kind": rt.plural},
                )
            if dry_run:
                return deep_copy(old)
            if propagation_policy == "Orphan":
                self._orphan(ometa["uid"])
            result = self._delete(key, old, set())
            return deep_copy(result)

    def delete_collection(
        self,
        key: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        propagation_policy: str = "Background",
    ) -> Objects:
        """Delete every matching object; returns what each delete returned.

        Example:
            >>> from rayqueue_local.storage.store import Store
            >>> store = Store()
            >>> for n in "ab":
            ...     _ = store.create("configmaps", {"metadata": {"name": n, "namespace": "default"}})
            >>> len(store.delete_collection("configmaps", "default")), store.list("configmaps")
            (2, [])
        """
        with self._txn():
            out = []
            for obj in self.list(
                key, namespace, label_selector=label_selector, field_selector=field_selector
            ):
                meta = obj["metadata"]
                try:
                    result = self.delete(
                        key, meta.get("namespace"), meta["name"], propagation_policy=propagation_policy
                    )
                except StoreError as exc:  # already collected by a cascade
                    if exc.code != 404:
                        raise
                    continue
                if result is not None:
                    out.append(result)
            return out

    def _delete(self, key: str, old: dict[str, Any], seen: set[str]) -> dict[str, Any]:
        """Start deleting ``old`` (lock held): mark it if finalizers hold it, else remove it."""
        meta = old["metadata"]
        if key == "namespaces":
            return self._delete_namespace(old, seen)
        if meta.get("finalizers"):
            if meta.get("deletionTimestamp"):
                return old
            rt = self.registry.get(key)
            new = deep_copy(old)
            new["metadata"]["deletionTimestamp"] = now_rfc3339()
            new["metadata"]["deletionGracePeriodSeconds"] = 0
            if rt.has_generation:
                new["metadata"]["generation"] = meta.get("generation", 1) + 1
            new["metadata"]["resourceVersion"] = self._next_rv()
            self._commit("MODIFIED", key, new, old)
            return new
        return self._finalize(key, old, seen)

    def _finalize(self, key: str, obj: dict[str, Any], seen: set[str]) -> dict[str, Any]:
        """Remove ``obj`` for good, then collect its dependents and maybe its namespace (lock held)."""
        gone = deep_copy(obj)
        gone["metadata"]["resourceVersion"] = self._next_rv()
        self._commit("DELETED", key, gone, obj)
        uid = obj["metadata"].get("uid", "")
        seen.add(uid)
        for dep_key, dep_ns, dep_name in sorted(self._index.pop_dependents(uid)):
            dependent = self._index.get(dep_key, (dep_ns, dep_name))
            if dependent is not None:
                self._collect(dep_key, dependent, seen)
        ns = gone["metadata"].get("namespace")
        if ns and self._index.namespace_count(ns) == 0:
            ns_obj = self._index.get("namespaces", ("", ns))
            if (
                ns_obj is not None
                and ns_obj["metadata"].get("deletionTimestamp")
                and not ns_obj["metadata"].get("finalizers")
            ):
                self._finalize("namespaces", ns_obj, seen)
        return gone

    def _collect(self, key: str, dependent: dict[str, Any], seen: set[str]) -> None:
        """Garbage-collect a dependent whose owner went away (lock held)."""
        refs = dependent["metadata"].get("ownerReferences") or []
        alive = [r for r in refs if self._index.has_uid(r.get("uid")) and r.get("uid") not in seen]
        if alive:
            if len(alive) != len(refs):  # drop the dangling references, keep the object
                new = deep_copy(dependent)
                new["metadata"]["ownerReferences"] = alive
                new["metadata"]["resourceVersion"] = self._next_rv()
                self._commit("MODIFIED", key, new, dependent)
            return
        self._delete(key, dependent, seen)

    def _orphan(self, uid: str) -> None:
        for dep_key, dep_ns, dep_name in sorted(self._index.dependents(uid)):
            dependent = self._index.bucket(dep_key)[(dep_ns, dep_name)]
            new = deep_copy(dependent)
            refs = [r for r in new["metadata"].get("ownerReferences", []) if r.get("uid") != uid]
            if refs:
                new["metadata"]["ownerReferences"] = refs
            else:
                new["metadata"].pop("ownerReferences", None)
            new["metadata"]["resourceVersion"] = self._next_rv()
            self._commit("MODIFIED", dep_key, new, dependent)

    def _delete_namespace(self, old: dict[str, Any], seen: set[str]) -> dict[str, Any]:
        name = old["metadata"]["name"]
        current = old
        if not old["metadata"].get("deletionTimestamp"):
            current = deep_copy(old)
            current["metadata"]["deletionTimestamp"] = now_rfc3339()
            current["metadata"]["deletionGracePeriodSeconds"] = 0
            current["status"] = {"phase": "Terminating"}
            current["metadata"]["resourceVersion"] = self._next_rv()
            self._commit("MODIFIED", "namespaces", current, old)
        for key in self._index.resource_keys():
            for k in sorted(k for k in self._index.bucket(key) if k[0] == name):
                obj = self._index.get(key, k)
                if obj is not None and not obj["metadata"].get("deletionTimestamp"):
                    self._delete(key, obj, seen)
        latest = self._index.get("namespaces", ("", name))
        if latest is None:  # the last object's removal already finalized the namespace
            gone = deep_copy(current)
            gone["metadata"]["resourceVersion"] = str(self._rv)
            return gone
        if self._index.namespace_count(name) == 0 and not latest["metadata"].get("finalizers"):
            return self._finalize("namespaces", latest, seen)
        return latest
