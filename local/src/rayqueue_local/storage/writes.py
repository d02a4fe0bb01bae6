"""Create, update and update_status: checks, server-filled metadata, admission, commit.

``create`` fills ``metadata.uid``, ``resourceVersion``, ``generation``, ``creationTimestamp`` and a
``generateName`` name and drops what a client may not set; ``update``/``update_status`` go through
:meth:`StoreWrites.replace`, which keeps what the server owns, checks ``resourceVersion``
(409 Conflict), bumps ``generation`` when the spec changes, skips no-op writes and finalizes an
object whose last finalizer went away. Every write passes the checks of
:class:`~rayqueue_local.storage.checks.WriteChecks` (names, labels, annotations, ownerReferences; the CRD
schema, after pruning) and runs the admission hooks.
The examples run with :mod:`rayqueue_local.storage.store`'s doctests.
"""

from __future__ import annotations

import json
import secrets
import uuid
from typing import Any, Protocol

from rayqueue_local.apimachinery import patch as patches
from rayqueue_local.apimachinery.patch import deep_copy, interned_copy
from rayqueue_local.apimachinery.time import now_rfc3339
from rayqueue_local.registry.registry import ResourceType
from rayqueue_local.registry.schema import name_causes
from rayqueue_local.storage.checks import NAME_RULE_OF, WriteChecks
from rayqueue_local.storage.storecore import StoreCore
from rayqueue_local.storage.storetypes import Objects, StoreError, invalid, owner_uids

__all__ = ["Collector", "StoreWrites", "request_body"]

_GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # upstream's: no vowels, no confusable digits


def request_body(obj: Any) -> dict[str, Any]:
    """An interned private copy of a request body; 400 for anything but an object with string names.

    Example:
        >>> request_body({"metadata": {"name": "c"}})
        {'metadata': {'name': 'c'}}
        >>> try:
        ...     request_body({"metadata": {"name": 1}})
        ... except StoreError as err:
        ...     print(err.code, err.message)
        400 json: cannot unmarshal int into Go struct field ObjectMeta.metadata.name of type string
    """
    if not isinstance(obj, dict):
        raise StoreError(400, "BadRequest", f"the body must be an object, not {type(obj).__name__}")
    meta = obj.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise StoreError(400, "BadRequest", "metadata must be an object")
    for field in ("name", "namespace", "generateName", "resourceVersion"):
        value = (meta or {}).get(field)
        if value is not None and not isinstance(value, str):
            raise StoreError(
                400,
                "BadRequest",
                f"json: cannot unmarshal {type(value).__name__} into Go struct field "
                f"ObjectMeta.metadata.{field} of type string",
            )
    return interned_copy(obj)


class Collector(Protocol):
    """What the writes need of the garbage collector (:class:`~rayqueue_local.storage.gc.StoreDeletion`)."""

    def collect(self, key: str, dependent: dict[str, Any], seen: set[str]) -> None:
        """Garbage-collect ``dependent`` if its owners are gone (lock held)."""

    def finalize(self, key: str, obj: dict[str, Any], seen: set[str]) -> dict[str, Any]:
        """Remove ``obj`` for good, its last finalizer gone (lock held)."""


