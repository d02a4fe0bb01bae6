"""Console renderings (rich, recorded to text) and the live wait line, without a cluster."""

from __future__ import annotations

import io

from rich.console import Console

from rayqueue_sdk import ClusterPhase, ClusterStatus
from rayqueue_sdk.cluster.observe import summarize
from rayqueue_sdk.display.console import (
    clusters_table,
    details_panel,
    progress_line,
    render_text,
    status_panel,
)
from rayqueue_sdk.display.widgets import clusters_html, status_html

QUEUED = ClusterStatus(
    "second-raycluster",
    "demo",
    ClusterPhase.QUEUED,
    False,
    "queued in LocalQueue 'user-queue' at position 0: couldn't assign flavors to pod set head: "
    "insufficient unused quota for nvidia.com/gpu in flavor default-flavor, 1 more needed [x]",
    queue="user-queue",
    reason="Pending",
    message="couldn't assign flavors to pod set head: insufficient unused quota for nvidia.com/gpu [x]",
    position=0,
    workers_ready=0,
    workers_desired=1,
)
READY = ClusterStatus(
    "first-raycluster",
    "demo",
    ClusterPhase.READY,
    True,
    "ready (1/1 workers ready)",
    queue="user-queue",
    workers_ready=1,
    workers_desired=1,
    dashboard_url="http://127.0.0.1:8265",
)


def test_table_and_panel_say_what_kueue_said() -> None:
    table = render_text(
        clusters_table([READY, QUEUED], {"first-raycluster": 2, "second-raycluster": 2}), width=200
    )
    assert "queued (Pending)" in table and "ready" in table and "http://127.0.0.1:8265" in table
    panel = render_text(status_panel(QUEUED), width=200)
    assert "position" in panel and "[x]" in panel  # Kueue's words verbatim, brackets are not markup
    rc = {
        "metadata": {"name": "ws", "namespace": "ds"},
        "spec": {
            "headGroupSpec": {"rayStartParams": {"num-gpus": "1"}},
            "workerGroupSpecs": [
                {
                    "groupName": "gpu",
                    "replicas": 2,
                    "minReplicas": 0,
                    "maxReplicas": 4,
                    "rayStartParams": {"num-gpus": "1"},
                }
            ],
        },
    }
    details = render_text(details_panel(summarize(rc)), width=120)
    assert "3 GPUs" in details and "0..4" in details


def test_live_line_follows_the_wait() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=200)
    with progress_line(show=True, console=console) as update:
        update(QUEUED)
        update(READY)
    assert "first-raycluster: ready" in out.getvalue()
    with progress_line(show=None) as update:  # not a terminal here: nothing drawn, callback still works
        update(READY)


def test_html_is_escaped_and_links_the_dashboard() -> None:
    html = clusters_html([QUEUED, READY], {})
    assert "<script" not in clusters_html([ClusterStatus("<script>", "d", ClusterPhase.UNKNOWN, False, "x")])
    assert 'href="http://127.0.0.1:8265"' in html and "queued (Pending)" in html
    assert "position" in status_html(QUEUED, 2)
