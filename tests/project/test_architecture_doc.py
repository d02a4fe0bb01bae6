"""docs/architecture.md names only modules that exist: every `rayqueue_sdk.x.y` / `rayqueue_local.x.y` in
backticks must be importable as a module or package (the doc is a map of the code; it must not drift)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
NAMED = re.compile(r"`((?:rayqueue_sdk|rayqueue_local)(?:\.[A-Za-z_][A-Za-z0-9_]*)*)`")


def named_modules(text: str) -> list[str]:
    """The dotted module paths written in backticks in ``text``, in order, without repeats."""
    return list(dict.fromkeys(NAMED.findall(text)))


def test_finder_reads_backticked_module_paths() -> None:
    text = "`rayqueue_sdk.kube` and `rayqueue_local.storage.store`, not rayqueue_sdk.bare or `Cluster`"
    assert named_modules(text) == ["rayqueue_sdk.kube", "rayqueue_local.storage.store"]


def test_every_module_the_doc_names_exists() -> None:
    names = named_modules(DOC.read_text())
    assert len(names) > 30, "the map names the packages' layers and the modules of the request flow"
    missing = [name for name in names if importlib.util.find_spec(name) is None]
    assert not missing, f"docs/architecture.md names modules that do not exist: {missing}"
