"""An underscore means "this module's own": no module imports another's underscored name, and no
example hides where doctest never looks (the docstring of a constant, which Python does not keep)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest
from project_modules import PACKAGES, all_modules


def _sources() -> list[Path]:
    files: list[Path] = []
    for package in PACKAGES:
        root = Path(importlib.import_module(package).__file__ or "").parent
        files.extend(sorted(root.rglob("*.py")))
    return files


def _private_imports(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGES):
            found += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    return [name for name in found if not name.rsplit(".", 1)[1].startswith("__")]


def _examples_after_assignments(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for before, after in zip(body, body[1:], strict=False):
            if (
                isinstance(before, ast.Assign | ast.AnnAssign)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
                and ">>>" in after.value.value
            ):
                lines.append(after.lineno)
    return lines


def test_the_checks_see_both_packages_and_can_fail() -> None:
    assert len(_sources()) >= len(all_modules()) - len(PACKAGES)
    bad = ast.parse('from rayqueue_sdk.job.spec import _Hidden\nX = 1\n"""\n>>> X\n1\n"""\n')
    assert _private_imports(bad) == ["rayqueue_sdk.job.spec._Hidden"]
    assert _examples_after_assignments(bad) == [3]


@pytest.mark.parametrize("path", _sources(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_private_name_crosses_a_module_and_no_example_is_dead(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert _private_imports(tree) == [], "import the public name instead (or make it public)"
    assert _examples_after_assignments(tree) == [], "doctest never runs an example under a constant"
