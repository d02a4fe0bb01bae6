"""The local plane catches errors by type: an ``except Exception`` (or ``BaseException``) handler in
``rayqueue_local`` either re-raises or says on its line why it must catch everything."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

from project_modules import all_modules

_BROAD = {"Exception", "BaseException"}


def broad_handlers_without_reason(source: str) -> list[int]:
    """The lines of the broad handlers in ``source`` that neither re-raise nor carry a comment.

    >>> broad_handlers_without_reason("try:\\n    f()\\nexcept Exception:\\n    pass\\n")
    [3]
    >>> broad_handlers_without_reason("try:\\n    f()\\nexcept Exception:  # why\\n    pass\\n")
    []
    >>> broad_handlers_without_reason("try:\\n    f()\\nexcept BaseException:\\n    g()\\n    raise\\n")
    []
    >>> broad_handlers_without_reason("try:\\n    f()\\nexcept KeyError:\\n    pass\\n")
    []
    """
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ExceptHandler) or node.type is None:
            continue
        names = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
        if not any(isinstance(n, ast.Name) and n.id in _BROAD for n in names):
            continue
        reraises = isinstance(node.body[-1], ast.Raise) and node.body[-1].exc is None
        if not reraises and "#" not in lines[node.lineno - 1]:
            found.append(node.lineno)
    return found


def test_every_broad_except_in_the_local_plane_says_why() -> None:
    offenders = []
    for name in all_modules():
        if not name.startswith("rayqueue_local"):
            continue
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None
        path = Path(spec.origin)
        offenders += [f"{name}:{line}" for line in broad_handlers_without_reason(path.read_text())]
    assert offenders == []
