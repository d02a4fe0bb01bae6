"""The estimate's idle clocks, pure: the typed IdleStatus of either mode (the reaper's state annotation with
its polling interval, KEDA's ScaledObject) gives each holder's release, and pending clusters under either
mode are chained behind their idle period."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from rayqueue_sdk.admission.estimate import DEFAULT_SLACK_SECONDS, Hold
from rayqueue_sdk.admission.idle import idle_from
from rayqueue_sdk.manifests.scaling import IDLE_STATE_ANNOTATION, POLICY_ANNOTATION, policy_name
from rayqueue_sdk.queues.eta import holds_of, releases_of
from rayqueue_sdk.scaling.agent import AgentState, format_time

NOW = datetime(2026, 1, 1, 14, 0, tzinfo=UTC)
GPU = "nvidia.com/gpu"


def _t(seconds: float) -> str | None:
    return format_time((NOW + timedelta(seconds=seconds)).timestamp())


def rc(mode: str, *, idle_minutes: float = 5, cooldown_minutes: float = 0) -> dict[str, Any]:
    policy = {
        "mode": mode,
        "mechanism": "workload",
        "idle_minutes": idle_minutes,
        "initial_cooldown_minutes": cooldown_minutes,
    }
    return {
        "metadata": {"name": "ws", "namespace": "ds", "annotations": {POLICY_ANNOTATION: json.dumps(policy)}}
    }


def holder(state: dict[str, Any] | None = None, *, admitted: bool = True) -> dict[str, Any]:
    wl: dict[str, Any] = {
        "metadata": {
            "name": "w",
            "namespace": "ds",
            "ownerReferences": [{"kind": "RayCluster", "name": "ws", "controller": True}],
        },
        "spec": {"queueName": "q", "active": True},
    }
    if state is not None:
        wl["metadata"]["annotations"] = {IDLE_STATE_ANNOTATION: json.dumps(state)}
    if admitted:
        wl["status"] = {
            "admission": {
                "clusterQueue": "cq",
                "podSetAssignments": [{"name": "head", "flavors": {GPU: "gpu"}, "resourceUsage": {GPU: "2"}}],
            },
            "conditions": [
                {"type": "QuotaReserved", "status": "True"},
                {"type": "Admitted", "status": "True", "lastTransitionTime": _t(-600)},
            ],
        }
    return wl


def scaled_object(*, last: float | None, created: float = -900) -> dict[str, Any]:
    return {
        "metadata": {"name": policy_name("ws"), "creationTimestamp": _t(created)},
        "spec": {"pollingInterval": 7, "cooldownPeriod": 100, "initialCooldownPeriod": 400},
        "status": {"lastActiveTime": _t(last)} if last is not None else {},
    }


def test_the_agent_records_its_polling_interval_and_reads_it_back() -> None:
    state = AgentState(admitted_at=0.0, decision="idle", polling_seconds=5.0)
    assert state.to_json()["pollingSeconds"] == 5.0
    assert AgentState.from_json(state.to_json()).polling_seconds == 5.0
    assert AgentState.from_json({"pollingSeconds": "soon"}).polling_seconds is None


def test_the_reapers_polling_interval_bounds_latest() -> None:
    state = {
        "idleSince": _t(-60),
        "admittedAt": _t(-600),
        "decision": "idle 1.0 of 5 min",
        "pollingSeconds": 5,
    }
    (rel,) = releases_of([holder(state)], "ds", [rc("reaper")], [], [], NOW)
    assert rel.earliest == NOW + timedelta(seconds=240)
    assert rel.latest == NOW + timedelta(seconds=240 + 5 + 10)  # one poll, then Kueue's eviction and cycle
    # an agent that did not say its interval: the default slack
    del state["pollingSeconds"]
    (rel,) = releases_of([holder(state)], "ds", [rc("reaper")], [], [], NOW)
    assert rel.latest == NOW + timedelta(seconds=240 + DEFAULT_SLACK_SECONDS)


def test_a_busy_reaper_runs_no_clock_and_a_fresh_one_counts_its_cooldown_from_kueues_admission() -> None:
    busy = {"idleSince": _t(-1), "admittedAt": _t(-600), "decision": "busy", "pollingSeconds": 5}
    st = idle_from(rc("reaper"), holder(busy))
    assert st is not None and st.idle_since is None and st.acts_by is None
    # the agent has not written yet: the initial cooldown counts from the Workload's Admitted time
    st = idle_from(rc("reaper", cooldown_minutes=20), holder(None))
    assert st is not None and st.cooldown_until == (NOW + timedelta(seconds=-600 + 1200)).timestamp()


def test_a_keda_holder_releases_at_last_active_plus_cooldown_and_within_a_poll() -> None:
    sos = [scaled_object(last=-30)]
    st = idle_from(rc("keda"), holder(), sos[0])
    assert st is not None and st.releases_at == (NOW + timedelta(seconds=70)).timestamp()
    assert st.cooldown_until is None  # KEDA's initial cooldown holds only while never active
    (rel,) = releases_of([holder()], "ds", [rc("keda")], [], sos, NOW)
    assert rel.earliest == NOW + timedelta(seconds=70)
    assert rel.latest == NOW + timedelta(seconds=70 + 7 + 10)


def test_a_keda_holder_never_active_releases_after_its_initial_cooldown_from_creation() -> None:
    (rel,) = releases_of([holder()], "ds", [rc("keda")], [], [scaled_object(last=None, created=-300)], NOW)
    assert rel.earliest == NOW + timedelta(seconds=100)
    assert rel.latest == NOW + timedelta(seconds=100 + 7 + 10)


def test_pending_clusters_of_either_mode_are_chained_behind_their_idle_period() -> None:
    for mode in ("reaper", "keda"):
        holds = holds_of([holder(admitted=False)], "ds", [rc(mode, idle_minutes=2, cooldown_minutes=3)], [])
        assert holds == {("ds", "w"): Hold.for_idle(180)}, mode


def test_a_keda_holder_whose_last_poll_read_use_runs_no_clock() -> None:
    so = scaled_object(last=-1)
    so["status"]["conditions"] = [{"type": "Active", "status": "True", "reason": "ScalerActive"}]
    st = idle_from(rc("keda"), holder(), so)
    assert st is not None and st.idle_since is None and st.decision == "busy"
    (rel,) = releases_of([holder()], "ds", [rc("keda")], [], [so], NOW)
    assert rel.earliest == NOW + timedelta(seconds=100) and rel.latest is None
