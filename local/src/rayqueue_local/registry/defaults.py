"""CRD defaulting: fill in the ``default`` values a structural schema declares, as the API server does.

Upstream (``apiextensions-apiserver/pkg/apiserver/schema/defaulting``) defaults a custom resource when it
decodes a request and when it reads one from etcd: a property with a ``default`` that is absent gets a
copy of it, and so does one that is ``null`` when the schema does not say ``nullable: true`` (the null
is pruned first). Defaulting recurses into what is there (and into what it has just filled in), through
``properties``, ``additionalProperties`` and ``items``. The root's ``metadata`` is never defaulted.

Example:
    >>> schema = {"type": "object", "properties": {"spec": {"type": "object", "default": {},
    ...     "properties": {"strategy": {"type": "string", "default": "BestEffortFIFO"},
    ...                    "ports": {"type": "array", "items": {"type": "object",
    ...                        "properties": {"protocol": {"type": "string", "default": "TCP"}}}}}}}}
    >>> obj = {"kind": "Foo", "spec": {"ports": [{"port": 80}]}}
    >>> apply_defaults(schema, obj); obj["spec"]
    {'ports': [{'port': 80, 'protocol': 'TCP'}], 'strategy': 'BestEffortFIFO'}
    >>> obj = {"kind": "Foo"}; apply_defaults(schema, obj); obj["spec"]
    {'strategy': 'BestEffortFIFO'}
"""

from __future__ import annotations

from typing import Any

from rayqueue_local.apimachinery.patchcore import deep_copy

__all__ = ["apply_defaults", "has_defaults"]


def has_defaults(schema: Any) -> bool:
    """Whether any ``default`` appears in ``schema`` (a schema without one needs no walk).

    Example:
        >>> has_defaults({"properties": {"a": {"type": "string"}}}), has_defaults({"items": {"default": 1}})
        (False, True)
    """
    if isinstance(schema, dict):
        return "default" in schema or any(has_defaults(v) for v in schema.values())
    if isinstance(schema, list):
        return any(has_defaults(v) for v in schema)
    return False


def apply_defaults(schema: dict[str, Any], obj: Any) -> None:
    """Default ``obj`` in place from ``schema`` (the root: its ``metadata`` is left alone)."""
    _default(schema, obj, root=True)


def _default(schema: Any, value: Any, *, root: bool = False) -> None:
    if not isinstance(schema, dict):
        return
    if isinstance(value, dict):
        props = schema.get("properties")
        if isinstance(props, dict):
            for key, sub in props.items():
                if root and key == "metadata":
                    continue
                if not isinstance(sub, dict) or "default" not in sub:
                    continue
                if key not in value or (value[key] is None and not sub.get("nullable")):
                    value[key] = deep_copy(sub["default"])
            for key, item in value.items():
                sub = props.get(key)
                if sub is not None and not (root and key == "metadata"):
                    _default(sub, item)
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            for key, item in value.items():
                if not isinstance(props, dict) or key not in props:
                    _default(additional, item)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            _default(schema["items"], item)
