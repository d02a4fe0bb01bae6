"""Decoding untrusted text with limits: YAML (size, depth, alias expansion) and JSON nesting depth.

A few hundred bytes of YAML aliases ("billion laughs") expand to gigabytes once constructed, and a
namespace-limited user can send them as an apply patch. PyYAML has no limits of its own, so this
module composes the document first (the node graph, where an alias is a shared reference and costs
nothing), measures what construction would produce, and constructs only what fits:

* ``max_bytes``: the text itself (the API server's body limit is 3 MiB);
* ``max_depth``: nesting of mappings and sequences (100, as deep as any Kubernetes object needs);
* ``max_nodes``: scalars, mappings and sequences after every alias is expanded (1,000,000); a
  recursive alias (an anchor inside itself) expands without end and is refused too.

The C parser (``yaml.CSafeLoader``, from libyaml) is used when PyYAML has it: it is linear and ~10×
faster on large files; the pure-Python ``SafeLoader`` is the fallback, with the same results.

Example:
    >>> load_yaml("a: [1, 2]")
    {'a': [1, 2]}
    >>> bomb = "a: &a [x, x]\\nb: &b [*a, *a]\\nc: &c [*b, *b]\\nd: [*c, *c]"
    >>> load_yaml(bomb, max_nodes=20)
    Traceback (most recent call last):
    ...
    rayqueue_local.apimachinery.limits.YAMLLimitError: YAML expands to more than 20 values through its aliases
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

from rayqueue_local.errors import LocalControlPlaneError

__all__ = ["MAX_DEPTH", "MAX_NODES", "YAMLLimitError", "check_depth", "load_yaml", "load_yaml_all"]

#: Deepest nesting of mappings and sequences a decoded document may have.
MAX_DEPTH = 100
#: Most nodes (scalars, mappings, sequences) one YAML text may expand to, aliases included.
MAX_NODES = 1_000_000
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YAMLLimitError(LocalControlPlaneError, ValueError):
    """A YAML text past one of the limits (size, depth, alias expansion); nothing was constructed.

    Example:
        >>> isinstance(YAMLLimitError("too deep"), ValueError)
        True
    """


def _measure(root: yaml.Node, *, max_depth: int, max_nodes: int) -> None:
    """Raise :class:`YAMLLimitError` when constructing ``root`` would pass a limit.

    Iterative (no Python recursion on hostile depth); the expanded size of a shared node is
    computed once and reused, so measuring costs the size of the graph, not of its expansion.
    """
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    # (node, depth, children visited?)
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            total = 1 + sum(sizes[id(child)] for child in _children(node))
            if total > max_nodes:
                raise YAMLLimitError(f"YAML expands to more than {max_nodes} values through its aliases")
            sizes[key] = total
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise YAMLLimitError("YAML alias refers to itself (a recursive structure has no JSON form)")
        if not isinstance(node, yaml.CollectionNode):
            sizes[key] = 1
            continue
        if depth > max_depth:  # collections nested in collections: [[1]] is 2 deep
            raise YAMLLimitError(f"YAML is nested more than {max_depth} levels deep")
        on_path.add(key)
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in _children(node))


def _children(node: yaml.Node) -> Iterator[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            yield k
            yield v
    elif isinstance(node, yaml.SequenceNode):
        yield from node.value


def load_yaml_all(
    text: str | bytes,
    *,
    max_bytes: int | None = None,
    max_depth: int = MAX_DEPTH,
    max_nodes: int = MAX_NODES,
) -> list[Any]:
    """Every document of ``text``, each checked against the limits before it is constructed.

    Raises :class:`YAMLLimitError` past a limit and ``yaml.YAMLError`` for malformed YAML.

    Example:
        >>> load_yaml_all("a: 1\\n---\\nb: 2\\n")
        [{'a': 1}, {'b': 2}]
        >>> load_yaml_all("x" * 11, max_bytes=10)
        Traceback (most recent call last):
        ...
        rayqueue_local.apimachinery.limits.YAMLLimitError: YAML text is 11 bytes; the limit is 10
    """
    size = len(text.encode() if isinstance(text, str) else text)
    if max_bytes is not None and size > max_bytes:
        raise YAMLLimitError(f"YAML text is {size} bytes; the limit is {max_bytes}")
    loader = _Loader(text)
    try:
        docs = []
        while loader.check_node():
            node = loader.get_node()
            _measure(node, max_depth=max_depth, max_nodes=max_nodes)
            docs.append(loader.construct_document(node))
        return docs
    finally:
        loader.dispose()


def load_yaml(text: str | bytes, **limits: Any) -> Any:
    """The single document of ``text`` (``None`` when empty), with the limits of :func:`load_yaml_all`.

    Example:
        >>> load_yaml(""), load_yaml("[1, [2]]", max_depth=2)
        (None, [1, [2]])
    """
    docs = load_yaml_all(text, **limits)
    if len(docs) > 1:
        raise yaml.YAMLError("expected a single YAML document, found more than one")
    return docs[0] if docs else None


def check_depth(value: Any, max_depth: int = MAX_DEPTH) -> Any:
    """``value`` (decoded JSON) unchanged, or :class:`YAMLLimitError` when its dicts and lists nest
    deeper than ``max_depth``; iterative, so hostile depth cannot exhaust the Python stack later.

    Example:
        >>> check_depth({"a": [1, {"b": 2}]}, max_depth=3)
        {'a': [1, {'b': 2}]}
        >>> check_depth([[[]]], max_depth=2)
        Traceback (most recent call last):
        ...
        rayqueue_local.apimachinery.limits.YAMLLimitError: the object is nested more than 2 levels deep
    """
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > max_depth:
            raise YAMLLimitError(f"the object is nested more than {max_depth} levels deep")
        stack.extend((child, depth + 1) for child in children)
    return value
