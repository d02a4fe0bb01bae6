"""The examples in the data layer's docstrings run and hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "store",
    "registry",
    "resourcetypes",
    "builtintypes",
    "crds",
    "conversion",
    "discoverydocs",
    "selectors",
    "patch",
    "patchcore",
    "rfcpatch",
    "strategic",
    "ssa",
    "schema",
    "fielderrors",
    "fastcheck",
    "pruning",
    "celrules",
    "objectmeta",
    "persistence",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"rayqueue_sdk.local.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