class StoreWrites:
    """The create and update methods of :class:`~rayqueue_local.storage.store.Store`.

    They commit through ``core`` after ``checks``; ``collector`` takes an object whose owners are gone or
    whose last finalizer went away. :meth:`replace` is the update path the patches and events share.
    """

    def __init__(self, core: StoreCore, checks: WriteChecks, collector: Collector) -> None:
        self._core = core
        self._checks = checks
        self._collector = collector

    def create(
        self, key: str, obj: dict[str, Any], *, dry_run: bool = False, field_manager: str | None = None
    ) -> dict[str, Any]:
        """Create an object; returns the stored copy (uid, resourceVersion, ... filled in).

        Errors: 404 (missing namespace), 403 (terminating namespace), 409 AlreadyExists, 422 Invalid
        (name, schema, admission), or whatever an admission hook raises.

        Example:
            >>> from rayqueue_local.storage.store import Store
            >>> store = Store()
            >>> _ = store.create("configmaps", {"metadata": {"name": "c", "namespace": "default"}})
            >>> store.create("configmaps", {"metadata": {"name": "c", "namespace": "default"}})
            Traceback (most recent call last):
            ...
            rayqueue_local.storage.storetypes.StoreError: configmaps "c" already exists
        """
        rt = self._core.resolve(key)
        new = request_body(obj)
        if not isinstance(new.get("metadata"), dict):
            new["metadata"] = {}
        self._checks.check_kind(rt, new)
        meta = new["metadata"]
        for field in (
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "selfLink",
        ):
            meta.pop(field, None)
        if rt.namespaced:
            if not meta.get("namespace"):
                raise StoreError(
                    400, "BadRequest", "the namespace of the object is required for a namespaced resource"
                )
        else:
            meta.pop("namespace", None)
        if rt.has_status:
            new.pop("status", None)
        with self._core.txn():
            ns = meta.get("namespace", "")
            if rt.namespaced:
                self._check_namespace_open(rt, ns, meta.get("name") or meta.get("generateName", ""))
            if not meta.get("name"):
                prefix = meta.get("generateName")
                rule = NAME_RULE_OF.get(rt.key, "subdomain")
                if prefix and (causes := name_causes(prefix, rule, prefix=True)):
                    raise invalid(rt, "", causes)
                if not prefix:
                    raise invalid(
                        rt,
                        "",
                        [
                            {
                                "reason": "FieldValueRequired",
                                "field": "metadata.name",
                                "message": "Required value: name or generateName is required",
                            }
                        ],
                    )
                bucket = self._core.index.bucket(key)
                while True:
                    name = prefix[:58] + "".join(secrets.choice(_GENERATE_ALPHABET) for _ in range(5))
                    if (ns, name) not in bucket:
                        break
                meta["name"] = name
            name = meta["name"]
            self._checks.check_meta(rt, meta, with_name=True)
            if (ns, name) in self._core.index.bucket(key):
                raise StoreError(
                    409,
                    "AlreadyExists",
                    f'{key} "{name}" already exists',
                    details={"name": name, "group": rt.group, "kind": rt.plural},
                )
            new = self._core.run_hooks(key, "CREATE", new, None)
            new["metadata"]["name"], new["metadata"]["namespace"] = name, ns
            if not rt.namespaced:
                new["metadata"].pop("namespace", None)
            self._checks.check_meta(rt, new["metadata"], with_name=False)
            self._checks.check_data(rt, new)
            self._checks.validate(rt, new)
            meta = new["metadata"]
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = now_rfc3339()
            if rt.has_generation:
                meta["generation"] = 1
            if key == "namespaces":
                new.setdefault("spec", {"finalizers": ["kubernetes"]})
                new["status"] = {"phase": "Active"}
                meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = name
            if field_manager:
                meta["managedFields"] = self._fields_taken(
                    rt, None, new, field_manager, meta["creationTimestamp"]
                )
            if dry_run:
                meta["resourceVersion"] = str(self._core.rv)
                return deep_copy(new)
            meta["resourceVersion"] = self._core.next_rv()
            self._core.commit("ADDED", key, new, None)
            if meta.get("ownerReferences") and not any(self._core.index.has_uid(u) for u in owner_uids(new)):
                self._collector.collect(key, new, set())  # every owner is gone already: the GC takes it
            return deep_copy(new)

    def _check_namespace_open(self, rt: ResourceType, ns: str, name: str) -> None:
        ns_obj = self._core.index.get("namespaces", ("", ns))
        if ns_obj is None:
            raise StoreError(
                404, "NotFound", f'namespaces "{ns}" not found', details={"name": ns, "kind": "namespaces"}
            )
        if ns_obj["metadata"].get("deletionTimestamp"):
            raise StoreError(
                403,
                "Forbidden",
                f'{rt.key} "{name}" is forbidden: unable to create new content in namespace {ns} '
                "because it is "
                "being terminated",
                details={"name": name, "group": rt.group, "kind": rt.plural},
                causes=[
                    {
                        "reason": "NamespaceTerminating",
                        "message": f"namespace {ns} is being terminated",
                        "field": "metadata.namespace",
                    }
                ],
            )

    def update(
        self, key: str, obj: dict[str, Any], *, dry_run: bool = False, field_manager: str | None = None
    ) -> dict[str, Any]:
        """Replace an object (spec and metadata); its status is kept where status is a subresource.

        A ``metadata.resourceVersion`` in ``obj`` must match the stored one (else 409 Conflict).

        Example:
            >>> from rayqueue_local.storage.store import Store
            >>> store = Store()
            >>> cm = store.create("configmaps", {"metadata": {"name": "c", "namespace": "default"}})
            >>> cm["data"] = {"k": "v"}
            >>> _ = store.update("configmaps", cm)
            >>> try:
            ...     store.update("configmaps", cm)
            ... except StoreError as err:
            ...     print(err.code, err.reason)
            409 Conflict
        """
        return self._update(key, obj, "", dry_run=dry_run, field_manager=field_manager)

    def update_status(
        self, key: str, obj: dict[str, Any], *, dry_run: bool = False, field_manager: str | None = None
    ) -> dict[str, Any]:
        """Replace only ``.status`` (the status subresource); resourceVersion checked as for update.

        Example:
            >>> from rayqueue_local.storage.store import Store
            >>> store = Store()
            >>> rc = store.create("rayclusters.ray.io", {"metadata": {"name": "r", "namespace": "default"}})
            >>> rc["status"] = {"state": "ready"}
            >>> store.update_status("rayclusters.ray.io", rc)["metadata"]["generation"]
            1
        """
        return self._update(key, obj, "status", dry_run=dry_run, field_manager=field_manager)

    def _update(
        self, key: str, obj: dict[str, Any], subresource: str, *, dry_run: bool, field_manager: str | None
    ) -> dict[str, Any]:
        """``update`` (``subresource=""``) and ``update_status`` (``"status"``): replace the stored object."""
        rt = self._core.resolve(key)
        new = request_body(obj)
        meta = new.get("metadata") or {}
        with self._core.txn():
            old = self._core.stored(key, meta.get("namespace"), meta.get("name", ""))
            return self.replace(rt, old, new, subresource, dry_run=dry_run, field_manager=field_manager)

    def replace(
        self,
        rt: ResourceType,
        old: dict[str, Any],
        new: dict[str, Any],
        subresource: str,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        check_rv: bool = True,
        managed_fields: Objects | None = None,
    ) -> dict[str, Any]:
        """The common update path (lock held): merge server fields, hooks, validation, commit.

        ``managed_fields`` (from server-side apply) replaces ``metadata.managedFields``, also on
        the status subresource, whose writes otherwise keep all of the stored metadata.
        """
        key = rt.key
        ometa = old["metadata"]
        name = ometa["name"]
        if not isinstance(new.get("metadata"), dict):
            new["metadata"] = {}
        rv = new["metadata"].get("resourceVersion")
        if check_rv and rv not in (None, "") and str(rv) != ometa["resourceVersion"]:
            raise StoreError(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {key} "{name}": the object has been modified; '
                "please apply your "
                "changes to the latest version and try again",
                details={"name": name, "group": rt.group, "kind": rt.plural},
            )
        if subresource == "status":
            if not rt.has_status:
                raise StoreError(404, "NotFound", "the server could not find the requested resource")
            candidate = deep_copy(old)
            if "status" in new:
                candidate["status"] = new["status"]
            else:
                candidate.pop("status", None)
            new = candidate
        else:
            self._checks.check_kind(rt, new)
            if rt.has_status:
                if "status" in old:
                    new["status"] = deep_copy(old["status"])
                else:
                    new.pop("status", None)
            meta = new["metadata"]
            meta["name"] = name
            if rt.namespaced:
                meta["namespace"] = ometa["namespace"]
            else:
                meta.pop("namespace", None)
            for field in (
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
            ):
                if field in ometa:
                    meta[field] = ometa[field]
                else:
                    meta.pop(field, None)
            if "managedFields" not in meta and "managedFields" in ometa:
                meta["managedFields"] = deep_copy(ometa["managedFields"])
            if ometa.get("deletionTimestamp"):
                added = set(meta.get("finalizers") or ()) - set(ometa.get("finalizers") or ())
                if added:
                    raise invalid(
                        rt,
                        name,
                        [
                            {
                                "reason": "FieldValueForbidden",
                                "field": "metadata.finalizers",
                                "message": "Forbidden: no new finalizers can be added if the object "
                                "is being deleted, found new finalizers " + json.dumps(sorted(added)),
                            }
                        ],
                    )
        new["metadata"]["resourceVersion"] = ometa["resourceVersion"]
        new = self._core.run_hooks(key, "UPDATE", new, old)
        nmeta = new["metadata"]
        # Hooks may not move the object or change what the server owns.
        for field in ("name", "uid", "creationTimestamp", "resourceVersion"):
            nmeta[field] = ometa[field]
        if rt.namespaced:
            nmeta["namespace"] = ometa["namespace"]
        if subresource != "status":
            self._checks.check_meta(rt, nmeta, with_name=False)
            self._checks.check_data(rt, new)
        self._checks.validate(rt, new, old)
        if rt.has_generation:
            nmeta["generation"] = ometa.get("generation", 1) + (1 if self._spec_changed(rt, old, new) else 0)
        if managed_fields is not None:
            nmeta["managedFields"] = managed_fields
        elif field_manager:
            nmeta["managedFields"] = self._fields_taken(
                rt, old, new, field_manager, now_rfc3339(), subresource
            )
        if new == old:
            return deep_copy(old)  # a no-op write: no new version, no event
        if dry_run:
            return deep_copy(new)
        nmeta["resourceVersion"] = self._core.next_rv()
        if nmeta.get("deletionTimestamp") and not nmeta.get("finalizers"):
            self._core.commit("MODIFIED", key, new, old)
            self._collector.finalize(key, new, set())
            return deep_copy(new)
        self._core.commit("MODIFIED", key, new, old)
        return deep_copy(new)

    def _fields_taken(
        self,
        rt: ResourceType,
        old: dict[str, Any] | None,
        new: dict[str, Any],
        manager: str,
        now: str,
        subresource: str = "",
    ) -> Objects:
        """``managedFields`` after ``manager``'s write of ``new`` over ``old``: it takes what it changed."""
        return patches.record_update(
            old,
            new,
            manager,
            api_version=rt.api_version,
            now=now,
            subresource=subresource,
            list_keys=self._checks.list_keys(rt),
        )

    @staticmethod
    def _spec_changed(rt: ResourceType, old: dict[str, Any], new: dict[str, Any]) -> bool:
        skip = ("metadata", "status") if rt.has_status else ("metadata",)
        keys = (set(old) | set(new)) - set(skip)
        return any(old.get(k) != new.get(k) for k in keys)
