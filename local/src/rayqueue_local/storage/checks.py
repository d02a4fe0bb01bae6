"""What every write is checked against: names and metadata, built-in kinds' data, the kind, CRD schemas.

:class:`WriteChecks` is the part of :class:`~rayqueue_local.storage.store.Store` the writes and patches
ask before they commit: names, labels, annotations and ownerReferences
(:mod:`rayqueue_local.registry.schema`), a built-in kind's own fields
(:mod:`rayqueue_local.apimachinery.builtinchecks`), the ``kind``/``apiVersion`` of the body, and the CRD
schema (pruning undeclared fields and filling defaults first, in upstream's order). It owns the compiled
schemas and the map-list keys server-side apply merges by, and forgets them when a type's CRD changes.

Example:
    >>> from rayqueue_local.registry.registry import Registry
    >>> checks = WriteChecks(Registry(), validate=True, prune=True)
    >>> checks.validating  # the built-in types carry no schema
    False
    >>> pods = Registry().get("pods")
    >>> try:
    ...     checks.check_meta(pods, {"name": "Not_A_Name"}, with_name=True)
    ... except StoreError as err:
    ...     print(err.code, err.causes[0]["field"])
    422 metadata.name
"""

from __future__ import annotations

from typing import Any

from rayqueue_local.apimachinery import patch as patches
from rayqueue_local.apimachinery.builtinchecks import builtin_causes
from rayqueue_local.registry.registry import Registry, ResourceType
from rayqueue_local.registry.schema import SchemaValidator, list_map_keys, metadata_causes, name_causes
from rayqueue_local.storage.storetypes import StoreError, invalid

__all__ = ["NAME_RULE_OF", "WriteChecks"]

#: The name rule of a resource whose names are not DNS-1123 subdomains (upstream's per-kind validation).
NAME_RULE_OF = {"namespaces": "label", "services": "dns1035"}


class WriteChecks:
    """The checks of a write and the schema state they use (the store lock held by the caller).

    ``validate`` checks custom resources against the CRD schemas the registry holds; ``prune`` drops the
    fields those schemas do not declare.

    Example:
        >>> from rayqueue_local.registry.registry import Registry
        >>> checks = WriteChecks(Registry(), validate=True, prune=True)
        >>> obj = {"metadata": {"name": "c"}}
        >>> checks.check_kind(Registry().get("configmaps"), obj); obj["apiVersion"], obj["kind"]
        ('v1', 'ConfigMap')
    """

    def __init__(self, registry: Registry, *, validate: bool, prune: bool) -> None:
        self._registry = registry
        self._check_schemas, self._prune_unknown = validate, prune
        self._list_key_tables: dict[str, patches.ListKeys | None] = {}
        self._validator: SchemaValidator | None = None
        if (validate or prune) and any(t.schemas for t in registry.types()):
            self._validator = SchemaValidator()

    @property
    def validating(self) -> bool:
        """True when custom resources are checked against CRD schemas."""
        return self._validator is not None and self._check_schemas

    def type_changed(self, key: str) -> None:
        """Forget what was derived from ``key``'s type (compiled schemas, list keys): its CRD changed."""
        self._list_key_tables.pop(key, None)
        rt = self._registry.lookup_key(key)
        wanted = rt is not None and bool(rt.schemas) and (self._check_schemas or self._prune_unknown)
        if self._validator is None and wanted:
            self._validator = SchemaValidator()
        if self._validator is not None:
            self._validator.forget(key)

    def default_loaded(self, key: str, obj: dict[str, Any]) -> None:
        """Fill in the schema's defaults of an object read from the state directory."""
        if self._validator is not None and key in self._registry:
            # Upstream defaults a custom resource read from etcd too: a default the CRD
            # gained after the object was written shows up on read.
            self._validator.default(self._registry.get(key), obj)

    def check_meta(self, rt: ResourceType, meta: dict[str, Any], *, with_name: bool) -> None:
        """Name, labels, annotations and ownerReferences, as every API server write checks them."""
        name = meta.get("name", "")
        causes = name_causes(name, NAME_RULE_OF.get(rt.key, "subdomain")) if with_name else []
        try:
            causes += metadata_causes(meta)
        except TypeError as exc:
            raise StoreError(400, "BadRequest", str(exc)) from None
        if causes:
            raise invalid(rt, name, causes)

    def check_data(self, rt: ResourceType, obj: dict[str, Any]) -> None:
        """A built-in kind's own fields (ConfigMap and Secret data), as its Go type decodes them."""
        try:
            causes = builtin_causes(rt.key, obj)
        except TypeError as exc:
            raise StoreError(400, "BadRequest", str(exc)) from None
        if causes:
            raise invalid(rt, obj["metadata"].get("name", ""), causes)

    def list_keys(self, rt: ResourceType) -> patches.ListKeys | None:
        """Map-list keys for server-side apply: from the CRD schema, else the built-in table."""
        if rt.key not in self._list_key_tables:
            resolver: patches.ListKeys | None = None
            schema = rt.schemas.get(rt.storage_version)
            if schema is not None:
                resolver = list_map_keys(schema).get
            self._list_key_tables[rt.key] = resolver
        return self._list_key_tables[rt.key]

    def validate(self, rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None = None) -> None:
        """Prune undeclared fields, fill in the schema's defaults, then check the object against its
        CRD schema (422 Invalid), in upstream's order."""
        if self._validator is None or not rt.schemas:
            return
        if self._prune_unknown:
            self._validator.prune(rt, obj)
        self._validator.default(rt, obj)
        if self._check_schemas:
            causes = self._validator.validate(rt, obj, old=old)
            if causes:
                raise invalid(rt, obj["metadata"].get("name", ""), causes)

    def check_kind(self, rt: ResourceType, obj: dict[str, Any]) -> None:
        """400 for a body of another kind or version; else set the resource's ``apiVersion`` and ``kind``."""
        kind, api_version = obj.get("kind"), obj.get("apiVersion")
        if kind not in (None, "", rt.kind):
            raise StoreError(
                400,
                "BadRequest",
                f"the kind in the data ({kind}) does not match the expected kind ({rt.kind}) of {rt.key}",
            )
        if api_version not in (None, "", rt.api_version):
            raise StoreError(
                400,
                "BadRequest",
                f"the API version in the data ({api_version}) does not match the "
                f"expected API version ({rt.api_version}); convert to the storage version first",
            )
        obj["apiVersion"] = rt.api_version
        obj["kind"] = rt.kind
