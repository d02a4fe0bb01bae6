"""The public surface is exactly what rayqueue_sdk.__all__ lists, and every name resolves."""

from __future__ import annotations

import importlib
import subprocess
import sys

import rayqueue_sdk


def test_all_matches_export_table() -> None:
    assert sorted(rayqueue_sdk.__all__) == sorted(rayqueue_sdk._EXPORTS)
    assert len(rayqueue_sdk.__all__) == len(set(rayqueue_sdk.__all__))


def test_every_public_name_resolves_to_its_module() -> None:
    for name in rayqueue_sdk.__all__:
        obj = getattr(rayqueue_sdk, name)
        module = importlib.import_module(rayqueue_sdk._EXPORTS[name])
        assert getattr(module, name) is obj, name


def test_every_public_name_has_a_docstring_with_an_example() -> None:
    for name in rayqueue_sdk.__all__:
        doc = getattr(rayqueue_sdk, name).__doc__ or ""
        assert doc.strip(), f"{name} has no docstring"
        assert "Example" in doc or ">>>" in doc, f"{name}'s docstring has no example"


def test_unknown_attribute_raises_attribute_error() -> None:
    try:
        rayqueue_sdk.NoSuchThing  # noqa: B018
    except AttributeError as err:
        assert "NoSuchThing" in str(err)
    else:
        raise AssertionError("expected AttributeError")


def test_import_is_light() -> None:
    """Importing the package (and touching a public name) must not pull in heavy modules."""
    code = (
        "import sys, rayqueue_sdk; rayqueue_sdk.ConfigError; "
        "heavy = [m for m in ('ray', 'kubernetes', 'ipywidgets', 'pandas', 'rich') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
