"""Duplicate fields in request bodies, found as upstream's strict decoders find them.

A JSON body is read by ``sigs.k8s.io/json``, which reports ``duplicate field "spec.replicas"`` with the
field's path; an apply patch (YAML) by ``sigs.k8s.io/yaml``'s strict mode, which reports ``line 3: key
"replicas" already set in map``. :func:`loads_checked` parses JSON once and returns the duplicates
with the value; :func:`yaml_duplicate_keys` reads a YAML document's node tree.

Example:
    >>> loads_checked(b'{"spec": {"replicas": 1, "replicas": 2}}')
    ({'spec': {'replicas': 2}}, ['spec.replicas'])
    >>> yaml_duplicate_keys("a: 1\\nb:\\n  c: 1\\n  c: 2\\n")
    ['line 4: key "c" already set in map']
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from rayqueue_local.apimachinery.fielderrors import field_path

__all__ = ["loads_checked", "yaml_duplicate_keys"]


def loads_checked(raw: bytes | str) -> tuple[Any, list[str]]:
    """``(value, duplicate field paths)`` of a JSON text (the last value of a duplicate wins, as upstream).

    Raises what :func:`json.loads` raises for malformed input.

    Example:
        >>> loads_checked('[{"a": 1}, {"a": 2, "a": 3}]')
        ([{'a': 1}, {'a': 3}], ['[1].a'])
    """
    seen: dict[int, tuple[dict[str, Any], list[str]]] = {}

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) != len(pairs):
            keys: list[str] = []
            names: set[str] = set()
            for key, _ in pairs:
                if key in names and key not in keys:
                    keys.append(key)
                names.add(key)
            seen[id(out)] = (out, keys)  # the dict is kept alive here: its id stays unique
        return out

    value = json.loads(raw, object_pairs_hook=hook)
    if not seen:
        return value, []
    found: list[str] = []
    _collect(value, [], seen, found)
    return value, found


def _collect(
    value: Any, path: list[Any], seen: dict[int, tuple[dict[str, Any], list[str]]], out: list[str]
) -> None:
    if isinstance(value, dict):
        entry = seen.get(id(value))
        if entry is not None and entry[0] is value:
            out.extend(field_path([*path, key]) for key in entry[1])
        for key, item in value.items():
            _collect(item, [*path, key], seen, out)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _collect(item, [*path, i], seen, out)


def yaml_duplicate_keys(text: str) -> list[str]:
    """``line N: key "k" already set in map`` for each repeated key of a mapping in a YAML document.

    Malformed YAML gives no duplicates here (the decoder reports it on its own).

    Example:
        >>> yaml_duplicate_keys('{"a": 1, "a": 2}')
        ['line 1: key "a" already set in map']
    """
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return []
    found: list[str] = []
    stack = [root] if root is not None else []
    visited: set[int] = set()  # an alias shares its node: walk each node once
    while stack:
        node = stack.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        if isinstance(node, yaml.MappingNode):
            names: set[str] = set()
            for key, item in node.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value in names:
                        found.append(f'line {key.start_mark.line + 1}: key "{key.value}" already set in map')
                    names.add(key.value)
                stack.append(item)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return sorted(found, key=lambda m: int(m.split(":")[0].split()[1]))
