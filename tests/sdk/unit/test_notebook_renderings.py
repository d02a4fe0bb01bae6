"""What a cell shows, rendered without a kernel: the text/plain and text/html of a status that says the
cluster does not exist, of what apply() returns, of a job's status, of the cluster's box before anything
was read, and of a starting cluster whose head KubeRay reports as "Unknown"."""

from __future__ import annotations

import pickle

import pytest

from rayqueue_sdk.admission.cluster import ErrorKind, JobPhase, Verdict
from rayqueue_sdk.cluster.applied import AppliedCluster
from rayqueue_sdk.cluster.status import ClusterPhase, ClusterStatus, not_found_status, status_from
from rayqueue_sdk.display.console import render_text, status_panel
from rayqueue_sdk.display.controls import ClusterControls
from rayqueue_sdk.display.live import WIDGET_VIEW
from rayqueue_sdk.display.progress import NotebookProgress
from rayqueue_sdk.display.text import status_text
from rayqueue_sdk.display.widgets import clusters_html, status_html
from rayqueue_sdk.errors import QueueNotFoundError
from rayqueue_sdk.job.status import RayJobStatus


def fits(text: str) -> None:
    assert all(len(line) <= 80 for line in text.splitlines()), text


def starting(head_pod: dict | None = None, reason: str = "Unknown") -> ClusterStatus:
    rc = {
        "metadata": {"name": "ws", "namespace": "ds"},
        "spec": {"suspend": False},
        "status": {
            "desiredWorkerReplicas": 2,
            "availableWorkerReplicas": 0,
            "conditions": [
                {"type": "HeadPodReady", "status": "False", "reason": reason, "message": ""},
                {"type": "RayClusterProvisioned", "status": "False", "reason": "RayClusterPodsProvisioning"},
            ],
        },
    }
    return status_from(rc, None, head_pod=head_pod)


@pytest.mark.parametrize(
    ("head_pod", "reason", "said"),
    [
        (None, "Unknown", "head pod not ready yet"),
        ({"status": {"phase": "Pending"}}, "Unknown", "head pod pending"),
        (
            {"status": {"phase": "Pending", "containerStatuses": [{"state": {"waiting": {"reason": "X"}}}]}},
            "Unknown",
            "head pod pending (X)",
        ),
        ({"status": {"phase": "Running"}}, "Unknown", "head pod running, Ray not ready yet"),
        (None, "HeadPodNotFound", "Head Pod not found"),
    ],
)
def test_a_starting_cluster_never_reads_unknown(head_pod: dict | None, reason: str, said: str) -> None:
    st = starting(head_pod, reason)
    assert st.phase is ClusterPhase.STARTING
    renderings = [
        status_text(st),
        status_html(st),
        clusters_html([st]),
        render_text(status_panel(st), width=80),
    ]
    for text in renderings:
        assert "Unknown" not in text, text
    if reason == "Unknown":
        assert st.explanation == f"starting, 0/2 workers ready: {said}"
        assert status_text(st).splitlines()[0] == "ds/ws: starting"


def test_not_found_is_a_status_with_the_fix() -> None:
    st = not_found_status("ws", "ds", ["a", "b"])
    assert (st.phase, st.ready, st.phase.value) == (ClusterPhase.NOT_FOUND, False, "not found")
    text = status_text(st)
    assert text.splitlines()[0] == "ds/ws: not found"
    assert "call cluster.apply() to create it (there: a, b)" in " ".join(text.split())
    assert "call cluster.apply()" in status_html(st)
    fits(text)


def test_what_apply_returns_is_the_stored_dict_shown_in_two_lines() -> None:
    stored = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "ws", "namespace": "ds", "uid": "u-1", "generation": 3},
        "spec": {"headGroupSpec": {}, "workerGroupSpecs": [{"groupName": "g"}] * 20},
    }
    applied = AppliedCluster(stored)
    assert applied == stored and applied["metadata"]["uid"] == "u-1" and dict(applied) == stored
    text = repr(applied)
    assert text.splitlines() == [
        "ds/ws: applied (RayCluster generation 3)",
        "  cluster.wait_ready() waits until it is ready; cluster.status() reads it",
    ]
    assert "u-1" in applied._repr_html_() and "apiVersion" not in applied._repr_html_()
    assert pickle.loads(pickle.dumps(applied)) == stored
    shown: list[int] = []
    box = AppliedCluster(stored, show_box=lambda: shown.append(1) or True)
    box._ipython_display_()  # the cluster's box is the display: nothing else is shown
    assert shown == [1]


