"""Field errors worded as the API server words them: field paths, value renderings, causes.

:func:`field_path` writes a path as upstream does (``spec.workerGroupSpecs[0].replicas``);
:func:`validation_cause` turns one :mod:`jsonschema` ``ValidationError`` into a ``details.causes``
entry with upstream's 422 message.

Example:
    >>> field_path(["spec", "workerGroupSpecs", 0, "replicas"])
    'spec.workerGroupSpecs[0].replicas'
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

__all__ = ["GO_PATTERN_KEY", "error_sort_key", "field_path", "json_type_name", "validation_cause"]


def json_type_name(value: Any) -> str:
    """The JSON type of a decoded value, as the API server names it in field errors.

    Example:
        >>> json_type_name(True), json_type_name(3), json_type_name([]), json_type_name(None)
        ('boolean', 'integer', 'array', 'null')
    """
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


#: Where a converted schema keeps a ``pattern``'s original Go text (messages quote the CRD's pattern).
GO_PATTERN_KEY = "x-rayqueue-go-pattern"


def validation_cause(error: Any) -> dict[str, Any]:
    """Turn one jsonschema ``ValidationError`` into an upstream-style cause.

    Example:
        >>> import jsonschema
        >>> schema = {"type": "object", "properties": {"replicas": {"type": "integer"}}}
        >>> error = next(jsonschema.Draft7Validator(schema).iter_errors({"replicas": "two"}))
        >>> validation_cause(error)["field"]
        'replicas'
    """
    path = field_path(error.absolute_path)
    v, value, expected = error.validator, error.instance, error.validator_value
    if v == "pattern":  # the CRD's own (Go) pattern, not its Python translation
        expected = (getattr(error, "schema", None) or {}).get(GO_PATTERN_KEY, expected)
    body = path or "body"
    if v == "required":
        missing = [p for p in expected if not isinstance(value, dict) or p not in value]
        field = f"{path}.{missing[0]}" if path else missing[0]
        return {"reason": "FieldValueRequired", "message": "Required value", "field": field}
    if v == "type":
        types = expected if isinstance(expected, list) else [expected]
        types = [t for t in types if t != "null"] or types
        got = json_type_name(value)
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


def error_sort_key(error: Any) -> tuple[str, str]:
    """Sort jsonschema errors as upstream lists causes: by field path, then by the failed keyword.

    Example:
        >>> import jsonschema
        >>> schema = {"properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}
        >>> errors = jsonschema.Draft7Validator(schema).iter_errors({"b": "x", "a": "y"})
        >>> [error_sort_key(e) for e in sorted(errors, key=error_sort_key)]
        [('a', 'type'), ('b', 'type')]
    """
    return field_path(error.absolute_path), error.validator
