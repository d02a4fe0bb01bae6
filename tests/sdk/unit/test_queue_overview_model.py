"""The queue overview's pure parts: the model built from dicts, the admission order and "who is ahead and
why", will-it-fit against quotas, usage and the cohort, and the three renderings (text and rich within 80
columns, HTML escaped)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rayqueue_sdk import ClusterConfiguration, will_it_fit
from rayqueue_sdk.admission.fit import fit_requests, pod_requests, workload_requests
from rayqueue_sdk.admission.overview import build_overview, cluster_queue_summary, format_amount
from rayqueue_sdk.display.console import render_text
from rayqueue_sdk.display.queues import QueueView, queues_html, queues_renderable, queues_text
from rayqueue_sdk.errors import ConfigError, ForbiddenError, QueueNotFoundError
from rayqueue_sdk.kube.normalize import normalize_kueue


def cq(
    name: str,
    *,
    cohort: str | None = "ab",
    flavors: dict[str, dict[str, Any]] | None = None,
    used: dict[str, dict[str, str]] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    flavors = flavors if flavors is not None else {"f": {"cpu": {"nominalQuota": 4}}}
    covered = sorted({r for res in flavors.values() for r in res})
    group = {
        "coveredResources": covered,
        "flavors": [
            {"name": f, "resources": [{"name": r, **q} for r, q in res.items()]} for f, res in flavors.items()
        ],
    }
    status = {
        "flavorsReservation": [
            {"name": f, "resources": [{"name": r, "total": t} for r, t in res.items()]}
            for f, res in (used or {}).items()
        ]
    }
    body = {"resourceGroups": [group], **spec}
    if cohort:
        body["cohortName"] = cohort
    return {"metadata": {"name": name}, "spec": body, "status": status}


def lq(name: str, ns: str, cq_name: str, **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns, **meta}, "spec": {"clusterQueue": cq_name}}


def wl(
    name: str, ns: str, queue: str, priority: int, created: str, *, owner: str | None = None, **status: Any
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": f"raycluster-{name}-x", "namespace": ns, "creationTimestamp": created}
    meta["ownerReferences"] = [{"kind": "RayCluster", "name": owner or name, "controller": True}]
    return {
        "metadata": meta,
        "spec": {"queueName": queue, "priority": priority, "priorityClassRef": {"name": f"p{priority}"}},
        "status": status,
    }


def pending(reason: str = "Pending", message: str = "insufficient unused quota") -> dict[str, Any]:
    return {
        "conditions": [{"type": "QuotaReserved", "status": "False", "reason": reason, "message": message}]
    }


T = "2026-01-01T00:00:0{}Z"


def test_admission_order_positions_and_who_is_ahead_across_namespaces() -> None:
    objs = [
        wl("big", "ds", "q", 100, T.format(1), **pending()),
        wl("train", "team-b", "bq", 1000, T.format(5), **pending()),
        wl("mine", "ds", "q", 100, T.format(3), **pending()),
        wl("later", "ds", "q", 100, T.format(7), **pending()),
    ]
    ov = build_overview(
        "ds", [lq("q", "ds", "cq")], [cq("cq")], objs, other_local_queues=[lq("bq", "team-b", "cq")]
    )
    q = ov.queue("q")
    assert [w.owner_name for w in q.pending] == ["train", "big", "mine", "later"]
    assert [w.mine for w in q.pending] == [False, True, True, True]
    mine = q.pending[2]
    assert (
        ov.ahead_text(mine) == "2 ahead: team-b/train (priority 1000 > 100), ds/big (earlier, same priority)"
    )
    assert ov.ahead_text(q.pending[3], limit=1) == "3 ahead: team-b/train (priority 1000 > 100), and 2 more"
    assert [w.label for w in ov.mine()] == ["ds/big", "ds/mine", "ds/later"]
    assert q.pending[0].priority_class == "p1000" and q.pending[0].reason == "Pending"


@pytest.mark.parametrize(
    ("reason", "order"), [("PodsReadyTimeout", ["new", "back"]), ("Preempted", ["back", "new"])]
)
def test_a_workload_evicted_for_pods_ready_timeout_queues_from_its_eviction(
    reason: str, order: list[str]
) -> None:
    evicted = wl("back", "ds", "q", 100, T.format(1))
    evicted["status"]["conditions"] = [
        {"type": "Evicted", "status": "True", "reason": reason, "lastTransitionTime": T.format(9)},
        {"type": "QuotaReserved", "status": "False", "reason": "Pending"},
    ]
    ov = build_overview(
        "ds", [lq("q", "ds", "cq")], [cq("cq")], [evicted, wl("new", "ds", "q", 100, T.format(5))]
    )
    assert [w.owner_name for w in ov.queue("q").pending] == order


def test_finished_inactive_and_deleted_workloads_are_left_out_admitted_ones_hold_quota() -> None:
    finished = wl("done", "ds", "q", 0, T.format(1), conditions=[{"type": "Finished", "status": "True"}])
    inactive = wl("off", "ds", "q", 0, T.format(1))
    inactive["spec"]["active"] = False
    admitted = wl(
        "run",
        "ds",
        "q",
        0,
        T.format(1),
        admission={"clusterQueue": "cq"},
        conditions=[{"type": "QuotaReserved", "status": "True"}, {"type": "Admitted", "status": "True"}],
    )
    checking = wl(
        "prov",
        "ds",
        "q",
        0,
        T.format(2),
        admission={"clusterQueue": "cq"},
        conditions=[{"type": "QuotaReserved", "status": "True"}],
        admissionChecks=[{"name": "prov-check", "state": "Retry", "message": "no capacity", "retryCount": 2}],
    )
    ov = build_overview("ds", [lq("q", "ds", "cq")], [cq("cq")], [finished, inactive, admitted, checking])
    q = ov.queue("q")
    assert q.pending == ()
    assert [(w.owner_name, w.state) for w in q.holding] == [("run", "admitted"), ("prov", "reserved")]
    assert "prov-check Retry (retry 2)" in queues_text(ov)


def test_fair_sharing_admission_checks_and_v1beta1_names() -> None:
    v2 = cluster_queue_summary(
        cq(
            "a",
            fairSharing={"weight": "2"},
            admissionChecksStrategy={"admissionChecks": [{"name": "prov", "onFlavors": ["f"]}]},
        )
        | {"status": {"fairSharing": {"weightedShare": 333}}}
    )
    assert (v2.fair_weight, v2.weighted_share, v2.admission_checks) == ("2", 333, ("prov",))
    read_at_v1beta1 = {"metadata": {"name": "b"}, "spec": {"cohort": "old", "admissionChecks": ["x"]}}
    v1 = cluster_queue_summary(normalize_kueue(read_at_v1beta1, "v1beta1", "clusterqueues"))
    assert (v1.cohort, v1.admission_checks) == ("old", ("x",))
    assert cluster_queue_summary(read_at_v1beta1).cohort is None  # the renames live in the kube layer only
    ov = build_overview(
        "ds",
        [lq("q", "ds", "a")],
        [cq("a", fairSharing={"weight": "2"}) | {"status": {"fairSharing": {"weightedShare": 333}}}],
        [],
    )
    assert "fair sharing: weight 2, weighted share 333" in queues_text(ov)


def test_queue_not_found_lists_the_queues() -> None:
    ov = build_overview("ds", [lq("q", "ds", "cq"), lq("default", "ds", "cq")], [], [])
    assert [q.name for q in ov.queues] == ["default", "q"] and ov.queues[0].default
    with pytest.raises(QueueNotFoundError) as info:
        ov.queue("gpu")
    assert info.value.available == ["default", "q"]


def test_hidden_pending_counts_what_the_reader_cannot_see() -> None:
    shared = cq("cq")
    shared["status"]["pendingWorkloads"] = 5
    ov = build_overview(
        "ds", [lq("q", "ds", "cq")], [shared], [wl("mine", "ds", "q", 0, T.format(1), **pending())]
    )
    assert ov.queue("q").hidden_pending == 4
    assert ov.ahead_text(ov.queue("q").pending[0]).endswith(
        "(4 more pending in the ClusterQueue from namespaces you cannot read)"
    )


# ---------------------------------------------------------------- will it fit


def summary(name: str, **kw: Any) -> Any:
    return cluster_queue_summary(cq(name, **kw))


def test_fit_within_nominal_then_borrowing_then_short_then_never() -> None:
    a = summary("a", used={"f": {"cpu": "3"}})
    b = summary("b", used={"f": {"cpu": "1"}})
    members = [a, b]
    assert fit_requests({"cpu": Decimal(1)}, a, members).reason == (
        "fits in ClusterQueue a within its nominal quota (flavor f)"
    )
    borrow = fit_requests({"cpu": Decimal(3)}, a, members)
    assert borrow.fits and borrow.borrowing == {"cpu": Decimal(2)}
    short = fit_requests({"cpu": Decimal(5)}, a, members)
    assert short.fits is False and not short.never
    assert short.reason == (
        "does not fit now: cpu short by 1 in flavor f (needs 5, 4 available;"
        " borrowing from cohort ab included)"
    )
    never = fit_requests({"cpu": Decimal(9)}, a, members)
    assert never.never and never.reason.startswith(
        "never fits: cpu 9 is more than flavor f can ever give (8;"
    )


def test_borrowing_and_lending_limits() -> None:
    a = summary("a", flavors={"f": {"cpu": {"nominalQuota": 4, "borrowingLimit": 1}}})
    b = summary("b", flavors={"f": {"cpu": {"nominalQuota": 4, "lendingLimit": 2}}})
    assert fit_requests({"cpu": Decimal(5)}, a, [a, b]).fits is True
    assert fit_requests({"cpu": Decimal(6)}, a, [a, b]).never  # borrowingLimit 1
    c = summary("c", flavors={"f": {"cpu": {"nominalQuota": 4}}})
    assert fit_requests({"cpu": Decimal(6)}, c, [c, b]).fits is True  # b lends 2
    assert fit_requests({"cpu": Decimal(7)}, c, [c, b]).never
    zero = summary("z", flavors={"f": {"cpu": {"nominalQuota": 0, "borrowingLimit": 0}}})
    assert (
        "borrowingLimit 0: no borrowing from cohort ab"
        in fit_requests({"cpu": Decimal(1)}, zero, [zero, b]).reason
    )
    alone = summary("s", cohort=None)
    assert "no cohort to borrow from" in fit_requests({"cpu": Decimal(5)}, alone, [alone]).reason


def test_the_next_flavor_is_tried_and_an_uncovered_resource_never_fits() -> None:
    two = summary(
        "t", cohort=None, flavors={"small": {"cpu": {"nominalQuota": 1}}, "big": {"cpu": {"nominalQuota": 8}}}
    )
    answer = fit_requests({"cpu": Decimal(4), "pods": Decimal(2)}, two, [two])
    assert answer.fits and answer.flavors == {"cpu": "big"}  # pods is not covered: not counted
    gpu = fit_requests({"cpu": Decimal(1), "nvidia.com/gpu": Decimal(1)}, two, [two])
    assert gpu.never and gpu.reason == "never fits: ClusterQueue t has no quota for nvidia.com/gpu"
    busy = summary(
        "u",
        cohort=None,
        flavors={"small": {"cpu": {"nominalQuota": 1}}, "big": {"cpu": {"nominalQuota": 8}}},
        used={"big": {"cpu": "8"}},
    )
    later = fit_requests({"cpu": Decimal(4)}, busy, [busy])
    assert later.fits is False and not later.never  # small never fits, big does once freed


@given(
    nominal=st.integers(0, 16),
    used=st.integers(0, 16),
    other=st.integers(0, 16),
    other_used=st.integers(0, 16),
    ask=st.integers(1, 40),
)
def test_fit_never_admits_past_the_cohort(
    nominal: int, used: int, other: int, other_used: int, ask: int
) -> None:
    a = summary("a", flavors={"f": {"cpu": {"nominalQuota": nominal}}}, used={"f": {"cpu": str(used)}})
    b = summary("b", flavors={"f": {"cpu": {"nominalQuota": other}}}, used={"f": {"cpu": str(other_used)}})
    answer = fit_requests({"cpu": Decimal(ask)}, a, [a, b])
    if answer.fits:
        assert used + other_used + ask <= nominal + other
    elif answer.never:
        assert ask > nominal + other


def test_workload_requests_of_a_raycluster() -> None:
    pod = {
        "spec": {
            "containers": [{"resources": {"requests": {"cpu": "500m"}, "limits": {"nvidia.com/gpu": 1}}}],
            "initContainers": [{"resources": {"requests": {"cpu": "2"}}}],
        }
    }
    rc = {
        "spec": {
            "headGroupSpec": {"template": {"spec": {}}},
            "workerGroupSpecs": [{"replicas": 2, "numOfHosts": 2, "template": pod}],
        }
    }
    assert pod_requests(pod["spec"]) == {"cpu": Decimal(2), "nvidia.com/gpu": Decimal(1)}
    assert workload_requests(rc) == {"cpu": Decimal(8), "nvidia.com/gpu": Decimal(4), "pods": Decimal(5)}
    assert format_amount("memory", Decimal(1536 * 2**20)) == "1536Mi"


# ---------------------------------------------------------------- renderings


def _busy_overview() -> Any:
    long_message = "couldn't assign flavors to pod set worker-group: insufficient unused quota for cpu " * 2
    objs = [
        wl(
            f"cluster-with-a-rather-long-name-{i}",
            "data-science-team",
            "q",
            100 * i,
            T.format(i),
            **pending(message=long_message),
        )
        for i in range(4)
    ]
    objs.append(wl("<script>", "data-science-team", "q", 0, T.format(9), **pending(message="<b>x</b>")))
    shared = cq(
        "a-cluster-queue-with-a-long-name",
        flavors={
            "a-flavor-with-a-very-long-name": {
                "nvidia.com/gpu": {"nominalQuota": 8},
                "memory": {"nominalQuota": "64Gi"},
            }
        },
        used={"a-flavor-with-a-very-long-name": {"nvidia.com/gpu": "6", "memory": "80Gi"}},
    )
    return build_overview(
        "data-science-team",
        [lq("a-local-queue-with-a-long-name", "data-science-team", "a-cluster-queue-with-a-long-name")],
        [shared],
        [{**o, "spec": {**o["spec"], "queueName": "a-local-queue-with-a-long-name"}} for o in objs],
    )


def test_text_and_rich_fit_80_columns() -> None:
    ov = _busy_overview()
    text = queues_text(ov)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "3 ahead:" in text and "*0." in text
    console = render_text(queues_renderable(ov), width=80)
    assert max(len(line) for line in console.splitlines()) <= 80
    assert "80Gi/64Gi" in console and "nvidia.com/gpu" in console


def test_html_is_escaped_and_highlights_mine() -> None:
    html = queues_html(_busy_overview())
    assert "<script>" not in html and "&lt;script&gt;" in html and "&lt;b&gt;x&lt;/b&gt;" in html
    assert html.count('class="rayqueue-mine"') == 5
    assert 'class="rayqueue-ahead"' in html


def test_queue_view_refresh_keeps_the_last_overview_on_error() -> None:
    calls: list[int] = []

    def load() -> Any:
        calls.append(1)
        if len(calls) > 1:
            raise ForbiddenError(403, "Forbidden", "no")
        return _busy_overview()

    view = QueueView(load)
    first = view.overview
    assert view.refresh() is first and "403" in view.message.value
    assert repr(view) == queues_text(first)
    view.refresh_button.click()
    assert len(calls) == 3


def test_will_it_fit_refuses_bad_input_before_any_request() -> None:
    with pytest.raises(ConfigError) as info:
        will_it_fit({"name": "ws"})  # type: ignore[arg-type]
    assert info.value.field == "config"
    with pytest.raises(ConfigError) as info:
        will_it_fit(ClusterConfiguration(name="ws"), "Not_A_Queue")
    assert info.value.field == "queue"