def test_a_jobs_status_is_short_and_keeps_its_fields() -> None:
    st = RayJobStatus(
        "nightly",
        "ds",
        JobPhase.QUEUED,
        "queued in LocalQueue 'batch' at position 2: couldn't assign flavors to pod set head",
        reason="Pending",
        position=2,
        owns_cluster=True,
        verdict=Verdict.WAIT,
        error_kind=ErrorKind.NONE,
    )
    text = repr(st)
    assert text.splitlines()[0] == "ds/nightly: queued (Pending)"
    assert "RayJobStatus(" not in text and "Verdict" not in text and "error_kind" not in text
    assert "position 2" in text
    assert "queued (Pending)" in st._repr_html_() and "rayqueue-job" in st._repr_html_()
    assert (st.verdict, st.error_kind, st.to_dict()["phase"]) == (Verdict.WAIT, ErrorKind.NONE, "queued")


def test_the_box_before_anything_is_read_then_on_click() -> None:
    calls: list[object] = []

    def apply(wait: bool) -> None:
        calls.append(("apply", wait))
        box.update(ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready (1/1 workers ready)"))

    box = ClusterControls(
        None,
        intro=["ds/ws: not read from the server yet", "  queue team; workers 1 x small; 0 GPUs"],
        apply=apply,
        down=lambda: calls.append("down") or True,
        label="ds/ws",
    )
    bundle = box.bundle()
    assert WIDGET_VIEW in bundle and bundle["text/plain"].startswith("ds/ws: not read from the server yet")
    assert "queue team" in bundle["text/html"] and calls == []
    box.wait_check.value = True
    box.apply_button.click()
    assert calls == [("apply", True)]
    plain = box.bundle()["text/plain"]
    assert plain.splitlines()[0] == "ds/ws: ready" and plain.splitlines()[-1] == "  apply: ds/ws ready"
    box.down_button.click()
    assert calls == [("apply", True)] and "Delete RayCluster" in box.confirm_text.value
    box.cancel_button.click()
    box.down_button.click()
    box.confirm_button.click()
    assert calls[-1] == "down" and "down: ds/ws deleted" in box.bundle()["text/html"]


def test_a_failed_click_says_why_on_the_box() -> None:
    def apply(wait: bool) -> None:
        raise QueueNotFoundError("gpu-queue", ["team"], namespace="ds")

    box = ClusterControls(None, intro=["ds/ws: not read from the server yet"], apply=apply, down=lambda: True)
    box.apply_button.click()
    said = box.bundle()["text/plain"].splitlines()[-1]
    assert "LocalQueue 'gpu-queue' does not exist" in said and "Fix:" in said
    assert not box.apply_button.disabled


def test_the_wait_line_ends_as_the_card() -> None:
    line = NotebookProgress(widget=False)
    line.update(ClusterStatus("ws", "ds", ClusterPhase.QUEUED, False, "queued at position 0"), show=False)
    ready = ClusterStatus(
        "ws", "ds", ClusterPhase.READY, True, "ready (1/1 workers ready)", dashboard_url="http://h:8265"
    )
    assert line.live.settle is not None and line.live.settle(ready)
    assert line.text.splitlines()[0] == "ds/ws: ready" and "waited" in line.text
    assert "http://h:8265" in line.html


def test_the_card_shows_the_estimate_rows_only_while_there_is_an_estimate() -> None:
    from datetime import UTC, datetime

    from rayqueue_sdk.admission.eta import AdmissionEstimate

    ready = ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready")
    assert "estimated admission" not in status_html(ready) and "basis" not in status_html(ready)
    eta = AdmissionEstimate(
        datetime(2026, 1, 1, 14, 2, tzinfo=UTC), None, "first's idle policy releases 2 GPUs"
    )
    queued = ClusterStatus("ws", "ds", ClusterPhase.QUEUED, False, "queued", position=0, eta=eta)
    html = status_html(queued)
    assert "estimated admission" in html and "first&#x27;s idle policy releases 2 GPUs" in html
