"""Helpers of the pod tests."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

__all__ = ["eventually"]


def eventually(read: Callable[[], Any], ok: Callable[[Any], bool], timeout: float = 60.0) -> Any:
    """Poll ``read`` until ``ok`` holds; fails with the last value read."""
    deadline = time.monotonic() + timeout
    value = read()
    while not ok(value):
        if time.monotonic() > deadline:
            pytest.fail(f"condition not reached in {timeout:g} s; last value: {value!r}")
        time.sleep(0.2)
        value = read()
    return value
