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
    >>> from rayqueue_sdk.local.registry import ResourceType
    >>> rt = ResourceType(group="x.io", versions=("v1",), storage_version="v1", plural="foos",
    ...     singular="foo", kind="Foo", schemas={"v1": {"type": "object", "properties": {
    ...         "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}})
    >>> SchemaValidator().validate(rt, {"spec": {"replicas": "two"}})[0]["message"]
    'Invalid value: "string": spec.replicas in body must be of type integer: "string"'
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rayqueue_sdk.local.registry import ResourceType

__all__ = ["SchemaValidator", "to_json_schema"]

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


def to_json_schema(schema: Any) -> Any:
    """A JSON Schema equivalent of a structural OpenAPI v3 schema (extensions mapped, docs dropped).

    Example:
        >>> to_json_schema({"type": "string", "nullable": True, "description": "x"})
        {'type': ['string', 'null']}
        >>> to_json_schema({"x-kubernetes-int-or-string": True,
        ...                 "anyOf": [{"type": "integer"}, {"type": "string"}]})
        {'type': ['integer', 'string']}
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
        else:
            out[key] = value
    if schema.get("x-kubernetes-int-or-string"):
        out.pop("anyOf", None)
        out["type"] = ["integer", "string"]
    if schema.get("nullable") and "type" in out:
        types = out["type"] if isinstance(out["type"], list) else [out["type"]]
        out["type"] = [*types, "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    return out


_INLINE_FLAGS = re.compile(r"\(\?([imsU]+)\)")


def go_pattern(pattern: str) -> str:
    """A Go (RE2) pattern in Python's syntax: inline flag groups such as ``^(?i)`` move to the front.

    Example:
        >>> go_pattern("^(?i)[a-z]+$")
        '(?i)^[a-z]+$'
    """
    flags = "".join(m.group(1) for m in _INLINE_FLAGS.finditer(pattern)).replace("U", "")
    if not flags:
        return pattern
    return f"(?{''.join(sorted(set(flags)))})" + _INLINE_FLAGS.sub("", pattern)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _render(value: Any) -> str:
    """A value as Go's ``%#v``-ish rendering in field errors (strings quoted)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)[:200]


def field_path(parts: Iterable[Any]) -> str:
    """``["spec", "a", 0, "b"]`` -> ``spec.a[0].b``.

    Example:
        >>> field_path(["spec", "workerGroupSpecs", 0, "replicas"])
        'spec.workerGroupSpecs[0].replicas'
    """
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += f".{p}" if out else str(p)
    return out


def _cause(error: Any) -> dict[str, Any]:
    """Turn one jsonschema ``ValidationError`` into an upstream-style cause."""
    path = field_path(error.absolute_path)
    v, value, expected = error.validator, error.instance, error.validator_value
    body = path or "body"
    if v == "required":
        missing = [p for p in expected if not isinstance(value, dict) or p not in value]
        field = f"{path}.{missing[0]}" if path else missing[0]
        return {"reason": "FieldValueRequired", "message": "Required value", "field": field}
    if v == "type":
        types = expected if isinstance(expected, list) else [expected]
        types = [t for t in types if t != "null"] or types
        got = _type_name(value)
        message = f'Invalid value: "{got}": {body} in body must be of type {",".join(types)}: "{got}"'
        return {"reason": "FieldValueTypeInvalid", "message": message, "field": path}
    if v == "enum":
        allowed = ", ".join(_render(e) for e in expected if e is not None)
        return {
            "reason": "FieldValueNotSupported",
            "field": path,
            "message": f"Unsupported value: {_render(value)}: supported values: {allowed}",
        }
    if v == "maxLength":
        return {
            "reason": "FieldValueTooLong",
            "field": path,
            "message": f"Too long: may not be more than {expected} bytes",
        }
    if v == "maxItems":
        return {
            "reason": "FieldValueTooMany",
            "field": path,
            "message": f"Too many: {len(value)}: must have at most {expected} items",
        }
    texts = {
        "pattern": f"should match '{expected}'",
        "minimum": f"should be greater than or equal to {expected}",
        "maximum": f"should be less than or equal to {expected}",
        "exclusiveMinimum": f"should be greater than {expected}",
        "exclusiveMaximum": f"should be less than {expected}",
        "minLength": f"should be at least {expected} chars long",
        "minItems": f"should have at least {expected} items",
        "minProperties": f"should have at least {expected} properties",
        "maxProperties": f"should have at most {expected} properties",
        "uniqueItems": "shall not contain duplicates",
        "multipleOf": f"should be a multiple of {expected}",
    }
    text = texts.get(v, error.message)
    shown = str(len(value)) if isinstance(value, dict | list) else _render(value)
    return {
        "reason": "FieldValueInvalid",
        "field": path,
        "message": f"Invalid value: {shown}: {body} in body {text}",
    }


def _sort_key(error: Any) -> tuple[str, str]:
    return field_path(error.absolute_path), error.validator


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
        if ident not in self._compiled:
            schema = rt.schemas.get(version)
            self._compiled[ident] = _compiled_schema(schema) if schema is not None else None
        return self._compiled[ident]

    @staticmethod
    def _compile(schema: dict[str, Any]) -> Any:
        from jsonschema import Draft7Validator

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
        return _check_rules(rules, obj, old)

    @staticmethod
    def _causes(compiled: Any, obj: Any) -> list[dict[str, Any]]:
        errors = sorted(compiled.iter_errors(obj), key=_sort_key)
        causes: list[dict[str, Any]] = []
        for error in errors:
            if error.validator in ("anyOf", "oneOf", "allOf") and error.context:
                # Report the most specific alternative's failure, as upstream reports the first branch.
                best = min(error.context, key=lambda e: (-len(e.absolute_path), e.validator != "type"))
                causes.append(_cause(best))
            else:
                causes.append(_cause(error))
        seen: set[tuple[str, str]] = set()
        unique = []
        for c in causes:
            ident = (c["field"], c["message"])
            if ident not in seen:
                seen.add(ident)
                unique.append(c)
        return unique

    # -- pruning -------------------------------------------------------------------------------
    def prune(self, rt: ResourceType, obj: dict[str, Any], version: str | None = None) -> list[str]:
        """Drop, in place, fields ``rt``'s schema does not declare; return their paths.

        Example:
            >>> from rayqueue_sdk.local.registry import ResourceType
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
        _prune(schema, obj, [], dropped, root=True)
        return dropped


# Compiled schemas, shared by every validator (a registry built from the same CRD directory hands out
# the same schema objects; see rayqueue_sdk.local.registry.load_crd_dir). Keyed by identity; the
# schema is kept alive by the entry so that its id cannot be reused.
_COMPILED: dict[int, tuple[dict[str, Any], Any, Check | None, list[Rule]]] = {}
_COMPILED_LOCK = threading.Lock()


def _compiled_schema(schema: dict[str, Any]) -> tuple[Any, Check | None, list[Rule]]:
    with _COMPILED_LOCK:
        entry = _COMPILED.get(id(schema))
        if entry is None or entry[0] is not schema:
            slow = SchemaValidator._compile(schema)
            entry = (schema, slow, compile_fast(slow.schema), known_rules(schema))
            _COMPILED[id(schema)] = entry
    return entry[1], entry[2], entry[3]


def _prune(
    schema: dict[str, Any], value: Any, path: list[Any], dropped: list[str], *, root: bool = False
) -> None:
    if not isinstance(schema, dict):
        return
    if isinstance(value, dict):
        preserve = schema.get("x-kubernetes-preserve-unknown-fields")
        props = schema.get("properties")
        additional = schema.get("additionalProperties")
        keep = (
            {"apiVersion", "kind", "metadata"}
            if root or schema.get("x-kubernetes-embedded-resource")
            else set()
        )
        for key in list(value):
            if key in keep:
                continue
            if props is not None and key in props:
                _prune(props[key], value[key], [*path, key], dropped)
            elif isinstance(additional, dict):
                _prune(additional, value[key], [*path, key], dropped)
            elif preserve or additional is True or (props is None and not schema.get("type")):
                continue  # preserved, or an untyped schema: nothing to prune by
            else:
                del value[key]
                dropped.append(field_path([*path, key]))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _prune(schema["items"], item, [*path, i], dropped)


# -- a fast validity check -----------------------------------------------------------------------------
#
# jsonschema walks a RayCluster in about 0.2 ms. The structural schemas of CRDs use a handful of
# keywords, so a tree of closures answers "valid?" about ten times faster; only an invalid object
# goes through jsonschema, which then produces the messages. Any keyword not handled here makes the
# fast check give up (None), so the fast path can never accept what jsonschema would reject.

_SIMPLE_TYPES: dict[str, type] = {"object": dict, "string": str, "array": list}
_IGNORED_KEYWORDS = {"default", "title", "$schema", "readOnly", "writeOnly", "examples"}
Check = Callable[[Any], bool]


def _is_type(value: Any, name: str) -> bool:
    if name == "object":
        return isinstance(value, dict)
    if name == "string":
        return isinstance(value, str)
    if name == "array":
        return isinstance(value, list)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        if isinstance(value, bool):
            return False
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if name == "null":
        return value is None
    return False


_BOUNDS: dict[str, tuple[type, ...]] = {
    "maxLength": (str,),
    "minLength": (str,),
    "maxItems": (list,),
    "minItems": (list,),
    "maxProperties": (dict,),
    "minimum": (int, float),
    "maximum": (int, float),
}


def _bound_check(key: str, kinds: tuple[type, ...], bound: Any) -> Check:
    sized = key in ("maxLength", "minLength", "maxItems", "minItems", "maxProperties")
    upper = key.startswith("max")

    def check(value: Any) -> bool:
        if not isinstance(value, kinds) or isinstance(value, bool):
            return True
        v: Any = value
        measured = len(v) if sized else v
        return bool(measured <= bound if upper else measured >= bound)

    return check


def compile_fast(schema: Any) -> Check | None:
    """A predicate equivalent to JSON-Schema validity for the keywords CRDs use (None if unsupported).

    Example:
        >>> ok = compile_fast({"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}})
        >>> ok({"a": 1}), ok({"a": "1"}), ok({})
        (True, False, False)
    """
    if schema is True or schema == {}:
        return lambda value: True
    if not isinstance(schema, dict):
        return None
    checks: list[Check] = []
    for key in schema:
        if key in _IGNORED_KEYWORDS:
            continue
        if key not in (
            "type",
            "properties",
            "required",
            "items",
            "additionalProperties",
            "pattern",
            "enum",
            "maxLength",
            "minLength",
            "maxItems",
            "minItems",
            "minimum",
            "maximum",
            "maxProperties",
        ):
            return None
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if len(types) == 1 and types[0] in _SIMPLE_TYPES:
            py_type = _SIMPLE_TYPES[types[0]]

            def check_type(v: Any) -> bool:
                return isinstance(v, py_type)
        else:

            def check_type(v: Any) -> bool:
                return any(_is_type(v, t) for t in types)

        checks.append(check_type)
    props: dict[str, Check] = {}
    for name, sub in (schema.get("properties") or {}).items():
        compiled = compile_fast(sub)
        if compiled is None:
            return None
        props[name] = compiled
    additional = schema.get("additionalProperties", True)
    extra: Check | None
    if additional is False:
        extra = lambda v: False  # noqa: E731
    elif additional is True:
        extra = None
    else:
        extra = compile_fast(additional)
        if extra is None:
            return None
    if props or extra is not None:

        def check_object(v: Any, props: dict[str, Check] = props, extra: Check | None = extra) -> bool:
            if not isinstance(v, dict):
                return True
            for k, item in v.items():
                check = props.get(k)
                if check is not None:
                    if not check(item):
                        return False
                elif extra is not None and not extra(item):
                    return False
            return True

        checks.append(check_object)
    if schema.get("required"):
        required = tuple(schema["required"])
        checks.append(lambda v: not isinstance(v, dict) or all(r in v for r in required))
    if "items" in schema:
        item_check = compile_fast(schema["items"]) if isinstance(schema["items"], dict) else None
        if item_check is None:
            return None

        def check_items(v: Any, c: Check = item_check) -> bool:
            if isinstance(v, list):
                for x in v:
                    if not c(x):
                        return False
            return True

        checks.append(check_items)
    if "pattern" in schema:
        try:
            pattern = re.compile(schema["pattern"])
        except re.error:
            return None
        checks.append(lambda v: not isinstance(v, str) or pattern.search(v) is not None)
    if "enum" in schema:
        enum = schema["enum"]
        checks.append(lambda v: any(v == e and type(v) is type(e) for e in enum))
    for key, kinds in _BOUNDS.items():
        if key in schema:
            checks.append(_bound_check(key, kinds, schema[key]))
    if len(checks) == 1:
        return checks[0]

    def check_all(v: Any, checks: tuple[Check, ...] = tuple(checks)) -> bool:
        return all(c(v) for c in checks)

    return check_all


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


# -- object metadata: what the API server checks for every resource ------------------------------------

_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
NAME_RULES: dict[str, tuple[re.Pattern[str], int, str]] = {
    "subdomain": (
        _DNS1123_SUBDOMAIN,
        253,
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
        "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
        r"validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ),
    "label": (
        re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"),
        63,
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
        "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ),
    "dns1035": (
        re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$"),
        63,
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
        "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
        "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    ),
}
_NAME_PART_TEXT = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_LABEL_VALUE_TEXT = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
    "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
MAX_ANNOTATIONS_BYTES = 256 * 1024


def name_causes(name: str, rule: str = "subdomain") -> list[dict[str, Any]]:
    """Causes for an invalid ``metadata.name`` (rule: ``subdomain``, ``label`` or ``dns1035``).

    Example:
        >>> name_causes("ok-name"), name_causes("Bad")[0]["field"]
        ([], 'metadata.name')
    """
    pattern, max_len, text = NAME_RULES[rule]
    problems = []
    if len(name) > max_len:
        problems.append(f"must be no more than {max_len} characters")
    if not pattern.match(name):
        problems.append(text)
    if not problems:
        return []
    return [
        {
            "reason": "FieldValueInvalid",
            "field": "metadata.name",
            "message": f'Invalid value: "{name}": ' + ", ".join(problems),
        }
    ]


def _qualified_name_problems(key: str) -> list[str]:
    prefix, slash, name = key.rpartition("/")
    problems = []
    if slash and (not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix)):
        problems.append("prefix part " + NAME_RULES["subdomain"][2])
    if not name:
        problems.append("name part must be non-empty")
    else:
        if len(name) > 63:
            problems.append("name part must be no more than 63 characters")
        if not _NAME_PART.match(name):
            problems.append(_NAME_PART_TEXT)
    return problems


def metadata_causes(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """Causes for invalid labels, annotation keys and ownerReferences, worded as upstream.

    Raises ``TypeError`` for a label or annotation value that is not a string (upstream fails to
    decode the body: 400 BadRequest).

    Example:
        >>> metadata_causes({"labels": {"app": "ray head"}})[0]["message"][:36]
        'Invalid value: "ray head": a valid l'
    """
    causes: list[dict[str, Any]] = []
    for field in ("labels", "annotations"):
        values = meta.get(field)
        if values is None:
            continue
        if not isinstance(values, dict):
            raise TypeError(f"metadata.{field} must be a map of strings")
        for key, value in values.items():
            if not isinstance(value, str):
                raise TypeError(
                    f"json: cannot unmarshal {_type_name(value)} into Go struct field "
                    f"ObjectMeta.metadata.{field} of type string"
                )
            for problem in _qualified_name_problems(key):
                causes.append(
                    {
                        "reason": "FieldValueInvalid",
                        "field": f"metadata.{field}",
                        "message": f'Invalid value: "{key}": {problem}',
                    }
                )
            if field == "labels" and (len(value) > 63 or not _LABEL_VALUE.match(value)):
                text = "must be no more than 63 characters" if len(value) > 63 else _LABEL_VALUE_TEXT
                causes.append(
                    {
                        "reason": "FieldValueInvalid",
                        "field": "metadata.labels",
                        "message": f'Invalid value: "{value}": {text}',
                    }
                )
        if field == "annotations":
            size = sum(len(k) + len(v) for k, v in values.items())
            if size > MAX_ANNOTATIONS_BYTES:
                causes.append(
                    {
                        "reason": "FieldValueTooLong",
                        "field": "metadata.annotations",
                        "message": f"Too long: must have at most {MAX_ANNOTATIONS_BYTES} bytes",
                    }
                )
    refs = meta.get("ownerReferences") or []
    controllers = []
    for ref in refs:
        for part, what in (("apiVersion", "version"), ("kind", "kind"), ("name", "name"), ("uid", "uid")):
            if not (ref.get(part) if isinstance(ref, dict) else None):
                causes.append(
                    {
                        "reason": "FieldValueInvalid",
                        "field": f"metadata.ownerReferences.{part}",
                        "message": f'Invalid value: "": {what} must not be empty',
                    }
                )
        if isinstance(ref, dict) and ref.get("controller"):
            controllers.append(f"{ref.get('kind')}/{ref.get('name')}")
    if len(controllers) > 1:
        causes.append(
            {
                "reason": "FieldValueInvalid",
                "field": "metadata.ownerReferences",
                "message": "Invalid value: []v1.OwnerReference: Only one reference can have Controller "
                f'set to true. Found "true" in references for {controllers[0]} and {controllers[1]}',
            }
        )
    return causes


# -- x-kubernetes-validations: the known rules ----------------------------------------------------------
#
# A rule is found at a structural path; "[]" steps stand for every element of a list (or value of a
# map). Transition rules (those reading oldSelf) run on updates only, and only where the path has no
# "[]" step (upstream correlates list elements by key; this does not).

Pred = Callable[[Any], bool]
TransitionPred = Callable[[Any, Any], bool]


def _has(obj: Any, field: str) -> bool:
    return isinstance(obj, dict) and field in obj


def _cq_borrowing(spec: Any) -> bool:
    if _has(spec, "cohortName") or not _has(spec, "resourceGroups"):
        return True
    return all(
        not _has(r, "borrowingLimit")
        for rg in spec["resourceGroups"] or []
        for f in (rg or {}).get("flavors") or []
        for r in (f or {}).get("resources") or []
    )


#: rule text -> predicate on ``self`` (or on ``(self, oldSelf)`` for transition rules)
KNOWN_RULES: dict[str, Pred | TransitionPred] = {
    "!has(self.cohortName) && has(self.resourceGroups) ? self.resourceGroups.all(rg, rg.flavors.all(f, "
    "f.resources.all(r, !has(r.borrowingLimit)))) : true": _cq_borrowing,
    "!has(self.minReplicaCount) || self.minReplicaCount <= (has(self.maxReplicaCount) ? "
    "self.maxReplicaCount : 100)": lambda s: (
        not _has(s, "minReplicaCount")
        or s["minReplicaCount"] <= (s["maxReplicaCount"] if _has(s, "maxReplicaCount") else 100)
    ),
    "!has(self.priorityClassRef) || has(self.priority)": lambda s: (
        not _has(s, "priorityClassRef") or _has(s, "priority")
    ),
}
KNOWN_TRANSITION_RULES: dict[str, TransitionPred] = {
    "self == oldSelf": lambda s, o: bool(s == o),
    "!has(oldSelf.clusterName) || !has(self.clusterName) || oldSelf.clusterName == self.clusterName": (
        lambda s, o: (
            not _has(o, "clusterName") or not _has(s, "clusterName") or o["clusterName"] == s["clusterName"]
        )
    ),
}
_IN_LIST = re.compile(r"^self in \[((?:\s*'[^']*'\s*,?)*)\]$")


class Rule:
    """One evaluable ``x-kubernetes-validations`` rule at a structural path."""

    def __init__(self, path: tuple[str, ...], message: str, check: Any, transition: bool) -> None:
        self.path, self.message, self.check, self.transition = path, message, check, transition


def _rule_for(rule: dict[str, Any], path: tuple[str, ...]) -> Rule | None:
    text = " ".join(str(rule.get("rule", "")).split())
    message = rule.get("message") or f"failed rule: {text}"
    if text in KNOWN_TRANSITION_RULES:
        return Rule(path, message, KNOWN_TRANSITION_RULES[text], True) if "[]" not in path else None
    if text in KNOWN_RULES:
        return Rule(path, message, KNOWN_RULES[text], False)
    m = _IN_LIST.match(text)
    if m:
        allowed = re.findall(r"'([^']*)'", m.group(1))
        return Rule(path, message, lambda s, allowed=tuple(allowed): s in allowed, False)
    return None


def known_rules(schema: Any) -> list[Rule]:
    """The evaluable rules of a schema, with their structural paths.

    Example:
        >>> immutable = {"rule": "self == oldSelf", "message": "field is immutable"}
        >>> rules = known_rules({"properties": {"spec": {"properties": {"queue": {"type": "string",
        ...     "x-kubernetes-validations": [immutable]}}}}})
        >>> [(r.path, r.message, r.transition) for r in rules]
        [(('spec', 'queue'), 'field is immutable', True)]
    """
    found: list[Rule] = []

    def walk(node: Any, path: tuple[str, ...]) -> None:
        if not isinstance(node, dict):
            return
        for rule in node.get("x-kubernetes-validations") or ():
            compiled = _rule_for(rule, path)
            if compiled is not None:
                found.append(compiled)
        for name, sub in (node.get("properties") or {}).items():
            walk(sub, (*path, name))
        if isinstance(node.get("items"), dict):
            walk(node["items"], (*path, "[]"))
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], (*path, "[]"))

    walk(schema, ())
    return found


def _values_at(obj: Any, path: tuple[str, ...], where: tuple[Any, ...] = ()) -> Any:
    """``(concrete path, value)`` for every value at a structural path."""
    if not path:
        yield where, obj
        return
    step, rest = path[0], path[1:]
    if step == "[]":
        if isinstance(obj, list):
            for i, item in enumerate(obj):
                yield from _values_at(item, rest, (*where, i))
        elif isinstance(obj, dict):
            for k, item in obj.items():
                yield from _values_at(item, rest, (*where, k))
    elif isinstance(obj, dict) and step in obj:
        yield from _values_at(obj[step], rest, (*where, step))


def _check_rules(rules: list[Rule], obj: dict[str, Any], old: dict[str, Any] | None) -> list[dict[str, Any]]:
    causes: list[dict[str, Any]] = []
    for rule in rules:
        if rule.transition and old is None:
            continue
        for where, value in _values_at(obj, rule.path):
            try:
                if rule.transition:
                    found = [v for _w, v in _values_at(old, rule.path)]
                    ok = not found or rule.check(value, found[0])
                else:
                    ok = rule.check(value)
            except (TypeError, KeyError, AttributeError):
                ok = True  # a shape the rule does not expect: the schema check reports it
            if not ok:
                field = field_path(where)
                causes.append(
                    {
                        "reason": "FieldValueInvalid",
                        "field": field,
                        "message": f'Invalid value: "{_type_name(value)}": {rule.message}',
                    }
                )
    return causes
