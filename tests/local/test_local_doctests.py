"""Every example in rayqueue_local's docstrings runs and holds (one test per module).

The store's parts (gc, patching, reads, watchlog, writes) document ``Store`` methods; their examples
run with ``Store`` in scope, as the store module's own do.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import rayqueue_local
from rayqueue_local.storage.store import Store

MODULES = sorted(info.name for info in pkgutil.walk_packages(rayqueue_local.__path__, "rayqueue_local."))
STORE_PARTS = {f"rayqueue_local.storage.{part}" for part in ("gc", "patching", "reads", "watchlog", "writes")}


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    extra = {"Store": Store} if name in STORE_PARTS else None
    result = doctest.testmod(module, extraglobs=extra, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
