"""JSON merge patch (RFC 7386) and JSON patch (RFC 6902), as pure functions on JSON-like values.

The JSON patch operations are the ``jsonpatch`` library's; errors are
:class:`~rayqueue_local.apimachinery.patchcore.PatchError` with the status code and message the API
server would send.

Example:
    >>> merge_patch({"a": 1, "b": {"c": 2}}, {"b": {"c": None, "d": 3}})
    {'a': 1, 'b': {'d': 3}}
    >>> json_patch({"a": [1, 2]}, [{"op": "add", "path": "/a/-", "value": 3}])
    {'a': [1, 2, 3]}
"""

from __future__ import annotations

from typing import Any

import jsonpatch
import jsonpointer

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
#
# The operations are applied by the ``jsonpatch`` library, one at a time, so that a failure names the
# operation it came from; its exceptions become the status code and message the API server (Go's
# evanphx/json-patch) gives. Their own text is never passed on: it quotes the document.

_OPS = ("add", "remove", "replace", "move", "copy", "test")
_NEEDS = {"add": "value", "replace": "value", "test": "value", "move": "from", "copy": "from"}
_INDEX_PROBLEMS = ("index", "outside of list")
_REJECTED = "the server rejected our request due to an error in our request"


def json_patch(target: Any, operations: list[dict[str, Any]]) -> Any:
    """Apply a JSON patch (RFC 6902) and return the result; ``target`` is not modified.

    A failing ``test`` raises ``PatchError(422)``, as the API server answers; so do a missing path,
    a bad index and an unknown ``op`` (upstream's ``patchObj.Apply`` fails on them and the API server
    answers 422, staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go). A body that does not
    decode as a list of operations is 400.

    Example:
        >>> json_patch({"a": {"b": 1}}, [{"op": "move", "from": "/a/b", "path": "/c"}])
        {'a': {}, 'c': 1}
        >>> json_patch({"a": 1}, [{"op": "test", "path": "/a", "value": 2}])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rayqueue_local.apimachinery.patchcore.PatchError: ...: testing value /a failed: test failed
        >>> json_patch(None, [{"op": "remove", "path": ""}])
        Traceback (most recent call last):
        ...
        rayqueue_local.apimachinery.patchcore.PatchError: Unable to remove nonexistent key: : missing value
    """
    if not isinstance(operations, list):
        raise PatchError(
            400, "BadRequest", "json: cannot unmarshal object into Go value of type jsonpatch.Patch"
        )
    doc = deep_copy(target)
    for op in operations:
        if not isinstance(op, dict):
            raise PatchError(
                400,
                "BadRequest",
                f"json: cannot unmarshal {type(op).__name__} into Go value of type jsonpatch.Operation",
            )
        kind = op.get("op")
        if kind not in _OPS:
            raise PatchError(422, "Invalid", f"Unexpected kind: {kind}")
        path = op.get("path")
        if not isinstance(path, str):
            raise PatchError(422, "Invalid", f"operation {kind!r} has no path")
        for field in {"add": ("value",), "replace": ("value",), "test": ("value",)}.get(
            kind, ("from",) if kind in ("move", "copy") else ()
        ):
            if field not in op:
                raise PatchError(422, "Invalid", f"operation {kind!r} is missing the {field!r} field")
        if kind == "replace" and _missing_member(doc, path):
            # The API server's JSON patch library (gopkg.in/evanphx/json-patch.v4, whose object get never
            # fails on a missing key) replaces a member an existing object lacks by adding it: Ray's
            # KubeRay autoscaler relies on it to write scaleStrategy.workersToDelete into a worker group
            # that has no scaleStrategy yet.
            op = {**op, "op": "add"}
        try:
            doc = jsonpatch.JsonPatch([deep_copy(op)]).apply(doc, in_place=True)
        except jsonpatch.JsonPatchTestFailed:
            raise _test_failed(doc, path) from None
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as err:
            raise _failure(op, str(err)) from None
        except (TypeError, KeyError, IndexError, AttributeError) as err:
            # The library's own crash on a path it does not guard (e.g. removing the root of a null
            # document): the operation cannot apply, which is the client's 422, not our 500.
            raise _failure(op, type(err).__name__) from None
    return doc


def _missing_member(doc: Any, path: str) -> bool:
    """Whether ``path`` names a key that its parent, an existing object, does not have.

    Example:
        >>> _missing_member({"a": {}}, "/a/b"), _missing_member({"a": {}}, "/x/b"), _missing_member([], "/0")
        (True, False, False)
    """
    parent, _, last = path.rpartition("/")
    try:
        container = jsonpointer.resolve_pointer(doc, parent)
    except jsonpointer.JsonPointerException:
        return False
    key = last.replace("~1", "/").replace("~0", "~")
    return bool(path) and isinstance(container, dict) and key not in container


def _test_failed(doc: Any, path: str) -> PatchError:
    try:
        jsonpointer.resolve_pointer(doc, path)
    except jsonpointer.JsonPointerException:
        return PatchError(422, "Invalid", f"{_REJECTED}: doc is missing path: {path}: missing value")
    return PatchError(422, "Invalid", f"{_REJECTED}: testing value {path} failed: test failed")


def _failure(op: dict[str, Any], problem: str) -> PatchError:
    """The API server's answer to operation ``op`` failing with the library's ``problem``."""
    kind, path = op["op"], op["path"]
    pointer = op["from"] if kind in ("move", "copy") and not problem.startswith("Cannot move") else path
    last = pointer.rpartition("/")[2].replace("~1", "/").replace("~0", "~")
    if "must start with /" in problem:
        message = f"{_REJECTED}: invalid JSON pointer {pointer!r}".replace("'", '"')
    elif problem.startswith("Cannot move"):
        message = f"cannot move {op['from']} into its own child {path}"
    elif any(word in problem for word in _INDEX_PROBLEMS):
        message = f"unable to access invalid index: {last} in path {pointer}"
    elif kind == "remove":
        message = f"Unable to remove nonexistent key: {last}: missing value"
    else:
        message = f"doc is missing path: {pointer}: missing value"
    return PatchError(422, "Invalid", message)
