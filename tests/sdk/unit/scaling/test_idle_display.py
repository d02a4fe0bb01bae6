"""The idle clock as a data scientist reads it: IdleStatus's line, status()'s text, card and panel,
and ScaledToZeroError's message (pure: the policy's state is read from stored objects, no server)."""

from __future__ import annotations

import json
import time
from dataclasses import replace

from rayqueue_sdk.admission.idle import IdleStatus
from rayqueue_sdk.admission.phases import ClusterPhase
from rayqueue_sdk.cluster.observe import summarize
from rayqueue_sdk.cluster.status import ClusterStatus
from rayqueue_sdk.display.console import idle_line, render_text, status_panel
from rayqueue_sdk.display.text import details_text, status_text
from rayqueue_sdk.display.widgets import status_html
from rayqueue_sdk.errors import ScaledToZeroError
from rayqueue_sdk.manifests.scaling import IDLE_STATE_ANNOTATION, POLICY_ANNOTATION
from rayqueue_sdk.scaling.agent import AgentState
from rayqueue_sdk.scaling.policy import idle_status

T0 = 1_780_000_000.0  # a fixed moment; the clock lines are computed against it


def test_the_idle_clock_counts_minutes_of_the_period() -> None:
    st = IdleStatus("keda", "workload", 60, "gpu", idle_since=T0)
    assert st.text(now=T0 + 12 * 60 + 20) == "keda mode: idle 12 of 60 min"
    assert st.text(now=T0 - 5) == "keda mode: idle 0 of 60 min"  # clocks a little apart


def test_a_cluster_in_use_shows_the_policy_and_the_last_decision() -> None:
    st = IdleStatus("reaper", "workload", 30, "jobs", decision="busy: 1 Ray job running")
    assert st.text(now=T0) == "reaper mode: scale to zero after 30 idle min (busy: 1 Ray job running)"


def test_scaled_to_zero_says_when_after_how_long_and_how_to_resume() -> None:
    at = time.mktime(time.strptime("2026-11-26 14:02", "%Y-%m-%d %H:%M")) - time.timezone
    st = IdleStatus("keda", "workload", 60, "gpu", scaled_to_zero=True, scaled_at=at, idle_for=3600)
    assert st.text(now=at + 5) == (
        "keda mode: scaled to zero at 14:02 UTC after 60 idle min; quota released; "
        "cluster.resume() queues it again"
    )


def test_a_suspended_cluster_without_a_queue_says_suspended_not_quota() -> None:
    st = IdleStatus("reaper", "suspend", 5, "gpu", scaled_to_zero=True, hook="succeeded")
    text = st.text(now=T0)
    assert "; suspended;" in text and "quota" not in text and text.endswith("pre-stop hook succeeded")


def _reaper_rc(state: AgentState | None, *, suspend: bool = False, kuberay_state: str = "ready") -> dict:
    annotations = {
        POLICY_ANNOTATION: json.dumps(
            {"mode": "reaper", "mechanism": "suspend", "idle_minutes": 10, "idle_signal": "jobs"}
        )
    }
    if state is not None:
        annotations[IDLE_STATE_ANNOTATION] = json.dumps(state.to_json())
    return {
        "metadata": {"name": "ws", "namespace": "ds", "annotations": annotations},
        "spec": {"suspend": suspend},
        "status": {"state": kuberay_state},
    }


def test_idle_status_reads_the_reapers_state_annotation() -> None:
    running = idle_status(None, _reaper_rc(AgentState(admitted_at=T0, decision="idle")), None)  # type: ignore[arg-type]
    assert running is not None and not running.scaled_to_zero
    assert running.text(now=T0 + 3 * 60) == "reaper mode: idle 3 of 10 min"
    state = AgentState(
        admitted_at=T0, scaled_at=T0 + 600, idle_for=600, decision="scaled to zero after 10 min"
    )
    # suspended, but KubeRay still deletes the pods: not "scaled to zero" yet (kueue PR #15980)
    going = idle_status(None, _reaper_rc(state, suspend=True), None)  # type: ignore[arg-type]
    assert going is not None and not going.scaled_to_zero and going.stopping
    assert "scaled to zero" not in going.text() and "waiting for the cluster's pods to go" in going.text()
    gone = idle_status(None, _reaper_rc(state, suspend=True, kuberay_state="suspended"), None)  # type: ignore[arg-type]
    assert gone is not None and gone.scaled_to_zero and "after 10 idle min; suspended" in gone.text()
    no_policy = {"metadata": {"name": "ws", "namespace": "ds"}}
    assert idle_status(None, no_policy, None) is None  # type: ignore[arg-type]


def _status(idle: IdleStatus | None) -> ClusterStatus:
    """A status as status_from builds it: a cluster scaled to zero explains itself with the idle state."""
    if idle is not None and idle.scaled_to_zero:
        return ClusterStatus(
            "ws", "ds", ClusterPhase.DEACTIVATED, False, idle.describe(), queue="q", idle=idle
        )
    return ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready", queue="q", idle=idle)


def _clock(minutes: float, of: float, mode: str = "keda") -> IdleStatus:
    return IdleStatus(mode, "workload", of, "gpu", idle_since=time.time() - minutes * 60 - 1)


def test_status_text_card_and_panel_show_the_idle_clock() -> None:
    st = _status(_clock(12, 60))
    assert status_text(st).splitlines()[-1] == "  scale to zero: keda mode: idle 12 of 60 min"
    assert "idle 12 of 60 min" in repr(st)
    assert "<th style='text-align:left'>scale to zero</th><td>keda mode: idle 12 of 60 min</td>" in (
        status_html(st)
    )
    assert "idle 12 of 60 min" in render_text(status_panel(st), width=120)


def test_a_cluster_scaled_to_zero_says_it_once_with_the_way_back() -> None:
    at = time.mktime(time.strptime("2026-11-26 14:02", "%Y-%m-%d %H:%M")) - time.timezone
    st = _status(IdleStatus("keda", "workload", 60, "gpu", scaled_to_zero=True, scaled_at=at, idle_for=3600))
    text = status_text(st)
    assert text.count("scaled to zero at 14:02") == 1 and "cluster.resume()" in text
    assert idle_line(st) == "keda mode" and "scale to zero: keda mode" in text
    assert "scale to zero</th><td>keda mode</td>" in status_html(st)
    panel = render_text(status_panel(st), width=200)  # what `rayqueue cluster status` prints
    assert panel.count("scaled to zero at 14:02") == 1 and "cluster.resume()" in panel


def test_no_policy_adds_nothing() -> None:
    st = _status(None)
    assert "scale to zero" not in status_text(st) and "scale to zero" not in status_html(st)
    assert idle_line(st) is None and st.idle_scale_to_zero is None and not st.scaled_to_zero


def test_details_text_carries_the_idle_line() -> None:
    details = summarize({"metadata": {"name": "ws", "namespace": "ds"}})
    details = replace(details, status=_status(_clock(1, 5, "reaper")))
    assert "scale to zero: reaper mode: idle 1.0 of 5 min" in details_text(details)


def test_scaled_to_zero_error_names_the_way_back() -> None:
    err = ScaledToZeroError("ws", "ds", "keda mode: scaled to zero at 14:02 UTC after 60 idle min")
    assert str(err).startswith(
        "ds/ws: keda mode: scaled to zero at 14:02 UTC after 60 idle min; call cluster.resume()"
    )
