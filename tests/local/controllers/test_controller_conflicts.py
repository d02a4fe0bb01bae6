"""A controller whose write races another one (409 Conflict) reads again and retries, as client-go's
controllers requeue on a conflict, and logs nothing at ERROR: in a notebook the embedded plane's errors
reach the cell's output (the quickstart in JupyterLab once showed a RayCluster status write's conflict)."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

from rayqueue_local.controllers.base import QueueController
from rayqueue_local.storage.store import Store, StoreError


class Racing(QueueController):
    name, watches = "racing", ("configmaps",)

    def __init__(self, failures: list[StoreError]) -> None:
        super().__init__()
        self.failures = failures
        self.tries = 0
        self.done = threading.Event()

    def resync(self) -> list[Any]:
        return [] if self.tries else ["item"]

    def reconcile(self, item: Any) -> None:
        self.tries += 1
        if self.failures:
            raise self.failures.pop(0)
        self.done.set()


def test_a_conflict_is_retried_and_not_logged_as_an_error(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="rayqueue_local.controllers.base")
    ctrl = Racing([StoreError(409, "Conflict", "the object has been modified")])
    ctrl.start(Store())
    try:
        assert ctrl.done.wait(10), "the conflicted item was never retried"
    finally:
        ctrl.stop()
    assert ctrl.tries == 2
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_another_store_error_is_still_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="rayqueue_local.controllers.base")
    ctrl = Racing([StoreError(422, "Invalid", "bad status")])
    ctrl.start(Store())
    try:
        errors = lambda: [r for r in caplog.records if r.levelno >= logging.ERROR]  # noqa: E731
        for _ in range(100):
            if errors():
                break
            threading.Event().wait(0.05)
        assert errors() and "reconcile of 'item' failed" in errors()[0].getMessage()
    finally:
        ctrl.stop()
