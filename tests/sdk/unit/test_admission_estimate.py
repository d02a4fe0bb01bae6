"""The admission estimate from tables, pure: each basis case (an idle policy, a busy cluster, a RayJob
deadline, a finished job, nothing bounding a release, preemption, cohort borrowing, admission checks),
``None`` once admitted, no ``latest`` where nothing bounds the release, and hidden ClusterQueues."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from rayqueue_sdk.admission.estimate import (
    CLUSTERQUEUE_PERMISSION,
    Hold,
    admitted_usage,
    deadline_release,
    estimate_admissions,
    finished_release,
    idle_release,
    unbounded_release,
    workload_object_requests,
)
from rayqueue_sdk.admission.overview import build_overview
from rayqueue_sdk.manifests.scaling import IDLE_STATE_ANNOTATION, POLICY_ANNOTATION
from rayqueue_sdk.queues.eta import releases_of

NOW = datetime(2026, 1, 1, 14, 0, tzinfo=UTC)
GPU = "nvidia.com/gpu"


def cq(name: str = "cq-a", gpus: int = 2, used: int = 2, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": [GPU],
                    "flavors": [{"name": "gpu", "resources": [{"name": GPU, "nominalQuota": gpus}]}],
                }
            ],
            **spec,
        },
        "status": {"flavorsUsage": [{"name": "gpu", "resources": [{"name": GPU, "total": str(used)}]}]},
    }


def lq(name: str = "q", cluster_queue: str = "cq-a", ns: str = "ds") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns}, "spec": {"clusterQueue": cluster_queue}}


def wl(
    name: str,
    *,
    gpus: int = 2,
    admitted: bool = False,
    prio: int = 0,
    created: str = "13:50",
    ns: str = "ds",
    queue: str = "q",
    cluster_queue: str = "cq-a",
    owner: str | None = None,
    owner_kind: str = "RayCluster",
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "metadata": {
            "name": name,
            "namespace": ns,
            "creationTimestamp": f"2026-01-01T{created}:00Z",
            "ownerReferences": [{"kind": owner_kind, "name": owner or name, "controller": True}],
        },
        "spec": {
            "queueName": queue,
            "priority": prio,
            "podSets": [
                {
                    "name": "head",
                    "count": 1,
                    "template": {"spec": {"containers": [{"resources": {"requests": {GPU: gpus}}}]}},
                }
            ],
        },
    }
    if admitted:
        obj["status"] = {
            "admission": {
                "clusterQueue": cluster_queue,
                "podSetAssignments": [
                    {"name": "head", "flavors": {GPU: "gpu"}, "resourceUsage": {GPU: str(gpus)}}
                ],
            },
            "conditions": [
                {"type": "QuotaReserved", "status": "True"},
                {"type": "Admitted", "status": "True", "lastTransitionTime": "2026-01-01T13:40:00Z"},
            ],
        }
    return obj


def usage(gpus: int) -> dict[tuple[str, str], Decimal]:
    return {("gpu", GPU): Decimal(gpus)}


def estimate(
    workloads: list[dict[str, Any]],
    releases: list[Any],
    cqs: list[dict[str, Any]] | None = None,
    readable: bool = True,
    lqs: list[dict[str, Any]] | None = None,
) -> dict[Any, Any]:
    ov = build_overview(
        "ds", lqs or [lq()], [cq()] if cqs is None else cqs, workloads, cluster_queues_readable=readable
    )
    requests = {
        (w["metadata"]["namespace"], w["metadata"]["name"]): workload_object_requests(w) for w in workloads
    }
    return estimate_admissions(ov, requests, releases, now=NOW)


def test_an_idle_policy_bounds_both_ends_and_says_if_it_stays_idle() -> None:
    rel = idle_release(
        "ds", "a", "ds/first", usage(2), idle_since=NOW - timedelta(minutes=3), idle_seconds=300, now=NOW
    )
    e = estimate([wl("a", admitted=True), wl("b")], [rel])[("ds", "b")]
    assert e.earliest == NOW + timedelta(minutes=2)
    assert e.latest == NOW + timedelta(minutes=2, seconds=30)
    assert e.earliest.tzinfo is not None
    assert e.basis.startswith(
        "ds/first's idle policy releases 2 nvidia.com/gpu at 14:02 UTC if it stays idle"
    )
    assert "you are next in cq-a" in e.basis and "ds/first becomes busy again" in e.basis
    assert "higher-priority workload arrives" in e.basis


def test_a_busy_cluster_gives_an_earliest_and_no_latest() -> None:
    rel = idle_release("ds", "a", "ds/first", usage(2), idle_since=None, idle_seconds=600, now=NOW)
    e = estimate([wl("a", admitted=True), wl("b")], [rel])[("ds", "b")]
    assert e.earliest == NOW + timedelta(minutes=10) and e.latest is None
    assert "ds/first is busy" in e.basis and "nothing bounds when" in e.basis


def test_a_rayjob_deadline_bounds_the_latest_and_not_the_earliest() -> None:
    rel = deadline_release(
        "ds", "a", "ds/job", usage(2), started=NOW - timedelta(minutes=5), deadline_seconds=900, now=NOW
    )
    e = estimate([wl("a", admitted=True, owner_kind="RayJob"), wl("b")], [rel])[("ds", "b")]
    assert e.earliest == NOW and e.latest == NOW + timedelta(minutes=10, seconds=30)
    assert "activeDeadlineSeconds 900" in e.basis and "by 14:10 UTC" in e.basis


def test_a_finished_job_releases_now() -> None:
    rel = finished_release("ds", "a", "ds/done", usage(2), now=NOW)
    e = estimate([wl("a", admitted=True), wl("b")], [rel])[("ds", "b")]
    assert e.earliest == NOW and e.latest is not None and e.latest <= NOW + timedelta(seconds=30)
    assert "has finished and releases its quota now" in e.basis


def test_nothing_bounding_the_release_leaves_both_ends_empty_and_says_so() -> None:
    e = estimate([wl("a", admitted=True), wl("b")], [unbounded_release("ds", "a", "ds/ws", usage(2))])[
        ("ds", "b")
    ]
    assert e.earliest is None and e.latest is None
    assert "nothing bounds when ds/ws releases its quota" in e.basis


def test_one_bounded_and_one_unbounded_holder_give_an_earliest_but_no_latest() -> None:
    # b needs both holders' GPUs: one releases at 14:05, the other has no bound
    cqs = [cq(gpus=2, used=2)]
    a1, a2 = wl("a1", gpus=1, admitted=True), wl("a2", gpus=1, admitted=True)
    idle = idle_release("ds", "a1", "ds/a1", usage(1), idle_since=NOW, idle_seconds=300, now=NOW)
    finished = finished_release("ds", "a2", "ds/a2", usage(1), now=NOW)
    never = unbounded_release("ds", "a2", "ds/a2", usage(1))
    e = estimate([a1, a2, wl("b")], [idle, finished], cqs)[("ds", "b")]
    assert e.earliest == NOW + timedelta(minutes=5) and e.latest is not None
    e = estimate([a1, a2, wl("b")], [idle, never], cqs)[("ds", "b")]
    assert e.earliest is None and e.latest is None  # cannot start before ds/a2, which nothing bounds


def test_a_workload_that_fits_now_is_admitted_at_the_next_cycle() -> None:
    e = estimate([wl("b", gpus=1)], [], [cq(used=0)])[("ds", "b")]
    assert e.earliest == NOW == e.latest and "fits now" in e.basis


def test_the_queue_order_decides_who_takes_the_released_quota() -> None:
    rel1 = idle_release("ds", "a", "ds/a", usage(2), idle_since=NOW, idle_seconds=60, now=NOW)
    high = wl("h", prio=1000, created="13:59")
    low = wl("b", created="13:55")
    etas = estimate([wl("a", admitted=True), low, high], [rel1])
    assert etas[("ds", "h")].earliest == NOW + timedelta(minutes=1)
    assert "you are next in cq-a" in etas[("ds", "h")].basis
    # b comes after h, which then holds the quota with no known release
    assert etas[("ds", "b")].earliest is None and "you are 2nd in cq-a (1 ahead)" in etas[("ds", "b")].basis


def test_preemption_of_lower_priorities_admits_now() -> None:
    cqs = [cq(preemption={"withinClusterQueue": "LowerPriority"})]
    rel = unbounded_release("ds", "a", "ds/low", usage(2))
    e = estimate([wl("a", admitted=True, prio=10), wl("b", prio=1000)], [rel], cqs)[("ds", "b")]
    assert e.earliest == NOW and e.latest is None
    assert "Kueue may preempt lower-priority ds/a in cq-a" in e.basis


def test_borrowing_from_the_cohort_counts_a_release_in_another_member() -> None:
    mine = cq("cq-a", gpus=0, used=0, cohortName="all")
    other = cq("cq-b", gpus=2, used=2, cohortName="all")
    holder = wl("a", admitted=True, cluster_queue="cq-b", queue="qb")
    rel = idle_release("ds", "a", "ds/a", usage(2), idle_since=NOW, idle_seconds=120, now=NOW)
    etas = estimate([holder, wl("b")], [rel], [mine, other], lqs=[lq(), lq("qb", "cq-b")])
    e = etas[("ds", "b")]
    assert e.earliest == NOW + timedelta(minutes=2) and e.latest is not None


def test_admission_checks_are_named_as_an_uncertainty() -> None:
    cqs = [cq(admissionChecksStrategy={"admissionChecks": [{"name": "prov"}]})]
    rel = finished_release("ds", "a", "ds/done", usage(2), now=NOW)
    e = estimate([wl("a", admitted=True), wl("b")], [rel], cqs)[("ds", "b")]
    assert "admission check(s) prov must pass" in e.basis


def test_no_estimate_once_admitted() -> None:
    etas = estimate([wl("a", admitted=True)], [])
    assert etas == {}


def test_hidden_cluster_queues_say_what_is_hidden_and_which_permission_shows_it() -> None:
    e = estimate([wl("a", admitted=True), wl("b")], [], cqs=[], readable=False)[("ds", "b")]
    assert e.earliest is None and e.latest is None
    assert "ClusterQueue cq-a cannot be read" in e.basis and CLUSTERQUEUE_PERMISSION in e.basis
    assert "you are next in cq-a" in e.basis


def test_hidden_pending_workloads_of_other_namespaces_take_the_latest_away() -> None:
    c = cq()
    c["status"]["pendingWorkloads"] = 3
    rel = idle_release("ds", "a", "ds/a", usage(2), idle_since=NOW, idle_seconds=60, now=NOW)
    e = estimate([wl("a", admitted=True), wl("b")], [rel], [c])[("ds", "b")]
    assert e.earliest is not None and e.latest is None
    assert "2 more pending there from namespaces you cannot read may go first" in e.basis


def test_admitted_usage_and_requests_from_workload_objects() -> None:
    a = wl("a", gpus=2, admitted=True)
    assert admitted_usage(a) == {("gpu", GPU): Decimal(2)}
    assert workload_object_requests(wl("b", gpus=1)) == {GPU: Decimal(1), "pods": Decimal(1)}


@pytest.mark.parametrize(
    ("state", "since"),
    [
        (
            {
                "idleSince": "2026-01-01T13:58:00Z",
                "admittedAt": "2026-01-01T13:40:00Z",
                "decision": "idle 2.0 of 5 min",
            },
            True,
        ),
        (
            {"idleSince": "2026-01-01T13:59:59Z", "admittedAt": "2026-01-01T13:40:00Z", "decision": "busy"},
            False,
        ),
    ],
)
def test_the_reapers_state_annotation_is_the_idle_clock(state: dict[str, Any], since: bool) -> None:
    import json

    holder = wl("a", admitted=True, owner="ws")
    holder["metadata"]["annotations"] = {IDLE_STATE_ANNOTATION: json.dumps(state)}
    rc = {
        "metadata": {
            "name": "ws",
            "namespace": "ds",
            "annotations": {
                POLICY_ANNOTATION: json.dumps(
                    {
                        "mode": "reaper",
                        "mechanism": "workload",
                        "idle_minutes": 5,
                        "initial_cooldown_minutes": 0,
                    }
                )
            },
        }
    }
    (rel,) = releases_of([holder], "ds", [rc], [], [], NOW)
    if since:
        assert rel.earliest == datetime(2026, 1, 1, 14, 3, tzinfo=UTC) and rel.latest is not None
    else:
        assert rel.earliest == NOW + timedelta(minutes=5) and rel.latest is None


def test_a_rayjob_holder_is_bounded_by_its_deadline_and_released_when_complete() -> None:
    holder = wl("a", admitted=True, owner="train", owner_kind="RayJob")
    job = {
        "metadata": {"name": "train"},
        "spec": {"activeDeadlineSeconds": 600},
        "status": {"startTime": "2026-01-01T13:55:00Z", "jobDeploymentStatus": "Running"},
    }
    (rel,) = releases_of([holder], "ds", [], [job], [], NOW)
    assert rel.latest == datetime(2026, 1, 1, 14, 5, 30, tzinfo=UTC)
    job["status"]["jobDeploymentStatus"] = "Complete"
    (rel,) = releases_of([holder], "ds", [], [job], [], NOW)
    assert rel.earliest == NOW and "finished" in rel.why


def test_holders_in_other_namespaces_have_no_known_release() -> None:
    holder = wl("a", admitted=True, ns="other")
    (rel,) = releases_of([holder], "ds", [], [], [], NOW)
    assert rel.earliest is None and rel.latest is None


def test_a_workload_further_back_counts_on_the_release_of_those_admitted_before_it() -> None:
    rel = idle_release("ds", "a", "ds/a", usage(2), idle_since=NOW, idle_seconds=60, now=NOW)
    workloads = [wl("a", admitted=True), wl("p1", created="13:51"), wl("p2", created="13:52")]
    ov = build_overview("ds", [lq()], [cq()], workloads)
    requests = {("ds", w["metadata"]["name"]): workload_object_requests(w) for w in workloads}
    # without knowing how long p1 holds its quota, p2 has no estimate
    assert estimate_admissions(ov, requests, [rel], now=NOW)[("ds", "p2")].earliest is None
    idle = estimate_admissions(ov, requests, [rel], now=NOW, holds={("ds", "p1"): Hold.for_idle(120)})
    e = idle[("ds", "p2")]
    assert e.earliest == NOW + timedelta(minutes=3) and e.latest is None  # p1 may be used: no bound
    assert "ds/p1, once admitted, releases its quota at 14:03 UTC at the earliest" in e.basis
    job = estimate_admissions(ov, requests, [rel], now=NOW, holds={("ds", "p1"): Hold.for_deadline(300)})
    e = job[("ds", "p2")]
    assert e.earliest == NOW + timedelta(minutes=1)  # p1 may end at once
    assert e.latest == NOW + timedelta(minutes=1, seconds=30 + 300 + 30)
