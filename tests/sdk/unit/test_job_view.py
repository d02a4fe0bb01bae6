"""The job view (display/jobs.py): text, HTML and a rich panel of one job's status and log tail, and the
notebook card's Stop button (disabled when over or refused, errors shown on the card)."""

from __future__ import annotations

import pytest

from rayqueue_sdk.admission.cluster import JobPhase
from rayqueue_sdk.display.console import render_text
from rayqueue_sdk.display.jobs import LOG_TAIL_LINES, JobCard, job_html, job_panel, job_text
from rayqueue_sdk.errors import ForbiddenError
from rayqueue_sdk.job.status import RayJobStatus

RUNNING = RayJobStatus(
    "final-training-run",
    "your-namespace",
    JobPhase.RUNNING,
    "running on RayCluster 'final-training-run-x7k2p'",
    cluster_name="final-training-run-x7k2p",
    job_id="final-training-run-abc12",
    owns_cluster=True,
)
LOGS = "\n".join(f"epoch {i}: loss={1 / (i + 1):.4f} " + "x" * 120 for i in range(40))


def test_text_and_html_show_the_last_lines_only() -> None:
    text = job_text(RUNNING, LOGS)
    assert text.splitlines()[0] == "your-namespace/final-training-run: running"
    assert "epoch 39:" in text and "epoch 27:" not in text and text.count("epoch") == LOG_TAIL_LINES
    html = job_html(RUNNING, LOGS + "\n<script>alert(1)</script>")
    assert "<script>" not in html and "&lt;script&gt;" in html and ">running</span>" in html


def test_the_console_panel_fits_80_columns() -> None:
    queued = RayJobStatus(
        "j",
        "ds",
        JobPhase.QUEUED,
        "queued in LocalQueue 'batch' at position 3: couldn't assign flavors to pod set head: "
        "insufficient unused quota for nvidia.com/gpu in flavor a100, 4 more needed",
        reason="Pending",
        position=3,
    )
    for status, logs in ((RUNNING, LOGS), (queued, None)):
        out = render_text(job_panel(status, logs), width=120)
        assert max(len(line) for line in out.splitlines()) <= 80, out
    assert "queued (Pending)" in render_text(job_panel(queued), width=80)


def test_stop_is_disabled_when_over_or_refused_and_errors_stay_on_the_card() -> None:
    pytest.importorskip("ipywidgets")

    def refuse() -> bool:
        raise ForbiddenError(403, "Forbidden", "workloads is forbidden", verb="patch", resource="workloads")

    card = JobCard(RUNNING, LOGS, stop=refuse, permission=lambda status: None)
    assert not card.stop_button.disabled
    card.stop_button.click()
    assert (
        "stop your-namespace/final-training-run" in card.message.value and "forbidden" in card.message.value
    )
    bundle = card.bundle()
    assert {"text/plain", "text/html", "application/vnd.jupyter.widget-view+json"} <= set(bundle)
    assert "forbidden" in bundle["text/html"]

    done = RayJobStatus("final-training-run", "your-namespace", JobPhase.SUCCEEDED, "the job succeeded")
    card.update(done, "all done")
    assert card.stop_button.disabled and card.stop_button.tooltip == "the job is succeeded"
    assert card.bundle()["text/plain"].endswith("    all done")

    def refuse_check(status: object) -> str | None:
        raise ForbiddenError(403, "Forbidden", "selfsubjectaccessreviews is forbidden")

    unknown = JobCard(RUNNING, None, stop=lambda: True, permission=refuse_check)  # a failed check: enabled
    assert not unknown.stop_button.disabled and "permissions unknown" in unknown.message.value


def test_the_permission_is_asked_again_when_the_job_starts_running() -> None:
    pytest.importorskip("ipywidgets")
    asked: list[str] = []

    def permission(status: object) -> str | None:
        phase = status.phase  # type: ignore[attr-defined]
        asked.append(phase.value)
        return None if phase is JobPhase.RUNNING else "may not patch workloads.kueue.x-k8s.io"

    queued = RayJobStatus("j", "ds", JobPhase.QUEUED, "queued", owns_cluster=True)
    card = JobCard(queued, None, stop=lambda: True, permission=permission)
    assert card.stop_button.disabled and "may not patch" in card.stop_button.tooltip
    card.update(RUNNING)
    assert not card.stop_button.disabled and asked == ["queued", "running"]
