"""Patches and server-side apply on the store, over the pure functions of
:mod:`~rayqueue_local.apimachinery.patch`.

``patch`` takes merge, JSON, strategic-merge and apply patches (the main resource or ``status``);
``apply`` creates a missing object or merges into the stored one, tracking field ownership in
``managedFields`` (409 Conflict on another manager's field unless ``force``). Both end in
:meth:`~rayqueue_local.storage.writes.StoreWrites.replace` or ``create``, so every check and hook of a
write applies.
The examples run with :mod:`rayqueue_local.storage.store`'s doctests.
"""

from __future__ import annotations

from typing import Any

from rayqueue_local.apimachinery import patch as patches
from rayqueue_local.apimachinery.patch import PatchError, interned_copy
from rayqueue_local.apimachinery.time import now_rfc3339
from rayqueue_local.registry.registry import ResourceType
from rayqueue_local.storage.checks import WriteChecks
from rayqueue_local.storage.storecore import StoreCore
from rayqueue_local.storage.storetypes import PatchBody, StoreError
from rayqueue_local.storage.writes import StoreWrites, request_body

__all__ = ["StorePatching"]


def _check_still_addressed(new: dict[str, Any], namespace: str | None, name: str) -> None:
    """A patch may not move the object: upstream's ``checkName`` after patching (400 BadRequest)."""
    meta = new.get("metadata")
    if not isinstance(meta, dict):
        return
    if meta.get("name", name) != name:
        raise StoreError(
            400,
            "BadRequest",
            f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})",
        )
    if namespace and meta.get("namespace", namespace) != namespace:
        raise StoreError(
            400,
            "BadRequest",
            f"the namespace of the object ({meta.get('namespace')}) does not match the namespace "
            f"on the request ({namespace})",
        )


