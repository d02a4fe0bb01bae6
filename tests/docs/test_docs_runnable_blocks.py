"""Every code block marked runnable in the docs (```` ```python {.runnable} ````) runs, page by page, in
order, in one namespace per page, against the local control plane: the docs cannot drift from the code.

Getting started runs from nothing, as a reader would: its own blocks start the control plane, log in and
run a job. Blocks on other pages continue from there (``plane`` is the docs tests' shared control plane).
Blocks are found and run with Sybil (its Markdown lexer and Python evaluator).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from sybil import Sybil
from sybil.evaluators.python import PythonEvaluator
from sybil.parsers.markdown import CodeBlockParser

DOCS = Path(__file__).resolve().parents[2] / "docs"
MARK = "python {.runnable}"
SYBIL = Sybil(parsers=[CodeBlockParser(language=MARK, evaluator=PythonEvaluator())], path=str(DOCS))
PAGES = sorted(p for p in DOCS.glob("*.md") if MARK in p.read_text())


def run_page(page: Path, namespace: dict[str, Any]) -> int:
    """Run the runnable blocks of ``page`` in order in ``namespace``; the number of blocks run."""
    document = SYBIL.parse(page)
    document.namespace.update(namespace)
    count = 0
    try:
        for example in document:
            example.evaluate()
            count += 1
    finally:
        namespace.update(document.namespace)
    return count


def test_the_finder_sees_the_marked_blocks_and_only_them(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("```python {.runnable}\nx = 1\n```\n\n```python\nraise SystemExit\n```\n"
                    "```python {.runnable}\nx += 1\n```\n")  # fmt: skip
    ns: dict[str, Any] = {}
    assert run_page(page, ns) == 2 and ns["x"] == 2
    assert {p.name for p in PAGES} >= {"getting-started.md", "concepts.md", "migration.md"}


@pytest.mark.slow
def test_getting_started_takes_a_reader_from_nothing_to_a_job(tmp_path: Path) -> None:
    namespace: dict[str, Any] = {}
    cwd = os.getcwd()
    os.chdir(tmp_path)  # a reader's fresh directory
    try:
        assert run_page(DOCS / "getting-started.md", namespace) >= 4
        assert str(namespace["status"].phase) in ("succeeded", "JobPhase.SUCCEEDED")
    finally:
        os.chdir(cwd)
        plane = namespace.get("plane")
        if plane is not None:
            plane.stop()


@pytest.mark.parametrize("page", [p for p in PAGES if p.name != "getting-started.md"], ids=lambda p: p.name)
def test_runnable_blocks_of_every_other_page(page: Path, docs_plane: Any) -> None:
    cwd = os.getcwd()
    try:
        assert run_page(page, {"plane": docs_plane}) >= 1
    finally:
        os.chdir(cwd)
