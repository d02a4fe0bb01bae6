"""The JSONPath subset of Kubernetes printer columns (``additionalPrinterColumns[].jsonPath``).

Upstream evaluates a CRD's column paths with ``k8s.io/client-go/util/jsonpath`` (template
``{<jsonPath>}``); the CRD validation allows "simple" paths only. Supported here: fields
(``.status.state``, ``['a.b']``), indexes (``[0]``, negative from the end), the wildcard ``[*]`` and
filters ``[?(@.type=="Ready")]`` (``==``/``!=`` against a quoted string or a number, on a field path
of the element). :func:`find` returns every match in order (upstream's table convertor then keeps the
first); :func:`text` prints a value as the template printer does (strings raw, lists and maps in Go's
``fmt`` form).

Example:
    >>> obj = {"status": {"conditions": [{"type": "Ready", "status": "True"}], "state": "ready"}}
    >>> find(obj, ".status.state")
    ['ready']
    >>> find(obj, '.status.conditions[?(@.type=="Ready")].status')
    ['True']
    >>> find(obj, ".spec.missing")
    []
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from rayqueue_local.errors import LocalControlPlaneError

__all__ = ["JSONPathError", "find", "text"]


class JSONPathError(LocalControlPlaneError, ValueError):
    """A path outside the supported subset.

    Example:
        >>> try:
        ...     find({}, ".a[")
        ... except JSONPathError as err:
        ...     print(err)
        unterminated [ in JSONPath '.a['
    """


_FIELD = re.compile(r"\.([A-Za-z0-9_$-]+)")
_FILTER = re.compile(r"""\?\(@((?:\.[A-Za-z0-9_$-]+)+)\s*(==|!=)\s*(?:"([^"]*)"|'([^']*)'|(-?[0-9.]+))\)""")

# A step: ("field", name) | ("index", n) | ("all", None) | ("filter", (path, op, value))
_Step = tuple[str, Any]


@lru_cache(maxsize=512)
def _parse(path: str) -> tuple[_Step, ...]:
    expr = path.strip()
    if expr.startswith("{") and expr.endswith("}"):
        expr = expr[1:-1]
    if expr.startswith("$"):
        expr = expr[1:]
    steps: list[_Step] = []
    pos = 0
    while pos < len(expr):
        if expr[pos] == ".":
            match = _FIELD.match(expr, pos)
            if match is None:
                if expr[pos:] == ".":
                    break
                raise JSONPathError(f"unsupported JSONPath {path!r} at {pos}")
            steps.append(("field", match.group(1)))
            pos = match.end()
        elif expr[pos] == "[":
            end = expr.find("]", pos)
            if end < 0:
                raise JSONPathError(f"unterminated [ in JSONPath {path!r}")
            inner = expr[pos + 1 : end].strip()
            steps.append(_bracket(path, inner))
            pos = end + 1
        else:
            raise JSONPathError(f"unsupported JSONPath {path!r} at {pos}")
    return tuple(steps)


def _bracket(path: str, inner: str) -> _Step:
    if inner == "*":
        return ("all", None)
    if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"":
        return ("field", inner[1:-1])
    if re.fullmatch(r"-?\d+", inner):
        return ("index", int(inner))
    match = _FILTER.fullmatch(inner)
    if match is None:
        raise JSONPathError(f"unsupported JSONPath {path!r}: [{inner}]")
    fields = tuple(match.group(1).split(".")[1:])
    raw_number = match.group(5)
    value: Any
    if raw_number is not None:
        value = float(raw_number)
    else:
        value = match.group(3) if match.group(3) is not None else match.group(4)
    return ("filter", (fields, match.group(2), value))


def _get(value: Any, fields: tuple[str, ...]) -> tuple[bool, Any]:
    for name in fields:
        if not isinstance(value, dict) or name not in value:
            return False, None
        value = value[name]
    return True, value


def _matches(element: Any, fields: tuple[str, ...], op: str, expected: Any) -> bool:
    found, value = _get(element, fields)
    if not found:
        return False
    if isinstance(expected, float):
        equal = isinstance(value, int | float) and not isinstance(value, bool) and float(value) == expected
    else:
        equal = value == expected
    return equal if op == "==" else not equal


def find(obj: Any, path: str) -> list[Any]:
    """Every value ``path`` reaches in ``obj``, in document order (none when a step finds nothing).

    Example:
        >>> find({"spec": {"env": [{"name": "a"}, {"name": "b"}]}}, ".spec.env[*].name")
        ['a', 'b']
        >>> find({"a": [1, 2, 3]}, "{.a[-1]}")
        [3]
    """
    current = [obj]
    for kind, arg in _parse(path):
        nxt: list[Any] = []
        for value in current:
            if kind == "field":
                if isinstance(value, dict) and arg in value:
                    nxt.append(value[arg])
            elif kind == "index":
                if isinstance(value, list) and -len(value) <= arg < len(value):
                    nxt.append(value[arg])
            elif kind == "all":
                if isinstance(value, list):
                    nxt.extend(value)
                elif isinstance(value, dict):
                    nxt.extend(value.values())
            elif isinstance(value, list):
                fields, op, expected = arg
                nxt.extend(e for e in value if _matches(e, fields, op, expected))
        current = nxt
    return current


def text(value: Any) -> str:
    """``value`` as the JSONPath template printer writes it (Go's ``fmt.Fprint`` of the JSON value).

    Example:
        >>> text("ready"), text(3), text(2.5), text(True), text(["a", 1]), text({"b": 1, "a": "x"})
        ('ready', '3', '2.5', 'true', '[a 1]', 'map[a:x b:1]')
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "<nil>"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + " ".join(text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{text(value[k])}" for k in sorted(value)) + "]"
    return str(value)