class StorePatching:
    """The patch and apply methods of :class:`~rayqueue_local.storage.store.Store`: they compute the new
    object and hand it to ``writes`` (``create`` or ``replace``); ``checks`` gives the map-list keys."""

    def __init__(self, core: StoreCore, writes: StoreWrites, checks: WriteChecks) -> None:
        self._core = core
        self._writes = writes
        self._checks = checks

    def patch(
        self,
        key: str,
        namespace: str | None,
        name: str,
        patch: PatchBody,
        *,
        patch_type: str = "merge",
        subresource: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
        force: bool = False,
    ) -> dict[str, Any]:
        """Patch an object: ``patch_type`` is ``merge``, ``json``, ``strategic`` or ``apply``.

        ``subresource="status"`` patches only the status. A ``metadata.resourceVersion`` in a merge or
        strategic patch is a precondition (409 on mismatch). ``apply`` needs ``field_manager`` (see
        :meth:`apply`).

        Example:
            >>> from rayqueue_local.storage.store import Store
            >>> store = Store()
            >>> _ = store.create("configmaps", {"metadata": {"name": "c", "namespace": "default"},
            ...                                 "data": {"a": "1"}})
            >>> ops = [{"op": "replace", "path": "/data/a", "value": "2"}]
            >>> store.patch("configmaps", "default", "c", ops, patch_type="json")["data"]
            {'a': '2'}
        """
        if patch_type == "apply":
            if not isinstance(patch, dict):
                raise StoreError(400, "BadRequest", "an apply patch must be an object")
            body = interned_copy(patch)
            meta = body.setdefault("metadata", {})
            meta.setdefault("name", name)
            if namespace:
                meta.setdefault("namespace", namespace)
            return self.apply(
                key,
                body,
                field_manager=field_manager or "",
                force=force,
                subresource=subresource,
                dry_run=dry_run,
            )
        rt = self._core.resolve(key)
        if subresource not in (None, "", "status"):
            raise StoreError(404, "NotFound", "the server could not find the requested resource")
        patch = interned_copy(patch)
        with self._core.txn():
            old = self._core.stored(key, namespace, name)
            try:
                if patch_type == "merge":
                    if not isinstance(patch, dict):
                        raise PatchError(400, "BadRequest", "a merge patch must be a JSON object")
                    new = patches.merge_patch(old, patch)
                elif patch_type == "strategic":
                    if not isinstance(patch, dict):
                        raise PatchError(400, "BadRequest", "a strategic merge patch must be a JSON object")
                    new = patches.strategic_merge_patch(old, patch)
                elif patch_type == "json":
                    new = patches.json_patch(old, patch)  # type: ignore[arg-type]
                else:
                    raise StoreError(415, "UnsupportedMediaType", f"unsupported patch type: {patch_type}")
            except PatchError as exc:
                raise self._patch_error(rt, name, exc) from None
            if not isinstance(new, dict):
                raise StoreError(422, "Invalid", "the patched object is not an object")
            _check_still_addressed(new, namespace, name)
            precondition = isinstance(patch, dict) and "resourceVersion" in (patch.get("metadata") or {})
            if not precondition:
                new.setdefault("metadata", {})["resourceVersion"] = old["metadata"]["resourceVersion"]
            return self._writes.replace(
                rt, old, new, subresource or "", dry_run=dry_run, field_manager=field_manager
            )

    def _patch_error(self, rt: ResourceType, name: str, exc: PatchError) -> StoreError:
        if exc.code == 422 and not exc.causes:
            return StoreError(
                422, "Invalid", exc.message, details={"name": name, "group": rt.group, "kind": rt.kind}
            )
        return StoreError(
            exc.code,
            exc.reason,
            exc.message,
            exc.causes,
            details={"name": name, "group": rt.group, "kind": rt.plural},
        )

    def apply(
        self,
        key: str,
        obj: dict[str, Any],
        field_manager: str,
        force: bool = False,
        *,
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Server-side apply ``obj`` as ``field_manager``: create if missing, else merge and track ownership.

        A field owned by another manager with a different value -> ``StoreError(409, "Conflict")``
        whose causes name the fields, unless ``force``.

        Example:
            >>> from rayqueue_local.storage.store import Store
            >>> store = Store()
            >>> body = {"metadata": {"name": "c", "namespace": "default"}, "data": {"a": "1"}}
            >>> _ = store.apply("configmaps", body, "alice")
            >>> try:
            ...     store.apply("configmaps", {**body, "data": {"a": "2"}}, "bob")
            ... except StoreError as err:
            ...     print(err.message)
            Apply failed with 1 conflict: conflict with "alice" using v1: .data.a
            >>> store.apply("configmaps", {**body, "data": {"a": "2"}}, "bob", force=True)["data"]
            {'a': '2'}
        """
        rt = self._core.resolve(key)
        if not field_manager:
            raise StoreError(
                422,
                "Invalid",
                'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
                "is required for apply patch",
            )
        obj = request_body(obj)
        meta = obj.get("metadata") or {}
        name = meta.get("name", "")
        ns = meta.get("namespace") if rt.namespaced else None
        if subresource not in (None, "", "status"):
            raise StoreError(404, "NotFound", "the server could not find the requested resource")
        with self._core.txn():
            existing = self._core.index.get(key, (self._core.scope(rt, ns), name))
            stamp = now_rfc3339()
            try:
                merged = patches.server_side_apply(
                    existing,
                    obj,
                    field_manager,
                    force=force,
                    api_version=rt.api_version,
                    now=stamp,
                    subresource=subresource or "",
                    list_keys=self._checks.list_keys(rt),
                )
            except PatchError as exc:
                raise self._patch_error(rt, name, exc) from None
            if existing is None:
                if subresource:
                    raise self._core.not_found(key, name)
                return self._writes.create(key, merged, dry_run=dry_run)
            rv = meta.get("resourceVersion")
            merged["metadata"]["resourceVersion"] = rv if rv else existing["metadata"]["resourceVersion"]
            return self._writes.replace(
                rt,
                existing,
                merged,
                subresource or "",
                dry_run=dry_run,
                managed_fields=merged["metadata"].get("managedFields"),
            )
