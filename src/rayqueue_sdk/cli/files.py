"""Reading the files a CLI user names (``-f config.yaml``, ``--cluster-config @file.json``), with limits.

A file is untrusted input: it may be binary, not UTF-8, huge, nested without end, or a YAML "billion
laughs" whose aliases expand to gigabytes. Each of these becomes a :class:`ConfigError` that names the
option and the file, before anything is built or sent:

* ``MAX_FILE_BYTES`` (10 MiB): far above any cluster configuration or manifest;
* UTF-8 text only, with no NUL byte (a binary file);
* YAML through libyaml's C parser when PyYAML has it (linear, ~10× faster than the pure-Python
  loader, which read a 5 MB file in tens of seconds), composed first and measured before it is
  constructed: at most ``MAX_NODES`` values once aliases are expanded, ``MAX_DEPTH`` levels of
  nesting, and no alias inside itself.

Example:
    >>> import pathlib, tempfile
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "ws.yaml"; _ = f.write_text("name: ws\\nnum_workers: 1\\n")
    >>> read_yaml_file(str(f), "--file")
    {'name': 'ws', 'num_workers': 1}
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import PurePath
from typing import Any

import yaml

from rayqueue_sdk.errors import ConfigError

__all__ = ["MAX_DEPTH", "MAX_FILE_BYTES", "MAX_NODES", "parse_yaml_text", "read_text_file", "read_yaml_file"]

#: The largest file the CLI reads (bytes).
MAX_FILE_BYTES = 10 * 2**20
#: The deepest nesting of mappings and lists accepted in a YAML file.
MAX_DEPTH = 100
#: The most values (scalars, mappings, lists) a YAML file may hold once its aliases are expanded.
MAX_NODES = 1_000_000
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_text_file(path: str, option: str, allowed: str) -> str:
    """The UTF-8 text of ``path``, or a :class:`ConfigError` naming ``option`` and the file.

    Example:
        >>> import pathlib, tempfile
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "blob"; _ = f.write_bytes(b"\\x89PNG\\x00\\xff")
        >>> try:
        ...     read_text_file(str(f), "--cluster-config", "a JSON file")
        ... except ConfigError as err:
        ...     print(err.field, "|", err.problem)
        --cluster-config | a binary file, not text
    """
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        raise ConfigError(
            option, PurePath(path), allowed, problem=err.strerror or type(err).__name__
        ) from None
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(
            option, PurePath(path), allowed, problem=f"larger than {MAX_FILE_BYTES // 2**20} MiB"
        )
    if b"\x00" in data:
        raise ConfigError(option, PurePath(path), allowed, problem="a binary file, not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(
            option, PurePath(path), allowed, problem=f"not UTF-8 text (byte {err.start} cannot be decoded)"
        ) from None


def read_yaml_file(path: str, option: str, allowed: str = "a readable YAML file") -> Any:
    """The one YAML document in ``path``, read within the module's limits.

    Example:
        >>> import pathlib, tempfile
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "bomb.yaml"
        >>> _ = f.write_text("a: &a [x, x]\\n" + "".join(f"b{i}: &b{i} [*a, *a]\\n" for i in range(3)))
        >>> read_yaml_file(str(f), "--file")["b0"]
        [['x', 'x'], ['x', 'x']]
        >>> _ = f.write_text("a: &a [*a]\\n")
        >>> try:
        ...     read_yaml_file(str(f), "--file")
        ... except ConfigError as err:
        ...     print(err.problem)
        an alias refers to itself (a recursive structure has no JSON form)
    """
    return parse_yaml_text(read_text_file(path, option, allowed), option, PurePath(path), allowed)


def parse_yaml_text(
    text: str, option: str, shown: str | os.PathLike[str], allowed: str = "YAML or JSON"
) -> Any:
    """The one YAML (or JSON) document in ``text``, within the module's limits; errors name ``option``
    and show ``shown`` (the file's path, or the text itself).

    Example:
        >>> parse_yaml_text('{"num_workers": 2}', "--cluster-config", "inline")
        {'num_workers': 2}
        >>> try:
        ...     parse_yaml_text('{"num_workers": ', "--cluster-config", "inline")
        ... except ConfigError as err:
        ...     print(err.field, "|", err.problem[:20])
        --cluster-config | not valid YAML: whil
    """
    if not _MAYBE_ALIAS.search(text) and _flow_depth(text) <= MAX_DEPTH:
        # No alias, so nothing can expand: libyaml builds it directly (the common case, and ~30% faster
        # than composing, measuring and constructing); then only the nesting of the result is checked.
        try:
            data = yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader is a safe loader
        except yaml.YAMLError as err:
            problem = " ".join(str(err).split())[:300]
            raise ConfigError(option, shown, allowed, problem=f"not valid YAML: {problem}") from None
        except RecursionError:
            raise ConfigError(
                option, shown, allowed, problem=f"nested more than {MAX_DEPTH} levels deep"
            ) from None
        if _depth(data) > MAX_DEPTH:
            raise ConfigError(option, shown, allowed, problem=f"nested more than {MAX_DEPTH} levels deep")
        return data
    loader = _Loader(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.YAMLError as err:
            problem = " ".join(str(err).split())[:300]
            raise ConfigError(option, shown, allowed, problem=f"not valid YAML: {problem}") from None
        if node is None:
            return None
        too_big = _too_big(node)
        if too_big:
            raise ConfigError(option, shown, allowed, problem=too_big)
        try:
            return loader.construct_document(node)
        except yaml.YAMLError as err:
            problem = " ".join(str(err).split())[:300]
            raise ConfigError(option, shown, allowed, problem=f"not valid YAML: {problem}") from None
    finally:
        loader.dispose()


#: Where an alias (``*name``) could start: at a line's start, after a space or a flow indicator. A
#: ``*`` inside a scalar ("a*b") also matches, which only sends the text the slower, measured way.
_MAYBE_ALIAS = re.compile(r"(?:^|[\s\[{,])\*", re.MULTILINE)
_FLOW = re.compile(r"[\[\]{}]")


def _flow_depth(text: str) -> int:
    """The deepest nesting of flow brackets (an over-estimate: brackets inside quotes count too)."""
    depth = deepest = 0
    for match in _FLOW.finditer(text):
        depth += 1 if match.group() in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _depth(value: Any) -> int:
    """How deeply ``value``'s lists and mappings nest (iterative)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = [*item.keys(), *item.values()]
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _too_big(root: yaml.Node) -> str | None:
    """What makes ``root`` too big to construct, or ``None``. Iterative; a shared (aliased) node is
    sized once, so this costs the size of the document, not of its expansion."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in _children(node))
            if sizes[key] > MAX_NODES:
                return f"expands to more than {MAX_NODES} values through its aliases"
            continue
        if key in sizes:
            continue
        if key in on_path:
            return "an alias refers to itself (a recursive structure has no JSON form)"
        if not isinstance(node, yaml.CollectionNode):
            sizes[key] = 1
            continue
        if depth > MAX_DEPTH:
            return f"nested more than {MAX_DEPTH} levels deep"
        on_path.add(key)
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in _children(node))
    return None


def _children(node: yaml.Node) -> Iterator[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            yield k
            yield v
    elif isinstance(node, yaml.SequenceNode):
        yield from node.value
