"""The docstring examples of every module of both packages run, and print what they say.

The modules are found with :mod:`pkgutil`, so a new module's examples run without being listed here. A
module that exports names (a non-empty ``__all__``) must show at least one example, unless it is listed
in :data:`NO_EXAMPLE` with the reason.
"""

from __future__ import annotations

import doctest
import importlib

import pytest
from project_modules import all_modules

# Modules whose exported names cannot show a runnable example, and why.
NO_EXAMPLE = {
    # pytest fixtures: they run under pytest, the suite's tests/local use them.
    "rayqueue_local.pytest_plugin",
    # `rayqueue local up`: serves until interrupted.
    "rayqueue_local.serve",
    # Watch's public home is rayqueue_local.storage.store (its __module__), whose doctests run its example.
    "rayqueue_local.storage.watch",
}


MODULES = all_modules()


def test_every_module_is_found() -> None:
    """pkgutil sees the subpackages' modules too (a broken walk would make the tests below vacuous)."""
    assert "rayqueue_sdk.config.models" in MODULES
    assert "rayqueue_local.controllers.kueue.lifecycle" in MODULES
    assert len(MODULES) > 100


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests(name: str) -> None:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    for test in finder.find(module, name):
        runner.run(test, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, "".join(report)
    if getattr(module, "__all__", None) and name not in NO_EXAMPLE:
        assert result.attempted > 0, f"{name} exports {module.__all__} but shows no example"
