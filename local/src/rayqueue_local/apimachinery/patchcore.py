"""What every patch kind shares: :class:`PatchError` and fast copies of JSON-like values.

:func:`deep_copy` copies without ``copy.deepcopy``'s bookkeeping; :func:`interned_copy` also interns
keys and short strings, for objects the store keeps for long.
"""

from __future__ import annotations

import sys
from typing import Any

from rayqueue_local.errors import LocalControlPlaneError

__all__ = ["PatchError", "deep_copy", "interned_copy"]


class PatchError(LocalControlPlaneError, ValueError):
    """A patch that cannot be applied: ``code`` (400/409/422), ``reason`` and ``causes``.

    Example:
        >>> PatchError(422, "Invalid", "bad").code
        422
    """

    def __init__(
        self, code: int, reason: str, message: str, causes: list[dict[str, Any]] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.causes = list(causes or [])


def deep_copy(value: Any) -> Any:
    """Copy a JSON-like value (dicts, lists, scalars) several times faster than ``copy.deepcopy``.

    Tuples become lists, as they would after a JSON round trip.

    Example:
        >>> a = {"x": [1, {"y": 2}]}; b = deep_copy(a); b["x"][1]["y"] = 3; a["x"][1]["y"]
        2
    """
    t = type(value)
    if t is dict:
        return {k: deep_copy(v) for k, v in value.items()}
    if t is list or t is tuple:
        return [deep_copy(v) for v in value]
    return value


def interned_copy(value: Any) -> Any:
    """Like :func:`deep_copy`, with dict keys and short strings interned (objects kept for long).

    Objects decoded from JSON carry their own copies of every key; a store of thousands of objects
    shares one copy of ``"metadata"``, ``"name"``, ``"containerPort"``... instead.

    Example:
        >>> import sys
        >>> key = next(iter(interned_copy({"".join(["na", "me"]): "x"})))
        >>> key is sys.intern("name")
        True
    """
    t = type(value)
    if t is dict:
        return {_intern(k): interned_copy(v) for k, v in value.items()}
    if t is list or t is tuple:
        return [interned_copy(v) for v in value]
    if t is str and len(value) <= 32:
        return _intern(value)
    return value


_intern = sys.intern
