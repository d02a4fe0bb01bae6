"""Every exception class of rayqueue_local derives from rayqueue_local.errors.LocalControlPlaneError."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import rayqueue_local
from rayqueue_local.errors import LocalControlPlaneError


def _exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined anywhere in rayqueue_local (each module imported)."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(rayqueue_local.__path__, "rayqueue_local."):
        module = importlib.import_module(info.name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__.startswith("rayqueue_local"):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


def test_every_exception_class_derives_from_the_base() -> None:
    classes = _exception_classes()
    assert len(classes) >= 10  # the walk found them (StoreError, PatchError, HTTPError, ...)
    strays = sorted(name for name, cls in classes.items() if not issubclass(cls, LocalControlPlaneError))
    assert strays == []


def test_stdlib_mixins_stay() -> None:
    from rayqueue_local.apimachinery.patchcore import PatchError
    from rayqueue_local.apimachinery.selectors import SelectorError
    from rayqueue_local.runtime.prometheus import PrometheusNotInstalledError

    assert issubclass(PatchError, ValueError) and issubclass(SelectorError, ValueError)
    assert issubclass(PrometheusNotInstalledError, FileNotFoundError)
