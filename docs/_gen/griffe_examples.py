"""A griffe extension for the API reference: read the project's ``Example:`` sections as examples.

The docstrings use Google style with ``Example:`` (singular), which griffe's Google parser takes for
an admonition and renders as Markdown, so a doctest such as ``d["spec"]["x"]`` reads as a Markdown
reference link. Renaming the section to ``Examples:`` at load time makes griffe render doctests as code.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_EXAMPLE = re.compile(r"^(\s*)Example:\s*$", re.MULTILINE)


class ExampleSections(griffe.Extension):
    """Rename ``Example:`` section titles to ``Examples:`` in every loaded docstring."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        _rename(obj)

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        _rename(obj)


def _rename(obj: griffe.Object) -> None:
    if obj.docstring is not None:
        obj.docstring.value = _EXAMPLE.sub(r"\1Examples:", obj.docstring.value)
