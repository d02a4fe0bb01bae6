"""The idle state as one typed field of the cluster's status: decoded once from the stored objects (the
policy annotation, the reaper's state annotation, KEDA's ScaledObject and the Workload), then shown the
same way by every display and by ``to_dict()`` (``--json``). Pure: stored objects, no server."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, get_args

from rayqueue_sdk.admission.idle import IdleState, IdleStatus, idle_from
from rayqueue_sdk.cluster.live import keep_idle_line
from rayqueue_sdk.cluster.status import ClusterPhase, status_from
from rayqueue_sdk.config.idle import MODES, IdlePolicy
from rayqueue_sdk.display.console import clusters_table, idle_cell, render_text
from rayqueue_sdk.display.widgets import clusters_html
from rayqueue_sdk.manifests.idle import IdleMode, IdleModeName, StopMechanism
from rayqueue_sdk.manifests.scaling import IDLE_STATE_ANNOTATION, POLICY_ANNOTATION, policy_annotation

T0 = 1_780_000_000.0
STAMP = "2026-05-28T20:26:40Z"  # T0 in RFC 3339


def _rc(
    mode: str, mechanism: str = "workload", minutes: float = 60, *, pods_gone: bool = False
) -> dict[str, Any]:
    """The RayCluster; ``pods_gone``: suspended and no pod left (only then "scaled to zero")."""
    policy = IdlePolicy(idle_minutes=minutes)
    stopped = {"spec": {"suspend": True}, "status": {"state": "suspended"}} if pods_gone else {"spec": {}}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {
            "name": "ws",
            "namespace": "ds",
            "uid": "u1",
            "labels": {"kueue.x-k8s.io/queue-name": "q"},
            "annotations": {POLICY_ANNOTATION: policy_annotation(policy, mode=mode, mechanism=mechanism)},
        },
        **stopped,
    }


def _workload(*, active: bool, state: dict[str, Any] | None = None) -> dict[str, Any]:
    conditions = [{"type": "Admitted", "status": "True", "reason": "Admitted", "lastTransitionTime": STAMP}]
    if not active:
        conditions = [
            {"type": "Evicted", "status": "True", "reason": "Deactivated", "lastTransitionTime": STAMP},
            {"type": "QuotaReserved", "status": "False", "reason": "Pending", "lastTransitionTime": STAMP},
        ]
    annotations = {IDLE_STATE_ANNOTATION: json.dumps(state)} if state else {}
    return {
        "metadata": {"name": "raycluster-ws-1", "annotations": annotations},
        "spec": {"active": active, "queueName": "q"},
        "status": {"conditions": conditions},
    }


def test_modes_are_one_enum_and_the_policy_keeps_it() -> None:
    assert set(get_args(IdleModeName)) == {m.value for m in IdleMode} == set(MODES)
    assert IdlePolicy(idle_minutes=1, mode="reaper").mode is IdleMode.REAPER
    assert IdlePolicy(idle_minutes=1).mode is IdleMode.AUTO


def test_keda_clock_is_decoded_from_the_scaled_object() -> None:
    so = {"metadata": {"creationTimestamp": "2026-05-28T20:00:00Z"}, "status": {"lastActiveTime": STAMP}}
    st = idle_from(_rc("keda"), _workload(active=True), so)
    assert st is not None and st.mode is IdleMode.KEDA and st.mechanism is StopMechanism.WORKLOAD
    assert st.state is IdleState.IDLE and st.idle_since == T0 and st.releases_at == T0 + 3600
    assert st.text(now=T0 + 12 * 60) == "keda mode: idle 12 of 60 min"
    unread = idle_from(_rc("keda"), _workload(active=True), None, scaled_object_read=False)
    assert unread is not None and unread.state is IdleState.WAITING and unread.releases_at is None
    assert unread.decision is None and unread.text() == "keda mode: scale to zero after 60 idle min (waiting)"
    gone = idle_from(_rc("keda"), _workload(active=True), None)  # read, and there is none
    assert gone is not None and gone.decision == "no ScaledObject"


def test_a_keda_cluster_scaled_to_zero_says_when_from_the_workload() -> None:
    so = {"status": {"lastActiveTime": "2026-05-28T19:26:40Z"}}  # an hour before the deactivation
    st = idle_from(_rc("keda", pods_gone=True), _workload(active=False), so)
    assert st is not None and st.state is IdleState.SCALED_TO_ZERO and st.scaled_at == T0
    assert st.idle_for == 3600 and st.releases_at is None
    assert st.describe().startswith("scaled to zero at 20:26 UTC after 60 idle min; quota released")


def test_the_reaper_state_annotation_is_decoded_on_the_workload() -> None:
    running = idle_from(_rc("reaper"), _workload(active=True, state={"idleSince": STAMP, "decision": "idle"}))
    assert running is not None and running.mode is IdleMode.REAPER and running.idle_since == T0
    gone_state = {"scaledAt": STAMP, "idleSeconds": 600, "decision": "scaled", "hook": "succeeded"}
    gone = idle_from(_rc("reaper", pods_gone=True), _workload(active=False, state=gone_state))
    assert gone is not None and gone.scaled_to_zero and gone.scaled_at == T0 and gone.idle_for == 600.0
    assert gone.hook == "succeeded"


def test_status_from_carries_the_idle_state_and_explains_a_cluster_scaled_to_zero() -> None:
    gone_state = {"scaledAt": STAMP, "idleSeconds": 3600, "decision": "scaled"}
    st = status_from(_rc("reaper", pods_gone=True), _workload(active=False, state=gone_state))
    assert st.phase is ClusterPhase.DEACTIVATED and st.scaled_to_zero
    assert st.idle is not None and st.explanation == st.idle.describe()
    assert st.explanation.startswith("scaled to zero at 20:26 UTC after 60 idle min")
    data = json.loads(json.dumps(st.to_dict()))  # what --json prints
    assert data["scaled_to_zero"] is True
    assert data["idle"]["state"] == "scaled to zero" and data["idle"]["mode"] == "reaper"
    assert data["idle"]["scaled_at"] == T0 and data["idle"]["releases_at"] is None
    none = status_from({"metadata": {"name": "ws", "namespace": "ds"}, "spec": {}}, None)
    assert none.idle is None and none.to_dict()["idle"] is None and not none.scaled_to_zero


def test_listings_show_the_idle_state() -> None:
    gone = status_from(
        _rc("reaper", pods_gone=True), _workload(active=False, state={"scaledAt": STAMP, "idleSeconds": 60})
    )
    clock = IdleStatus(IdleMode.KEDA, StopMechanism.WORKLOAD, 60, "gpu", idle_since=T0)
    assert idle_cell(gone) == "reaper: scaled to zero 20:26 UTC"
    assert idle_cell(status_from(_rc("keda"), _workload(active=True))) == "keda: waiting"
    running = replace(gone, name="ws2", idle=clock)
    assert idle_cell(running, now=T0 + 600) == "keda: idle 10/60 min"
    table = render_text(clusters_table([gone]), width=200)
    assert "reaper: scaled to zero 20:26 UTC" in table
    assert "<td>reaper: scaled to zero 20:26 UTC</td>" in clusters_html([gone])


def test_the_live_card_keeps_what_no_watch_carries() -> None:
    so = {"status": {"lastActiveTime": STAMP}}
    shown = status_from(_rc("keda"), _workload(active=True), scaled_object=so, scaled_object_read=True)
    watched = status_from(_rc("keda"), _workload(active=True))  # the watches: no ScaledObject
    assert watched.idle is not None and watched.idle.idle_since is None
    kept = keep_idle_line(watched, shown, _workload(active=True))
    assert kept.idle == shown.idle
    # scaled to zero meanwhile: the watched Workload says so, the old clock is not kept
    gone = status_from(_rc("keda", pods_gone=True), _workload(active=False))
    assert keep_idle_line(gone, shown, _workload(active=False)).scaled_to_zero
    # the reaper's state is on the watched Workload: read afresh, never the shown one
    reaper_shown = status_from(_rc("reaper"), _workload(active=True, state={"idleSince": STAMP}))
    later = {"idleSince": "2026-05-28T20:30:00Z"}
    reaper_new = status_from(_rc("reaper"), _workload(active=True, state=later))
    assert keep_idle_line(reaper_new, reaper_shown, None).idle == reaper_new.idle


def test_releases_at_waits_for_the_initial_cooldown() -> None:
    rc = _rc("reaper", minutes=1)
    policy = json.loads(rc["metadata"]["annotations"][POLICY_ANNOTATION])
    rc["metadata"]["annotations"][POLICY_ANNOTATION] = json.dumps({**policy, "initial_cooldown_minutes": 30})
    state = {"admittedAt": STAMP, "idleSince": STAMP, "decision": "initial cooldown: 1800 s left"}
    st = idle_from(rc, _workload(active=True, state=state))
    assert st is not None and st.cooldown_until == T0 + 1800 and st.releases_at == T0 + 1800
    later = {**state, "idleSince": "2026-05-28T21:00:00Z"}  # busy until after the cooldown
    st = idle_from(rc, _workload(active=True, state=later))
    assert st is not None and st.releases_at == T0 + 2000 + 60  # 21:00:00 (T0 + 2000 s) + 1 min
