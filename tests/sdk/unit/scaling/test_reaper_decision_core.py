"""The reaper agent's pure decision core: the idle clock, the initial cooldown, resume, busy signals."""

from __future__ import annotations

from rayqueue_sdk.scaling.agent import (
    AgentState,
    Observation,
    busy_from,
    decide,
    gpu_busy_from_ray,
    hook_outcome,
    jobs_busy,
    prometheus_busy,
)

CFG = {"idle_seconds": 600.0, "initial_cooldown_seconds": 600.0}


def run(
    observations: list[tuple[float, Observation]], state: AgentState | None = None, **cfg: float
) -> list[str]:
    state = state or AgentState()
    actions = []
    for now, obs in observations:
        d = decide(state, obs, now, **{**CFG, **cfg})
        state = d.state
        actions.append(d.action)
    return actions


def idle(admitted: float = 0.0) -> Observation:
    return Observation(True, admitted_at=admitted, busy=False)


def busy(admitted: float = 0.0) -> Observation:
    return Observation(True, admitted_at=admitted, busy=True)


def test_idle_for_the_whole_period_scales_to_zero_not_before() -> None:
    assert run([(0, idle()), (300, idle()), (599, idle()), (600, idle())]) == [
        "wait",
        "wait",
        "wait",
        "scale",
    ]


def test_a_cluster_that_keeps_running_jobs_is_never_scaled_down() -> None:
    steps = [(t, busy() if t % 500 == 0 else idle()) for t in range(0, 10_000, 100)]
    assert "scale" not in run(steps)


def test_busy_restarts_the_clock_at_the_first_idle_observation() -> None:
    """Busy at 500 and idle at 1000: the work may have ended at 999, so the clock starts at 1000 and the
    cluster is scaled down a whole period (600 s) later, never earlier."""
    assert run([(0, idle()), (500, busy()), (1000, idle()), (1599, idle()), (1600, idle())]) == [
        "wait",
        "wait",
        "wait",
        "wait",
        "scale",
    ]


def test_a_signal_read_again_after_a_failure_starts_a_whole_period() -> None:
    unknown = Observation(True, admitted_at=0.0, busy=None, why="Prometheus unreachable")
    assert run([(700, unknown), (800, idle()), (1399, idle()), (1400, idle())]) == [
        "wait",
        "wait",
        "wait",
        "scale",
    ]


def test_initial_cooldown_keeps_a_fresh_cluster_before_its_first_job() -> None:
    actions = run([(0, idle()), (600, idle()), (1799, idle()), (1800, idle())], initial_cooldown_seconds=1800)
    assert actions == ["wait", "wait", "wait", "scale"]


def test_resume_gives_the_whole_period_again() -> None:
    state = AgentState()
    for now, obs in [(0, idle()), (600, idle())]:
        d = decide(state, obs, now, **CFG)
        state = d.state
    assert d.action == "scale"
    # scaled to zero: not running; then resumed and admitted again at t=5000
    d = decide(state, Observation(False, why="deactivated"), 700, **CFG)
    assert d.action == "wait" and d.state.admitted_at is None
    state = d.state
    actions = []
    for now in (5000, 5300, 5599, 5600):
        d = decide(state, idle(admitted=5000), now, **CFG)
        state = d.state
        actions.append(d.action)
    assert actions == ["wait", "wait", "wait", "scale"]


def test_an_unreadable_signal_never_scales_down() -> None:
    unknown = Observation(True, admitted_at=0.0, busy=None, why="Prometheus unreachable")
    steps = [(t, unknown) for t in range(0, 5000, 100)]
    assert set(run(steps)) == {"wait"}
    d = decide(AgentState(), unknown, 700, **CFG)
    assert "Prometheus unreachable" in d.state.decision


def test_an_idle_reading_counts_its_window_so_the_period_is_the_idle_time_asked_for() -> None:
    """Busy at 500, idle at 1000 over a 300 s window: idle since 700 at least, so scaled at 1300 (the
    period, 600 s, after the window's start), not at 1600 (the period plus the window)."""
    steps = [(0, idle()), (500, busy()), (1000, idle()), (1299, idle()), (1300, idle())]
    assert run(steps, window_seconds=300) == ["wait", "wait", "wait", "wait", "scale"]


def test_after_an_unreadable_signal_the_window_is_not_counted_as_idle() -> None:
    """The gap in the data may have been busy: the clock starts at the first reading after it."""
    unknown = Observation(True, admitted_at=0.0, busy=None, why="no GPU series")
    steps = [(700, unknown), (800, idle()), (1399, idle()), (1400, idle())]
    assert run(steps, window_seconds=300) == ["wait", "wait", "wait", "scale"]


def test_an_empty_query_result_is_unknown_never_idle() -> None:
    """No series for the cluster (no pods yet, the exporter down or restarting): busy for the clock."""
    gpu, why = prometheus_busy([])
    assert gpu is None and "no GPU series" in why
    assert prometheus_busy([float("nan")])[0] is None
    assert prometheus_busy([0.0]) == (False, "")
    empty = Observation(True, admitted_at=0.0, busy=busy_from("gpu", gpu, None), why=why)
    assert set(run([(t, empty) for t in range(0, 5000, 100)])) == {"wait"}


def test_busy_signals() -> None:
    assert busy_from("gpu", True, False) is True
    assert busy_from("jobs", True, False) is False
    assert busy_from("gpu_and_jobs", False, False) is False
    assert busy_from("gpu_and_jobs", False, True) is True
    assert busy_from("gpu", None, True) is None
    assert jobs_busy([{"submission_id": "a", "status": "PENDING"}]) is True
    assert jobs_busy([{"submission_id": "a", "status": "STOPPED"}]) is False
    assert (
        gpu_busy_from_ray({"summary": [{"gpus": []}], "nodeLogicalResources": {"n": "0.0/4.0 GPU"}}) is False
    )
    assert gpu_busy_from_ray({"nodeLogicalResources": {"n": "2.0/8.0 CPU\n0.5/1.0 GPU"}}) is True


def test_state_round_trips_through_its_annotation() -> None:
    state = AgentState(
        admitted_at=100.0, last_busy=160.0, decision="idle", hook="succeeded in 3 s", scaled_at=900.0
    )
    back = AgentState.from_json(state.to_json())
    assert (back.admitted_at, back.idle_since, back.hook, back.scaled_at) == (
        100.0,
        160.0,
        "succeeded in 3 s",
        900.0,
    )


def test_hook_outcomes() -> None:
    assert hook_outcome("FAILED", 4, 60) == "failed after 4 s"
    assert hook_outcome("PENDING", 61, 60).startswith("timed out")
