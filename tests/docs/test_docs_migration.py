"""docs/migration.md's table covers every public name of codeflare-sdk (codeflare_names) and of
rayqueue_sdk (its ``__all__``), with a known status, and every name on our side exists."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from codeflare_names import CODEFLARE_NAMES, NOTEBOOK_IMPORTS

import rayqueue_sdk

PAGE = Path(__file__).resolve().parents[2] / "docs" / "migration.md"
STATUSES = {"same", "renamed", "different behaviour", "not provided", "new"}
ROW = re.compile(r"^\| (`[^`]+`|—) \| (`[^`]+`|—) \| ([a-z ]+) \|(.*)\|$", re.MULTILINE)


def table() -> list[tuple[str | None, str | None, str, str]]:
    rows = []
    for theirs, ours, status, why in ROW.findall(PAGE.read_text()):
        rows.append((theirs.strip("`") if theirs != "—" else None, ours.strip("`") if ours != "—" else None,
                     status, why.strip()))  # fmt: skip
    return rows


def resolve(name: str) -> object:
    """A name on our side: a root name of rayqueue_sdk, or a dotted path to a module attribute."""
    if "." not in name:
        return getattr(rayqueue_sdk, name)
    module, _, attr = name.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def test_the_table_is_read() -> None:
    rows = table()
    assert len(rows) >= len(CODEFLARE_NAMES) + 10
    assert ("get_cluster", "get_cluster", "same") in [r[:3] for r in rows]


def test_every_codeflare_name_has_exactly_one_row() -> None:
    theirs = [t for t, _, _, _ in table() if t]
    assert sorted(theirs) == sorted(CODEFLARE_NAMES)


def test_every_rayqueue_sdk_name_is_in_the_table() -> None:
    ours = {o for _, o, _, _ in table() if o}
    missing = [n for n in rayqueue_sdk.__all__ if n not in ours]
    assert not missing, f"add a row for {missing} to docs/migration.md"


@pytest.mark.parametrize("row", table(), ids=lambda r: str(r[0] or r[1]))
def test_each_row_has_a_status_a_reason_and_a_real_name(row: tuple[str | None, str | None, str, str]) -> None:
    theirs, ours, status, why = row
    assert status in STATUSES
    if ours:
        resolve(ours)  # raises when the name does not exist
    if status == "not provided":
        assert ours is None and why.strip(), "say why, and what to use instead"
    if status in ("renamed", "different behaviour"):
        assert why.strip(), f"{theirs}: say what changed"
    if status == "same":
        assert ours in (theirs, f"rayqueue_sdk.{theirs}")
    if status == "new":
        assert theirs is None and ours in rayqueue_sdk.__all__


def same_name_on_our_side(theirs: str) -> bool:
    """Whether codeflare's name imports from the same place under rayqueue_sdk (``ray.rayjobs.X`` from
    ``rayqueue_sdk.ray.rayjobs``, a root name from the root)."""
    try:
        resolve(theirs if "." not in theirs else f"rayqueue_sdk.{theirs}")
    except (AttributeError, ImportError):
        return False
    return True


def test_every_row_that_keeps_the_name_resolves_under_it() -> None:
    """A row whose right column is codeflare's own name (same, different behaviour) must import as such; the
    other rows (renamed, not provided) must not claim it."""
    for theirs, ours, _, _ in table():
        if theirs is None:
            continue
        keeps = ours in (theirs, f"rayqueue_sdk.{theirs}")
        assert same_name_on_our_side(theirs) == keeps, theirs


def test_how_many_codeflare_names_resolve_is_what_the_page_says() -> None:
    resolved = [n for n in CODEFLARE_NAMES if same_name_on_our_side(n)]
    said = re.search(r"(\d+) of the (\d+) peer names resolve under the same name", PAGE.read_text())
    assert said, "docs/migration.md states how many codeflare names resolve"
    assert (int(said[1]), int(said[2])) == (len(resolved), len(CODEFLARE_NAMES))


@pytest.mark.parametrize("line", NOTEBOOK_IMPORTS)
def test_every_import_line_of_the_peer_notebooks_works_with_the_package_renamed(line: str) -> None:
    """``from codeflare_sdk... import A, B`` -> ``from rayqueue_sdk... import A, B`` runs."""
    exec(line.replace("codeflare_sdk", "rayqueue_sdk"), {})
