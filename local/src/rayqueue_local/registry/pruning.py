"""Pruning: drop, in place, the fields a structural CRD schema does not declare.

A real API server silently drops them unless ``x-kubernetes-preserve-unknown-fields``;
``apiVersion``, ``kind`` and ``metadata`` of the root (and of embedded resources) are never pruned.
:meth:`~rayqueue_local.registry.schema.SchemaValidator.prune` runs this on a resource type's schema.

Example:
    >>> schema = {"type": "object", "properties": {"spec": {"type": "object",
    ...     "properties": {"a": {"type": "string"}}}}}
    >>> obj, dropped = {"kind": "Foo", "spec": {"a": "x", "typo": 1}}, []
    >>> prune_in_place(schema, obj, [], dropped, root=True); dropped, obj
    (['spec.typo'], {'kind': 'Foo', 'spec': {'a': 'x'}})
"""

from __future__ import annotations

from typing import Any

from rayqueue_local.apimachinery.fielderrors import field_path

__all__ = ["prune_in_place", "unknown_fields"]


def unknown_fields(schema: dict[str, Any], value: Any, path: list[Any] | None = None) -> list[str]:
    """The paths :func:`prune_in_place` would drop from ``value``, without changing it (sorted, as upstream's
    strict decoding of custom resources reports them).

    ``path`` is where ``value`` sits in the object (empty for the root, whose ``apiVersion``, ``kind``
    and ``metadata`` are kept).

    Example:
        >>> schema = {"type": "object", "properties": {"spec": {"type": "object",
        ...     "properties": {"a": {"type": "string"}}}}}
        >>> unknown_fields(schema, {"kind": "Foo", "spec": {"a": "x", "typo": 1, "b": None}})
        ['spec.b', 'spec.typo']
    """
    found: list[str] = []
    _walk(schema, value, list(path or []), found, root=not path)
    return sorted(found)


def _walk(
    schema: Any, value: Any, path: list[Any], found: list[str], *, root: bool = False, drop: bool = False
) -> None:
    """Append to ``found`` the path of each field of ``value`` that ``schema`` does not declare (and
    delete it from ``value`` if ``drop``)."""
    if not isinstance(schema, dict):
        return
    if isinstance(value, dict):
        preserve = schema.get("x-kubernetes-preserve-unknown-fields")
        props = schema.get("properties")
        additional = schema.get("additionalProperties")
        embedded = root or schema.get("x-kubernetes-embedded-resource")
        for key in list(value):
            if embedded and key in ("apiVersion", "kind", "metadata"):
                continue
            if props is not None and key in props:
                _walk(props[key], value[key], [*path, key], found, drop=drop)
            elif isinstance(additional, dict):
                _walk(additional, value[key], [*path, key], found, drop=drop)
            elif preserve or additional is True or (props is None and not schema.get("type")):
                continue  # preserved, or an untyped schema: nothing to prune by
            else:
                if drop:
                    del value[key]
                found.append(field_path([*path, key]))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _walk(schema["items"], item, [*path, i], found, drop=drop)


def prune_in_place(
    schema: dict[str, Any], value: Any, path: list[Any], dropped: list[str], *, root: bool = False
) -> None:
    """Drop from ``value``, in place, the fields ``schema`` does not declare, their paths to ``dropped``.

    Example:
        >>> value, dropped = {"a": 1, "b": 2}, []
        >>> prune_in_place({"type": "object", "properties": {"a": {"type": "integer"}}}, value, [], dropped)
        >>> value, dropped
        ({'a': 1}, ['b'])
    """
    _walk(schema, value, path, dropped, root=root, drop=True)
