"""The modules of both packages, for the project-wide tests (found with pkgutil, so a new one is checked)."""

from __future__ import annotations

import importlib
import pkgutil

PACKAGES = ("rayqueue_sdk", "rayqueue_local")


def all_modules() -> list[str]:
    """Every module of both packages, the packages themselves included, sorted."""
    names = []
    for package in PACKAGES:
        root = importlib.import_module(package)
        names.append(package)
        names.extend(info.name for info in pkgutil.walk_packages(root.__path__, package + "."))
    return sorted(names)
