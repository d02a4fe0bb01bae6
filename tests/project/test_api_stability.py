"""docs/api-stability.md states the stable API: the facade (``rayqueue_sdk.__all__``) plus the modules the
guides document; every other module of the SDK is listed there as internal. These tests keep both lists
true: the stable table is exactly the modules the guides name (architecture.md, the maintainers' map, and
the stability page itself excepted), and stable plus internal is every module of the package, once."""

from __future__ import annotations

import re
from pathlib import Path

from project_modules import all_modules

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGE = DOCS / "api-stability.md"
#: Pages that name modules without documenting them for users.
NOT_GUIDES = {"architecture.md", "api-stability.md"}
SDK = "rayqueue_sdk"


def sdk_modules() -> set[str]:
    """Every module of the SDK, its packages included."""
    return {m for m in all_modules() if m == SDK or m.startswith(SDK + ".")}


def modules_named(text: str, modules: set[str]) -> set[str]:
    """The modules ``text`` names: each dotted ``rayqueue_sdk...`` path, cut to its longest prefix that is
    a module (``rayqueue_sdk.cluster.observe.GroupSummary`` names ``rayqueue_sdk.cluster.observe``); the
    bare package (the facade) is not a module path to list."""
    found = set()
    for path in re.findall(r"rayqueue_sdk(?:\.[A-Za-z_]\w*)*", text):
        parts = path.split(".")
        for end in range(len(parts), 0, -1):
            name = ".".join(parts[:end])
            if name in modules:
                found.add(name)
                break
    return found - {SDK}


def stable_listed(page: str) -> set[str]:
    """The modules of the page's "Stable" table (first column)."""
    section = page.split("## Stable", 1)[1].split("## Internal", 1)[0]
    return set(re.findall(r"^\| `(rayqueue_sdk[\w.]*)` \|", section, re.M))


def internal_listed(page: str) -> list[str]:
    """The modules of the page's "Internal" table: each package's short names, made whole (a list, so a
    module listed twice shows)."""
    section = page.split("## Internal", 1)[1]
    out = []
    for package, names in re.findall(r"^\| `(rayqueue_sdk[\w.]*)` \| (.+) \|$", section, re.M):
        out += [f"{package}.{name}" for name in re.findall(r"`(\w+)`", names)]
    return out


def guides_name() -> set[str]:
    modules = sdk_modules()
    named: set[str] = set()
    for page in sorted(DOCS.glob("*.md")):
        if page.name not in NOT_GUIDES:
            named |= modules_named(page.read_text(encoding="utf-8"), modules)
    return named


def test_the_readers_can_fail() -> None:
    modules = {"rayqueue_sdk", "rayqueue_sdk.cluster", "rayqueue_sdk.cluster.observe"}
    text = (
        "`rayqueue_sdk.cluster.observe.GroupSummary`, `from rayqueue_sdk import Cluster`, rayqueue_sdk.nope"
    )
    assert modules_named(text, modules) == {"rayqueue_sdk.cluster.observe"}
    page = (
        "## Stable\n| `rayqueue_sdk.a.b` | x |\n## Internal\n"
        "| `rayqueue_sdk` | `a`, `c` |\n| `rayqueue_sdk.a` | `d` |\n"
    )
    assert stable_listed(page) == {"rayqueue_sdk.a.b"}
    assert internal_listed(page) == ["rayqueue_sdk.a", "rayqueue_sdk.c", "rayqueue_sdk.a.d"]


def test_the_stable_modules_are_those_the_guides_document() -> None:
    named = guides_name()
    assert "rayqueue_sdk.queues.timeline" in named  # the reader sees the guides (not vacuous)
    listed = stable_listed(PAGE.read_text(encoding="utf-8"))
    assert listed == named, (
        f"documented in a guide but not listed stable: {sorted(named - listed)}; "
        f"listed stable but no guide documents it: {sorted(listed - named)}"
    )


def test_every_other_module_is_listed_internal_once() -> None:
    page = PAGE.read_text(encoding="utf-8")
    internal = internal_listed(page)
    assert len(internal) == len(set(internal)), "a module is listed twice"
    stable = stable_listed(page)
    assert not stable & set(internal), f"listed both stable and internal: {sorted(stable & set(internal))}"
    expected = sdk_modules() - stable - {SDK}
    assert set(internal) == expected, (
        f"not listed (add it to docs/api-stability.md): {sorted(expected - set(internal))}; "
        f"listed but no such module: {sorted(set(internal) - expected)}"
    )


def test_the_facade_is_stated_stable() -> None:
    assert "`rayqueue_sdk.__all__`" in PAGE.read_text(encoding="utf-8").split("## Internal")[0]
