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
from rayqueue_local.storage.storecore import StoreCore
from rayqueue_local.storage.storetypes import Objects, StoreError

__all__ = ["StoreDeletion"]


class StoreDeletion:
    """The deletion methods of :class:`~rayqueue_local.storage.store.Store` and the garbage collector.

    It writes through the core; ``reads`` lists what ``delete_collection`` deletes (its ``list`` is all
    this part uses of it). The writes call
    :meth:`finalize` and :meth:`collect` (lock held) when an update removes the last finalizer or a
    new object's owners are gone.
    """

    def __init__(self, core: StoreCore, reads: StoreReads) -> None:
        self._core = core
        self._list = reads.list

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
        rt = self._core.resolve(key)
        with self._core.txn():
            old = self._core.stored(key, namespace, name)
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
        with self._core.txn():
            out = []
            for obj in self._list(
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
        core = self._core
        meta = old["metadata"]
        if key == "namespaces":
            return self._delete_namespace(old, seen)
        if meta.get("finalizers"):
            if meta.get("deletionTimestamp"):
                return old
            rt = core.registry.get(key)
            new = deep_copy(old)
            new["metadata"]["deletionTimestamp"] = now_rfc3339()
            new["metadata"]["deletionGracePeriodSeconds"] = 0
            if rt.has_generation:
                new["metadata"]["generation"] = meta.get("generation", 1) + 1
            new["metadata"]["resourceVersion"] = core.next_rv()
            core.commit("MODIFIED", key, new, old)
            return new
        return self.finalize(key, old, seen)

    def finalize(self, key: str, obj: dict[str, Any], seen: set[str]) -> dict[str, Any]:
        """Remove ``obj`` for good, then collect its dependents and maybe its namespace (lock held)."""
        core = self._core
        gone = deep_copy(obj)
        gone["metadata"]["resourceVersion"] = core.next_rv()
        core.commit("DELETED", key, gone, obj)
        uid = obj["metadata"].get("uid", "")
        seen.add(uid)
        for dep_key, dep_ns, dep_name in sorted(core.index.pop_dependents(uid)):
            dependent = core.index.get(dep_key, (dep_ns, dep_name))
            if dependent is not None:
                self.collect(dep_key, dependent, seen)
        ns = gone["metadata"].get("namespace")
        if ns and core.index.namespace_count(ns) == 0:
            ns_obj = core.index.get("namespaces", ("", ns))
            if (
                ns_obj is not None
                and ns_obj["metadata"].get("deletionTimestamp")
                and not ns_obj["metadata"].get("finalizers")
            ):
                self.finalize("namespaces", ns_obj, seen)
        return gone

    def collect(self, key: str, dependent: dict[str, Any], seen: set[str]) -> None:
        """Garbage-collect a dependent whose owner went away (lock held)."""
        core = self._core
        refs = dependent["metadata"].get("ownerReferences") or []
        alive = [r for r in refs if core.index.has_uid(r.get("uid")) and r.get("uid") not in seen]
        if alive:
            if len(alive) != len(refs):  # drop the dangling references, keep the object
                new = deep_copy(dependent)
                new["metadata"]["ownerReferences"] = alive
                new["metadata"]["resourceVersion"] = core.next_rv()
                core.commit("MODIFIED", key, new, dependent)
            return
        self._delete(key, dependent, seen)

    def _orphan(self, uid: str) -> None:
        core = self._core
        for dep_key, dep_ns, dep_name in sorted(core.index.dependents(uid)):
            dependent = core.index.bucket(dep_key)[(dep_ns, dep_name)]
            new = deep_copy(dependent)
            refs = [r for r in new["metadata"].get("ownerReferences", []) if r.get("uid") != uid]
            if refs:
                new["metadata"]["ownerReferences"] = refs
            else:
                new["metadata"].pop("ownerReferences", None)
            new["metadata"]["resourceVersion"] = core.next_rv()
            core.commit("MODIFIED", dep_key, new, dependent)

    def _delete_namespace(self, old: dict[str, Any], seen: set[str]) -> dict[str, Any]:
        core = self._core
        name = old["metadata"]["name"]
        current = old
        if not old["metadata"].get("deletionTimestamp"):
            current = deep_copy(old)
            current["metadata"]["deletionTimestamp"] = now_rfc3339()
            current["metadata"]["deletionGracePeriodSeconds"] = 0
            current["status"] = {"phase": "Terminating"}
            current["metadata"]["resourceVersion"] = core.next_rv()
            core.commit("MODIFIED", "namespaces", current, old)
        for key in core.index.resource_keys():
            for k in sorted(k for k in core.index.bucket(key) if k[0] == name):
                obj = core.index.get(key, k)
                if obj is not None and not obj["metadata"].get("deletionTimestamp"):
                    self._delete(key, obj, seen)
        latest = core.index.get("namespaces", ("", name))
        if latest is None:  # the last object's removal already finalized the namespace
            gone = deep_copy(current)
            gone["metadata"]["resourceVersion"] = str(core.rv)
            return gone
        if core.index.namespace_count(name) == 0 and not latest["metadata"].get("finalizers"):
            return self.finalize("namespaces", latest, seen)
        return latest
