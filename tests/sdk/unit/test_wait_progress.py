"""The wait's one progress line (display/progress.py) wherever it runs, and the level the wait logs at."""

from __future__ import annotations

import io
import logging

import pytest

from rayqueue_sdk.cluster.status import ClusterPhase, ClusterStatus
from rayqueue_sdk.display.progress import NotebookProgress, progress_log_level, wait_progress
from rayqueue_sdk.errors import ClusterFailedError

QUEUED = ClusterStatus("ws", "ds", ClusterPhase.QUEUED, False, "queued in LocalQueue 'q' at position 0")
STARTING = ClusterStatus("ws", "ds", ClusterPhase.STARTING, False, "admitted; starting, 0/2 workers ready")


def test_plain_lines_one_per_change_and_nothing_when_asked() -> None:
    out = io.StringIO()
    with wait_progress(stream=out) as line:
        line(QUEUED)
        line(STARTING)
    assert out.getvalue().splitlines() == [
        "ds/ws: queued in LocalQueue 'q' at position 0",
        "ds/ws: admitted; starting, 0/2 workers ready",
    ]
    with wait_progress(show=False) as line:
        line(QUEUED)  # nothing, nowhere


def test_the_wait_logs_at_debug_while_a_line_shows_it() -> None:
    assert progress_log_level(None) == progress_log_level(True) == logging.DEBUG
    assert progress_log_level(False) == logging.INFO


def test_the_notebook_line_ends_on_the_error_in_one_line() -> None:
    line = NotebookProgress(widget=False)
    line.update(STARTING, show=False)
    assert line.text.startswith("ds/ws: starting: admitted; starting, 0/2 workers ready (")
    assert "<span style='color:#9a6700;font-weight:bold'>starting</span>" in line.html
    err = ClusterFailedError("ws", "CrashLoopBackOff", "ray-head: back-off restarting\nlast exit 1")
    line.finish(err, show=False)
    assert line.text.startswith(
        "ds/ws: failed: RayCluster ws cannot start (CrashLoopBackOff): ray-head: back"
    )
    assert "troubleshooting" not in line.text and "\n" not in line.text
    line.finish(None, show=False)  # a success leaves the last state
    assert line.text.startswith("ds/ws: failed")


def test_a_card_in_the_cell_is_the_one_output(monkeypatch: pytest.MonkeyPatch) -> None:
    import rayqueue_sdk.display.progress as progress

    monkeypatch.setattr(progress, "is_notebook", lambda: True)
    with wait_progress(card_in_cell=True) as line:
        line(QUEUED)  # no second output (and no IPython needed)
