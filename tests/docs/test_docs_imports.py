"""Every name the documentation's code blocks import resolves, and every class a block calls is imported on
its page: a reader who copies an example gets no ImportError or NameError from our side."""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
_FENCE = re.compile(r"^\s*```(\w*)")
_CALLED = re.compile(r"(?<![\w.])([A-Z][A-Za-z0-9]*)\(")


def python_blocks(page: Path) -> list[str]:
    """The page's fenced blocks in Python (```python, or bare fences whose lines import or call)."""
    blocks: list[str] = []
    lang: str | None = None
    lines: list[str] = []
    for line in page.read_text(encoding="utf-8").splitlines():
        fence = _FENCE.match(line)
        if fence:
            if lang is None:
                lang, lines = fence.group(1), []
            else:
                if lang in ("python", "py", "pycon"):
                    blocks.append("\n".join(lines))
                lang = None
            continue
        if lang is not None:
            lines.append(line)
    return blocks


def imports(block: str) -> list[tuple[str, str, str]]:
    """``(module, name, bound)`` for each ``from M import N [as B]`` and ``(M, "", B)`` for ``import M``
    in a block (each statement parsed on its own: the blocks hold ``...`` placeholders)."""
    found: list[tuple[str, str, str]] = []
    for line in block.splitlines():
        text = line.strip()
        if not text.startswith(("from ", "import ")):
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and node.module:
                found += [(node.module, a.name, a.asname or a.name) for a in node.names]
            elif isinstance(node, ast.Import):
                found += [(a.name, "", a.asname or a.name.split(".")[0]) for a in node.names]
    return found


def test_the_pages_have_python_blocks_that_import_the_sdk() -> None:
    modules = {m for page in PAGES for block in python_blocks(page) for m, _, _ in imports(block)}
    assert "rayqueue_sdk" in modules and "rayqueue_local" in modules
    scale = [n for b in python_blocks(ROOT / "docs" / "scale-to-zero.md") for _, n, _ in imports(b)]
    assert {"IdlePolicy", "PrometheusSource", "PreStopHook", "IdleState"} <= set(scale)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_imported_name_resolves(page: Path) -> None:
    for block in python_blocks(page):
        for module, name, _ in imports(block):
            if not module.startswith(("rayqueue_sdk", "rayqueue_local")):
                continue
            statement = f"from {module} import {name}" if name else f"import {module}"
            exec(statement, {})  # raises ImportError (the reader's error) when a name does not resolve


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_class_a_block_calls_is_imported_on_its_page(page: Path) -> None:
    blocks = python_blocks(page)
    bound = {b for block in blocks for _, _, b in imports(block)}
    for block in blocks:
        for called in _CALLED.findall(block):
            assert called in bound or hasattr(builtins, called), f"{page.name}: {called}(...) is not imported"
