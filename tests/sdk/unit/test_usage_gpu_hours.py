"""The GPU-hours arithmetic of the usage report, from tables (pure: no server).

Intervals clipped to the window and adding up when they overlap; Workloads read from their conditions
(admitted, scaled to zero, resumed, deleted, finished); samples integrated; busy ``None`` without metrics;
bad ``since`` refused with the field named.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from rayqueue_sdk.admission.usage import (
    GpuInterval,
    build_report,
    cluster_of_pod,
    gpu_hours,
    integrate_samples,
    parse_since,
    workload_gpus,
    workload_history,
)
from rayqueue_sdk.errors import ConfigError

T0 = datetime(2026, 3, 1, 0, 0, tzinfo=UTC)
H = timedelta(hours=1)


def at(hours: float) -> datetime:
    return T0 + hours * H


def stamp(hours: float) -> str:
    return at(hours).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize(
    ("intervals", "window", "expected"),
    [
        # (start h, end h or None, gpus) ...; window (from h, to h); GPU-hours
        ([(0, 2, 1)], (0, 10), 2.0),
        ([(0, None, 2)], (0, 3), 6.0),  # still held: counted until the window's end
        ([(-5, 1, 4)], (0, 10), 4.0),  # started before the window: clipped
        ([(9, 12, 1)], (0, 10), 1.0),  # ends after the window: clipped
        ([(0, 2, 1), (1, 3, 2)], (0, 10), 6.0),  # overlapping holdings add up (2 + 4)
        ([(0, 1, 1)], (2, 3), 0.0),  # entirely outside
        ([(3, 1, 1)], (0, 10), 0.0),  # an end before its start counts nothing
    ],
)
def test_gpu_hours_of_intervals(
    intervals: list[tuple[Any, Any, float]], window: tuple[float, float], expected: float
) -> None:
    ivs = [GpuInterval(at(s), None if e is None else at(e), g) for s, e, g in intervals]
    assert gpu_hours(ivs, at(window[0]), at(window[1])) == pytest.approx(expected)


def test_samples_integrate_to_hours() -> None:
    # 2 GPUs for 30 samples of 60 s, then 1 GPU half busy for 60 samples: 1 h + 0.5 h
    points = [(i * 60.0, 2.0) for i in range(30)] + [(1800 + i * 60.0, 0.5) for i in range(60)]
    assert integrate_samples(points, 60) == pytest.approx(1.5)
    assert integrate_samples([], 60) == 0


def _workload(
    *,
    conditions: list[dict[str, Any]],
    active: bool = True,
    gpus: int = 2,
    admitted_usage: int | None = None,
    deleted: float | None = None,
    past_seconds: int | None = None,
) -> dict[str, Any]:
    template = {"spec": {"containers": [{"resources": {"requests": {"nvidia.com/gpu": "1"}}}]}}
    status: dict[str, Any] = {"conditions": conditions}
    if admitted_usage is not None:
        status["admission"] = {
            "clusterQueue": "cq",
            "podSetAssignments": [{"name": "head", "resourceUsage": {"nvidia.com/gpu": str(admitted_usage)}}],
        }
    if past_seconds is not None:
        status["accumulatedPastExecutionTimeSeconds"] = past_seconds
    meta: dict[str, Any] = {
        "namespace": "team-a",
        "name": "raycluster-ws-1a2b3",
        "ownerReferences": [{"kind": "RayCluster", "name": "ws", "uid": "u"}],
    }
    if deleted is not None:
        meta["deletionTimestamp"] = stamp(deleted)
    return {
        "metadata": meta,
        "spec": {
            "queueName": "user-queue",
            "active": active,
            "podSets": [{"count": gpus, "template": template}],
        },
        "status": status,
    }


def cond(type_: str, status: str, hours: float, reason: str = "") -> dict[str, Any]:
    return {"type": type_, "status": status, "reason": reason, "lastTransitionTime": stamp(hours)}


PREEMPTED_AT_2 = [cond("Admitted", "False", 2, "NoReservation"), cond("Evicted", "True", 2, "Preempted")]

# (name, workload, now h, window, expected allocated, expected reclaimed)
CASES: list[tuple[str, dict[str, Any], float, tuple[float, float], float, float]] = [
    (
        "admitted and still running",
        _workload(conditions=[cond("Admitted", "True", 1)], admitted_usage=2),
        5,
        (0, 5),
        8.0,
        0.0,
    ),
    (
        "admitted, window starts later",
        _workload(conditions=[cond("Admitted", "True", 1)], admitted_usage=2),
        5,
        (3, 5),
        4.0,
        0.0,
    ),
    (
        "finished: quota released at Finished",
        _workload(
            conditions=[cond("Admitted", "True", 1), cond("Finished", "True", 2, "Succeeded")],
            admitted_usage=2,
        ),
        5,
        (0, 5),
        2.0,
        0.0,
    ),
    (
        "scaled to zero and still off: reclaimed until now; admission time kept by Kueue",
        _workload(
            conditions=[
                cond("Admitted", "False", 3, "NoReservation"),
                cond("Evicted", "True", 3, "Deactivated"),
            ],
            active=False,
            past_seconds=7200,
        ),
        5,
        (0, 5),
        4.0,  # 2 GPUs x 2 h before the scale-to-zero
        4.0,  # 2 GPUs x 2 h since
    ),
    (
        "scaled to zero, then resumed and admitted again: reclaimed ends at the new admission",
        _workload(
            conditions=[cond("Admitted", "True", 4), cond("Evicted", "True", 2, "InactiveWorkload")],
            admitted_usage=2,
        ),
        5,
        (0, 5),
        2.0,  # 2 GPUs x 1 h since the re-admission (earlier cycles: conditions do not keep them)
        4.0,  # 2 GPUs x 2 h between the scale-to-zero and the re-admission
    ),
    (
        "scaled to zero, then deleted: reclaimed ends at the deletion",
        _workload(
            conditions=[cond("Evicted", "True", 1, "Deactivated")], active=False, deleted=2.5, past_seconds=0
        ),
        5,
        (0, 5),
        0.0,
        3.0,
    ),
    (
        "held 2 GPUs 90 s, then scaled to zero: Kueue's accumulated seconds, nothing lost",
        _workload(
            conditions=[
                cond("Admitted", "False", 1, "NoReservation"),
                cond("Evicted", "True", 1 - 10 / 3600, "Deactivated"),
            ],
            active=False,
            past_seconds=90,
        ),
        2,
        (0, 2),
        2 * 90 / 3600,
        2 * (1 + 10 / 3600),
    ),
    (
        "scaled to zero (1 h), resumed (Reactivated at 3) and admitted again at 3.5: both admissions",
        _workload(
            conditions=[
                cond("Admitted", "True", 3.5),
                cond("Requeued", "True", 3, "Reactivated"),
                cond("Evicted", "False", 3.5, "QuotaReserved"),
            ],
            admitted_usage=2,
            past_seconds=3600,
        ),
        5,
        (0, 5),
        2.0 + 3.0,  # 2 GPUs x 1 h before + 2 GPUs x 1.5 h since
        0.0,  # the reclaimed stretch ended with the readmission (Evicted is False again)
    ),
    (
        "a window that starts after the past admission ended does not count it",
        _workload(
            conditions=PREEMPTED_AT_2,
            past_seconds=3600,
        ),
        5,
        (2, 5),
        0.0,
        0.0,
    ),
    (
        "preempted after 1 h (not a scale-to-zero): allocated from Kueue's record, nothing reclaimed",
        _workload(
            conditions=PREEMPTED_AT_2,
            past_seconds=3600,
        ),
        5,
        (0, 5),
        2.0,
        0.0,
    ),
    (
        "admitted, then its cluster deleted: allocated until the deletion",
        _workload(conditions=[cond("Admitted", "True", 1)], admitted_usage=2, deleted=3),
        5,
        (0, 5),
        4.0,
        0.0,
    ),
    (
        "preempted (not a scale-to-zero): nothing reclaimed",
        _workload(conditions=[cond("Evicted", "True", 1, "Preempted")]),
        5,
        (0, 5),
        0.0,
        0.0,
    ),
    (
        "never admitted: nothing",
        _workload(conditions=[cond("QuotaReserved", "False", 1, "Pending")]),
        5,
        (0, 5),
        0.0,
        0.0,
    ),
]


@pytest.mark.parametrize(
    ("name", "wl", "now", "window", "allocated", "reclaimed"), CASES, ids=[c[0] for c in CASES]
)
def test_workload_conditions_to_gpu_hours(
    name: str, wl: dict[str, Any], now: float, window: tuple[float, float], allocated: float, reclaimed: float
) -> None:
    history = workload_history(wl, at(now))
    assert (history.namespace, history.name, history.queue) == ("team-a", "ws", "user-queue")
    report = build_report(at(window[0]), at(window[1]), [history])
    (row,) = report.rows
    assert row.gpu_hours_allocated == pytest.approx(allocated)
    assert row.gpu_hours_reclaimed == pytest.approx(reclaimed)
    assert row.gpu_hours_busy is None  # no metrics: never a guess


def test_an_unknown_admission_before_a_scale_to_zero_is_said_not_guessed() -> None:
    wl = _workload(conditions=[cond("Evicted", "True", 3, "Deactivated")], active=False)
    report = build_report(at(0), at(5), [workload_history(wl, at(5))])
    assert report.rows[0].gpu_hours_allocated == 0
    assert any("does not record" in n for n in report.notes)


def test_gpus_from_the_admission_else_from_the_pod_sets() -> None:
    assert workload_gpus(_workload(conditions=[], admitted_usage=3)) == 3
    assert workload_gpus(_workload(conditions=[], gpus=4)) == 4


def test_metrics_win_for_allocated_and_give_busy_only_where_they_exist() -> None:
    wl = _workload(conditions=[cond("Admitted", "True", 0)], admitted_usage=2)
    other = dict(wl, metadata=dict(wl["metadata"], ownerReferences=[{"kind": "RayCluster", "name": "ws2"}]))
    report = build_report(
        at(0),
        at(4),
        [workload_history(wl, at(4)), workload_history(other, at(4))],
        allocated_by_metrics={("team-a", "ws"): 7.5, ("team-a", "gone"): 1.0},
        busy_by_metrics={("team-a", "ws"): 3.0},
        cluster_queues={"cq-a": 9.25},
    )
    rows = {r.name: r for r in report.rows}
    assert rows["ws"].gpu_hours_allocated == 7.5 and rows["ws"].gpu_hours_busy == 3.0
    assert rows["ws2"].gpu_hours_busy is None  # no DCGM series for it: unknown, not 0
    assert rows["gone"].gpu_hours_allocated == 1.0  # deleted since: only Prometheus remembers it
    assert report.total_busy == 3.0
    assert report.to_dict()["cluster_queues"] == {"cq-a": 9.25}
    assert "ClusterQueue cq-a: 9.250 GPU-hours in use" in report.text()
    assert report.to_dict()["totals"]["gpu_hours_allocated"] == pytest.approx(7.5 + 1.0 + 0.0)


@pytest.mark.parametrize("bad", ["7", "7 days", "-1d", "0h", "yesterday", "", "7y"])
def test_bad_since_names_the_field_and_the_forms(bad: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_since(bad, T0)
    assert err.value.field == "since" and "7d" in err.value.allowed


def test_since_forms() -> None:
    assert parse_since("90m", at(5)) == at(3.5)
    assert parse_since(timedelta(hours=2), at(5)) == at(3)
    assert parse_since(at(1), at(5)) == at(1)
    assert parse_since(None, at(24 * 7)) == T0
    with pytest.raises(ConfigError, match="naive"):
        parse_since(datetime(2026, 1, 1), at(5))  # noqa: DTZ001 - the point of the test


def test_pods_map_to_their_cluster_by_kuberay_names() -> None:
    clusters = ["ws", "ws-2", "team"]
    assert cluster_of_pod("ws-head-x7k2p", clusters) == "ws"
    assert cluster_of_pod("ws-2-head-x7k2p", clusters) == "ws-2"
    assert cluster_of_pod("ws-gpu-group-worker-abcde", clusters) == "ws"
    assert cluster_of_pod("teamster-head-abcde", clusters) is None


def test_cli_bad_since_is_refused_before_anything_is_sent(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    from rayqueue_sdk.cli.main import main

    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))  # a connection attempt would fail differently
    code = main(["usage", "--since", "a week", "--json"])
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert code == 2 and doc["error"] == "ConfigError"
    assert doc["message"].startswith("since: got 'a week'; allowed: a duration such as 30m")
