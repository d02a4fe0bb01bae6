"""The examples in the data layer's docstrings run and hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "storage.store",
    "registry.registry",
    "registry.resourcetypes",
    "registry.builtintypes",
    "registry.crds",
    "registry.conversion",
    "registry.discoverydocs",
    "apimachinery.selectors",
    "apimachinery.patch",
    "apimachinery.patchcore",
    "apimachinery.rfcpatch",
    "apimachinery.strategic",
    "apimachinery.ssa",
    "registry.schema",
    "apimachinery.fielderrors",
    "registry.fastcheck",
    "registry.pruning",
    "registry.celrules",
    "apimachinery.objectmeta",
    "storage.persistence",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"rayqueue_local.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
