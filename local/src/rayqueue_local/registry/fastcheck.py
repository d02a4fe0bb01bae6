"""A fast validity check compiled from a JSON Schema (the keywords structural CRD schemas use).

Only an object this check rejects goes through :mod:`jsonschema`, which then words the errors.

Example:
    >>> compile_fast({"type": "object", "properties": {"a": {"type": "integer"}}})({"a": 1})
    True
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from rayqueue_local.apimachinery.fielderrors import GO_PATTERN_KEY

__all__ = ["Check", "compile_fast"]


# -- a fast validity check -----------------------------------------------------------------------------
#
# jsonschema walks a RayCluster in about 0.2 ms. The structural schemas of CRDs use a handful of
# keywords, so a tree of closures answers "valid?" about ten times faster; only an invalid object
# goes through jsonschema, which then produces the messages. Any keyword not handled here makes the
# fast check give up (None), so the fast path can never accept what jsonschema would reject.

_SIMPLE_TYPES: dict[str, type] = {"object": dict, "string": str, "array": list}
# (the converted schema's patterns are Python already; GO_PATTERN_KEY only keeps their Go text for messages)
_IGNORED_KEYWORDS = {"default", "title", "$schema", "readOnly", "writeOnly", "examples", GO_PATTERN_KEY}
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
