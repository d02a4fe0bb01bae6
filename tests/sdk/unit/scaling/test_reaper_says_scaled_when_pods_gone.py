"""The reaper's words after a scale-down (pure core): "scaling to zero" while the pods stop, "scaled to
zero ... quota released" only once KubeRay reports them gone, and nothing of it once resumed."""

from __future__ import annotations

from typing import Any

import pytest

from rayqueue_sdk.admission.idle import pods_gone as sdk_pods_gone
from rayqueue_sdk.scaling.agent import AgentState, Observation, decide, no_pods_left, settle

CFG = {"idle_seconds": 60.0, "initial_cooldown_seconds": 0.0}
STOPPING = {
    "spec": {"suspend": True},
    "status": {
        "state": "ready",
        "conditions": [
            {"type": "RayClusterSuspending", "status": "True"},
            {"type": "RayClusterSuspended", "status": "False"},
        ],
    },
}
GONE = {
    "spec": {"suspend": True},
    "status": {
        "state": "suspended",
        "conditions": [
            {"type": "RayClusterSuspending", "status": "False"},
            {"type": "RayClusterSuspended", "status": "True"},
        ],
    },
}


def test_pods_gone_follows_kuberay() -> None:
    assert not no_pods_left({"spec": {}, "status": {"state": "ready"}})
    assert not no_pods_left(STOPPING)
    assert no_pods_left(GONE)
    assert no_pods_left({"spec": {"suspend": True}, "status": {"state": "suspended"}})  # KubeRay < 1.2
    assert not no_pods_left({"spec": {"suspend": True}, "status": {}})


CASES = [
    None,
    {},
    {"spec": {}, "status": {"state": "ready"}},
    {"spec": {"suspend": False}, "status": {"state": "suspended"}},
    STOPPING,
    GONE,
    {"spec": {"suspend": True}, "status": {"state": "suspended"}},
    {"spec": {"suspend": True}, "status": {}},
    {
        "spec": {"suspend": True},
        "status": {"conditions": [{"type": "RayClusterSuspended", "status": "False"}]},
    },
    {
        "spec": {"suspend": True},
        "status": {"state": "suspended", "conditions": [{"type": "RayClusterSuspending", "status": "True"}]},
    },
]


@pytest.mark.parametrize("rc", CASES)
def test_the_sdk_and_the_reaper_agree_on_pods_gone(rc: dict[str, Any] | None) -> None:
    """The reaper (stdlib only in its pod) keeps its own copy of the rule; the SDK reads it the same."""
    assert sdk_pods_gone(rc) is no_pods_left(rc)


def test_scaled_to_zero_is_said_once_the_pods_are_gone_and_forgotten_on_resume() -> None:
    state = AgentState(admitted_at=0.0, idle_for=60.0, decision="scaling to zero after 1.0 idle min: ...")
    # deactivated, pods still stopping: the scale-down is kept, not yet "scaled"
    d = decide(state, Observation(False, why="deactivated"), 70.0, **CFG)
    kept = settle(d.state, STOPPING, 70.0, mechanism="workload")
    assert kept.decision.startswith("scaling to zero") and kept.scaled_at is None
    done = settle(
        decide(kept, Observation(False, why="deactivated"), 75.0, **CFG).state,
        GONE,
        75.0,
        mechanism="workload",
    )
    assert done.decision == "scaled to zero after 1.0 idle min; pods gone, quota released"
    assert done.scaled_at == 75.0
    # still stopped: remembered; resumed and waiting in the queue: the queue's word, not "scaled"
    assert decide(done, Observation(False, why="deactivated"), 80.0, **CFG).state.decision == done.decision
    queued = decide(done, Observation(False, why="queued (not admitted)"), 90.0, **CFG).state
    assert queued.decision == "queued (not admitted)"
    suspended = settle(state, GONE, 5.0, mechanism="suspend")
    assert suspended.decision.endswith("pods gone, suspended")
