"""CRD schema validation (and pruning) for the local control plane, with the API server's messages.

Each served version's ``openAPIV3Schema`` is turned into a JSON Schema once and compiled with
:mod:`jsonschema` (cached per resource and version). The Kubernetes extensions are handled so:

* ``nullable: true`` allows ``null``;
* ``x-kubernetes-int-or-string: true`` accepts an integer or a string;
* ``x-kubernetes-preserve-unknown-fields`` and ``x-kubernetes-embedded-resource`` keep unknown fields
  (they matter for pruning only; JSON Schema ignores unknown fields anyway);
* ``x-kubernetes-validations`` (CEL rules): there is no CEL interpreter here (out of scope for a
  test double). The rules the SDK's workflows can meet are evaluated by their exact text
  (:data:`KNOWN_RULES`: immutability ``self == oldSelf``, ``self in [...]``, ClusterQueue
  borrowingLimit without a cohort, ScaledObject min <= max replicas, Workload priority with
  priorityClassRef, Workload clusterName); every other rule is skipped. ``format`` is not checked
  (upstream checks a few formats such as ``int-or-string``).

:meth:`SchemaValidator.validate` returns ``details.causes`` entries in the API server's shape, with
field paths in dotted/indexed form (``spec.workerGroupSpecs[0].replicas``) and messages such as
``Invalid value: "string": spec.workerGroupSpecs[0].replicas in body must be of type integer: "string"``.

Pruning: a real API server silently drops fields a structural schema does not declare (unless
``x-kubernetes-preserve-unknown-fields``). :meth:`SchemaValidator.prune` does the same and returns
the dropped paths (the store prunes every write of a resource with a schema, before validation;
``apiVersion``, ``kind`` and ``metadata`` are never pruned).

Example:
    >>> from rayqueue_local.registry.registry import ResourceType
    >>> rt = ResourceType(group="x.io", versions=("v1",), storage_version="v1", plural="foos",
    ...     singular="foo", kind="Foo", schemas={"v1": {"type": "object", "properties": {
    ...         "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}})
    >>> SchemaValidator().validate(rt, {"spec": {"replicas": "two"}})[0]["message"]
    'Invalid value: "string": spec.replicas in body must be of type integer: "string"'

The parts live in their own modules: :mod:`~rayqueue_local.apimachinery.fielderrors` (the messages),
:mod:`~rayqueue_local.registry.fastcheck`, :mod:`~rayqueue_local.registry.pruning`,
:mod:`~rayqueue_local.registry.celrules` and :mod:`~rayqueue_local.apimachinery.objectmeta`; this module
compiles and runs them and re-exports their public names.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from rayqueue_local.apimachinery.fielderrors import GO_PATTERN_KEY, error_sort_key, validation_cause
from rayqueue_local.apimachinery.fielderrors import field_path as field_path
from rayqueue_local.apimachinery.objectmeta import MAX_ANNOTATIONS_BYTES as MAX_ANNOTATIONS_BYTES
from rayqueue_local.apimachinery.objectmeta import NAME_RULES as NAME_RULES
from rayqueue_local.apimachinery.objectmeta import metadata_causes as metadata_causes
from rayqueue_local.apimachinery.objectmeta import name_causes as name_causes
from rayqueue_local.registry.celrules import KNOWN_RULES as KNOWN_RULES
from rayqueue_local.registry.celrules import KNOWN_TRANSITION_RULES as KNOWN_TRANSITION_RULES
from rayqueue_local.registry.celrules import Pred as Pred
from rayqueue_local.registry.celrules import Rule, check_rules, known_rules
from rayqueue_local.registry.celrules import TransitionPred as TransitionPred
from rayqueue_local.registry.defaults import apply_defaults, has_defaults
from rayqueue_local.registry.fastcheck import Check, compile_fast
from rayqueue_local.registry.patterns import go_pattern
from rayqueue_local.registry.pruning import prune_in_place

if TYPE_CHECKING:
    from rayqueue_local.registry.registry import ResourceType

__all__ = ["SchemaValidator", "list_map_keys", "to_json_schema"]

_DROP = {
    "description",
    "x-kubernetes-validations",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "example",
    "externalDocs",
    "format",
}


#: The range of each integer ``format`` the API server enforces.
_FORMAT_BOUNDS = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def to_json_schema(schema: Any) -> Any:
    """A JSON Schema equivalent of a structural OpenAPI v3 schema (extensions mapped, docs dropped).

    Example:
        >>> to_json_schema({"type": "string", "nullable": True, "description": "x"})
        {'type': ['string', 'null']}
        >>> to_json_schema({"x-kubernetes-int-or-string": True,
        ...                 "anyOf": [{"type": "integer"}, {"type": "string"}]})
        {'type': ['integer', 'string']}
        >>> to_json_schema({"type": "integer", "format": "int32", "minimum": 0})
        {'type': 'integer', 'minimum': 0, 'maximum': 2147483647}
    """
    if isinstance(schema, list):
        return [to_json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _DROP or key.startswith("x-kubernetes-"):
            continue
        if key in ("properties", "patternProperties", "definitions"):
            out[key] = {k: to_json_schema(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "not", "allOf", "anyOf", "oneOf"):
            out[key] = to_json_schema(value)
        elif key == "nullable":
            continue
        elif key == "pattern" and isinstance(value, str):
            out[key] = go_pattern(value)
            out[GO_PATTERN_KEY] = value
        else:
            out[key] = value
    bounds = _FORMAT_BOUNDS.get(schema.get("format", "")) if schema.get("type") == "integer" else None
    if bounds is not None:
        # Kubernetes enforces int32/int64 on CRD integers since kubernetes#136582 (kubernetes#136091):
        # KubeRay and Kueue decode these fields into Go int32s, which a larger value would overflow.
        low, high = bounds
        out["minimum"] = max(out.get("minimum", low), low)
        out["maximum"] = min(out.get("maximum", high), high)
    if schema.get("x-kubernetes-int-or-string"):
        out.pop("anyOf", None)
        out["type"] = ["integer", "string"]
    if schema.get("nullable") and "type" in out:
        types = out["type"] if isinstance(out["type"], list) else [out["type"]]
        out["type"] = [*types, "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    return out


class SchemaValidator:
    """Validates and prunes objects against the CRD schemas of their resource types.

    Compiled validators are cached per ``(key, version)``; thread-safe.

    Example:
        >>> SchemaValidator().validate_against({"type": "object", "required": ["spec"]}, {})
        [{'reason': 'FieldValueRequired', 'message': 'Required value', 'field': 'spec'}]
    """

    def __init__(self) -> None:
        self._compiled: dict[tuple[str, str], tuple[Any, Check | None, list[Rule]] | None] = {}

    def _for(self, rt: ResourceType, version: str) -> tuple[Any, Check | None, list[Rule]] | None:
        """(jsonschema validator, fast check) for ``rt`` at ``version``; shared by every instance."""
        ident = (rt.key, version)
        if ident in self._compiled:
            found = self._compiled.get(ident)
            if found is not None or ident in self._compiled:  # forget() may run in another thread
                return found
        schema = rt.schemas.get(version)
        compiled = _compiled_schema(schema) if schema is not None else None
        self._compiled[ident] = compiled
        return compiled

    def forget(self, key: str) -> None:
        """Drop the validators compiled for ``key`` (its CRD changed or went away).

        Example:
            >>> SchemaValidator().forget("foos.example.com")
        """
        for ident in [i for i in self._compiled if i[0] == key]:
            self._compiled.pop(ident, None)

    @staticmethod
    def _compile(schema: dict[str, Any]) -> Any:
        from jsonschema import Draft7Validator  # lazy: ~80 ms, only when a CRD schema is compiled

        js = to_json_schema(schema)
        # The root's apiVersion/kind/metadata are the API server's business, not the schema's.
        if isinstance(js.get("properties"), dict):
            js["properties"].pop("metadata", None)
        return Draft7Validator(js)

    def validate_against(self, schema: dict[str, Any], obj: Any) -> list[dict[str, Any]]:
        """Causes for ``obj`` against one OpenAPI schema (compiled each call; for tests and tools)."""
        return self._causes(self._compile(schema), obj)

    def validate(
        self,
        rt: ResourceType,
        obj: dict[str, Any],
        version: str | None = None,
        old: dict[str, Any] | None = None,
    ) -> list[dict[str, Any]]:
        """Causes (empty when valid) for ``obj`` against ``rt``'s schema at ``version`` (default: storage).

        ``old`` is the stored object on an update (for the transition rules of :data:`KNOWN_RULES`).
        """
        compiled = self._for(rt, version or rt.storage_version)
        if compiled is None:
            return []
        slow, fast, rules = compiled
        if fast is None or not fast(obj):
            causes = self._causes(slow, obj)
            if causes:
                return causes
        return check_rules(rules, obj, old)

    @staticmethod
    def _causes(compiled: Any, obj: Any) -> list[dict[str, Any]]:
        errors = sorted(compiled.iter_errors(obj), key=error_sort_key)
        causes: list[dict[str, Any]] = []
        for error in errors:
            if error.validator in ("anyOf", "oneOf", "allOf") and error.context:
                # Report the most specific alternative's failure, as upstream reports the first branch.
                best = min(error.context, key=lambda e: (-len(e.absolute_path), e.validator != "type"))
                causes.append(validation_cause(best))
            else:
                causes.append(validation_cause(error))
        seen: set[tuple[str, str]] = set()
        unique = []
        for c in causes:
            ident = (c["field"], c["message"])
            if ident not in seen:
                seen.add(ident)
                unique.append(c)
        return unique

    # -- defaulting ----------------------------------------------------------------------------
    def default(self, rt: ResourceType, obj: dict[str, Any], version: str | None = None) -> None:
        """Fill in, in place, the ``default`` values of ``rt``'s schema.

        See :mod:`~rayqueue_local.registry.defaults`.

        Example:
            >>> from rayqueue_local.registry.registry import ResourceType
            >>> rt = ResourceType(group="x.io", versions=("v1",), storage_version="v1", plural="foos",
            ...     singular="foo", kind="Foo", schemas={"v1": {"type": "object", "properties": {
            ...         "spec": {"type": "object", "properties": {
            ...             "a": {"type": "string", "default": "x"}}}}}})
            >>> obj = {"spec": {}}; SchemaValidator().default(rt, obj); obj
            {'spec': {'a': 'x'}}
        """
        schema = rt.schemas.get(version or rt.storage_version)
        if schema is None:
            return
        flag = _HAS_DEFAULTS.get(id(schema))
        if flag is None or flag[0] is not schema:
            flag = _HAS_DEFAULTS[id(schema)] = (schema, has_defaults(schema))
        if flag[1]:
            apply_defaults(schema, obj)

    # -- pruning -------------------------------------------------------------------------------
    def prune(self, rt: ResourceType, obj: dict[str, Any], version: str | None = None) -> list[str]:
        """Drop, in place, fields ``rt``'s schema does not declare; return their paths.

        Example:
            >>> from rayqueue_local.registry.registry import ResourceType
            >>> rt = ResourceType(group="x.io", versions=("v1",), storage_version="v1", plural="foos",
            ...     singular="foo", kind="Foo", schemas={"v1": {"type": "object", "properties": {
            ...         "spec": {"type": "object", "properties": {"a": {"type": "string"}}}}}})
            >>> obj = {"kind": "Foo", "metadata": {"name": "f"}, "spec": {"a": "x", "typo": 1}}
            >>> SchemaValidator().prune(rt, obj), obj["spec"]
            (['spec.typo'], {'a': 'x'})
        """
        schema = rt.schemas.get(version or rt.storage_version)
        if schema is None:
            return []
        dropped: list[str] = []
        prune_in_place(schema, obj, [], dropped, root=True)
        return dropped


# Compiled schemas, shared by every validator (a registry built from the same CRD directory hands out
# the same schema objects; see rayqueue_local.registry.registry.load_crd_dir). Keyed by identity; the
# schema is kept alive by the entry so that its id cannot be reused.
_COMPILED: dict[int, tuple[dict[str, Any], Any, Check | None, list[Rule]]] = {}
_COMPILED_LOCK = threading.Lock()
# Whether a schema has any default, by identity (the schema is kept alive by the entry).
_HAS_DEFAULTS: dict[int, tuple[dict[str, Any], bool]] = {}


def _compiled_schema(schema: dict[str, Any]) -> tuple[Any, Check | None, list[Rule]]:
    with _COMPILED_LOCK:
        entry = _COMPILED.get(id(schema))
        if entry is None or entry[0] is not schema:
            slow = SchemaValidator._compile(schema)
            entry = (schema, slow, compile_fast(slow.schema), known_rules(schema))
            _COMPILED[id(schema)] = entry
    return entry[1], entry[2], entry[3]


def list_map_keys(schema: Any) -> dict[tuple[str, ...], tuple[str, ...]]:
    """``{structural path: key fields}`` of the ``x-kubernetes-list-type: map`` lists of a schema.

    The path is made of field names only (list items add nothing), as server-side apply resolves
    it; lists under a map (``additionalProperties``) are not listed (they stay atomic).

    Example:
        >>> list_map_keys({"properties": {"spec": {"properties": {"podSets": {"type": "array",
        ...     "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}}}}})
        {('spec', 'podSets'): ('name',)}
    """
    table: dict[tuple[str, ...], tuple[str, ...]] = {}

    def walk(node: Any, path: tuple[str, ...]) -> None:
        if not isinstance(node, dict):
            return
        if node.get("x-kubernetes-list-type") == "map" and node.get("x-kubernetes-list-map-keys"):
            table[path] = tuple(node["x-kubernetes-list-map-keys"])
        for name, sub in (node.get("properties") or {}).items():
            walk(sub, (*path, name))
        if isinstance(node.get("items"), dict):
            walk(node["items"], path)

    walk(schema, ())
    return table
