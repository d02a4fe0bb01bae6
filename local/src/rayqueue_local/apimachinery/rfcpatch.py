"""JSON merge patch (RFC 7386) and JSON patch (RFC 6902), as pure functions on JSON-like values.

Errors are :class:`~rayqueue_local.apimachinery.patchcore.PatchError` with the status code and message the
API server would send.

Example:
    >>> merge_patch({"a": 1, "b": {"c": 2}}, {"b": {"c": None, "d": 3}})
    {'a': 1, 'b': {'d': 3}}
    >>> json_patch({"a": [1, 2]}, [{"op": "add", "path": "/a/-", "value": 3}])
    {'a': [1, 2, 3]}
"""

from __future__ import annotations

from typing import Any

from rayqueue_local.apimachinery.patchcore import PatchError, deep_copy

__all__ = ["json_patch", "merge_patch"]


# -- RFC 7386 ---------------------------------------------------------------------------------------------


def merge_patch(target: Any, patch: Any) -> Any:
    """Apply a JSON merge patch (RFC 7386) and return the result; ``target`` is not modified.

    Example:
        >>> merge_patch({"a": [1]}, {"a": [2], "b": None})
        {'a': [2]}
    """
    if not isinstance(patch, dict):
        return deep_copy(patch)
    result = deep_copy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# -- RFC 6902 ---------------------------------------------------------------------------------------------


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(
            422,
            "Invalid",
            f'the server rejected our request due to an error in our request: invalid JSON pointer "{path}"',
        )
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _index(container: list[Any], token: str, *, allow_end: bool, path: str) -> int:
    if token == "-" and allow_end:
        return len(container)
    if not token.isdigit() or (token != "0" and token.startswith("0")):
        raise PatchError(422, "Invalid", f"unable to access invalid index: {token} in path {path}")
    i = int(token)
    if i > len(container) or (i == len(container) and not allow_end):
        raise PatchError(422, "Invalid", f"unable to access invalid index: {i} (out of range) in path {path}")
    return i


def _parent(doc: Any, tokens: list[str], path: str) -> Any:
    cur = doc
    for token in tokens[:-1]:
        if isinstance(cur, dict):
            if token not in cur:
                raise PatchError(422, "Invalid", f"doc is missing path: {path}: missing value")
            cur = cur[token]
        elif isinstance(cur, list):
            cur = cur[_index(cur, token, allow_end=False, path=path)]
        else:
            raise PatchError(422, "Invalid", f"doc is missing path: {path}: missing value")
    return cur


def _get(doc: Any, path: str) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return doc
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(422, "Invalid", f"doc is missing path: {path}: missing value")
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, allow_end=False, path=path)]
    raise PatchError(422, "Invalid", f"doc is missing path: {path}: missing value")


def _add(doc: Any, path: str, value: Any) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return value
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, allow_end=True, path=path), value)
    else:
        raise PatchError(422, "Invalid", f"doc is missing path: {path}: missing value")
    return doc


def _remove(doc: Any, path: str) -> tuple[Any, Any]:
    tokens = _pointer(path)
    if not tokens:
        raise PatchError(422, "Invalid", "unable to remove the whole document")
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(422, "Invalid", f"Unable to remove nonexistent key: {last}: missing value")
        return doc, parent.pop(last)
    if isinstance(parent, list):
        return doc, parent.pop(_index(parent, last, allow_end=False, path=path))
    raise PatchError(422, "Invalid", f"doc is missing path: {path}: missing value")


def json_patch(target: Any, operations: list[dict[str, Any]]) -> Any:
    """Apply a JSON patch (RFC 6902) and return the result; ``target`` is not modified.

    A failing ``test`` raises ``PatchError(422)``, as the API server answers.

    Example:
        >>> json_patch({"a": {"b": 1}}, [{"op": "move", "from": "/a/b", "path": "/c"}])
        {'a': {}, 'c': 1}
    """
    if not isinstance(operations, list):
        raise PatchError(
            400, "BadRequest", "json: cannot unmarshal object into Go value of type jsonpatch.Patch"
        )
    doc = deep_copy(target)
    for op in operations:
        if not isinstance(op, dict) or "op" not in op:
            raise PatchError(400, "BadRequest", f"Unexpected kind: {op!r}")
        kind = op["op"]
        path = op.get("path")
        if not isinstance(path, str):
            raise PatchError(422, "Invalid", f"operation {kind!r} has no path")
        if kind == "add":
            doc = _add(doc, path, deep_copy(_need(op, "value")))
        elif kind == "remove":
            doc, _ = _remove(doc, path)
        elif kind == "replace":
            _get(doc, path)  # must exist
            if _pointer(path):
                doc, _ = _remove(doc, path)
            doc = _add(doc, path, deep_copy(_need(op, "value")))
        elif kind == "move":
            src = _need(op, "from")
            if path.startswith(src + "/"):
                raise PatchError(422, "Invalid", f"cannot move {src} into its own child {path}")
            doc, value = _remove(doc, src)
            doc = _add(doc, path, value)
        elif kind == "copy":
            doc = _add(doc, path, deep_copy(_get(doc, _need(op, "from"))))
        elif kind == "test":
            if _get(doc, path) != _need(op, "value"):
                raise PatchError(
                    422,
                    "Invalid",
                    f"the server rejected our request due to an error in our request: "
                    f"testing value {path} failed: test failed",
                )
        else:
            raise PatchError(400, "BadRequest", f"Unexpected kind: {kind}")
    return doc


def _need(op: dict[str, Any], field: str) -> Any:
    if field not in op:
        raise PatchError(422, "Invalid", f"operation {op.get('op')!r} is missing the {field!r} field")
    return op[field]
