"""The fair-share sentence a pending workload gets (rayqueue_sdk.admission.fairshare), from ClusterQueue dicts
shaped as Kueue v0.19 publishes them (``status.fairSharing.weightedShare``, ``status.pendingWorkloads``)."""

from __future__ import annotations

from typing import Any

from rayqueue_sdk.admission.cluster import assess_cluster
from rayqueue_sdk.admission.fairshare import cohort_of, fair_share_sentence, weighted_share
from rayqueue_sdk.cluster.kueue_context import fair_share_for, waits_for_quota
from rayqueue_sdk.kube.normalize import normalize_kueue


def cq(
    name: str, share: int | None, pending: int = 1, cohort: str | None = "ml", v1beta1: bool = False
) -> Any:
    spec: dict[str, Any] = {}
    if cohort:
        spec["cohort" if v1beta1 else "cohortName"] = cohort
    status: dict[str, Any] = {"pendingWorkloads": pending}
    if share is not None:
        status["fairSharing"] = {"weightedShare": share}
    return {"metadata": {"name": name}, "spec": spec, "status": status}


def test_a_lower_share_with_pending_work_goes_first_and_is_named() -> None:
    queues = [cq("team-a-cq", 420, pending=3), cq("team-b-cq", 100)]
    assert fair_share_sentence("team-a-cq", queues) == "behind team-b-cq's workloads: fair share 0.42 vs 0.10"
    # and team-b, whose share is lower, is behind no one
    assert fair_share_sentence("team-b-cq", queues) is None


def test_only_competitors_in_the_same_cohort_with_pending_workloads_count() -> None:
    queues = [
        cq("a", 500),
        cq("idle", 0, pending=0),  # nothing pending: it takes nothing from a
        cq("elsewhere", 0, cohort="other"),
        cq("no-cohort", 0, cohort=None),
        cq("equal", 500),  # equal share: Kueue breaks the tie by age, not by share
    ]
    assert fair_share_sentence("a", queues) is None


def test_two_are_named_lowest_first_and_the_rest_counted() -> None:
    queues = [cq("a", 900), cq("c", 300), cq("b", 100), cq("d", 200), cq("e", 950)]
    assert fair_share_sentence("a", queues) == (
        "behind b's and d's workloads (and 1 more): fair share 0.90 vs 0.10 / 0.20"
    )


def test_fair_sharing_off_or_unknown_queue_says_nothing() -> None:
    assert fair_share_sentence("a", [cq("a", None), cq("b", 0)]) is None
    assert fair_share_sentence("missing", [cq("b", 0)]) is None
    assert fair_share_sentence("a", [cq("a", 300, cohort=None), cq("b", 0)]) is None


def test_v1beta1_cohort_field_and_odd_share_values() -> None:
    # spec.cohort (v1beta1) is renamed where it is read, in the kube layer: the admission layer sees
    # v1beta2 names only
    assert cohort_of(normalize_kueue(cq("a", 1, v1beta1=True), "v1beta1", "clusterqueues")) == "ml"
    assert cohort_of(cq("a", 1, v1beta1=True)) is None
    assert weighted_share({"status": {"fairSharing": {"weightedShare": "250"}}}) == 250
    assert weighted_share({"status": {"fairSharing": {"weightedShare": True}}}) is None
    assert weighted_share({"status": {"fairSharing": {"weightedShare": "x"}}}) is None


def test_the_sentence_joins_kueues_pending_words() -> None:
    cluster = {
        "metadata": {"name": "ws", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "q"}},
        "spec": {"suspend": True},
    }
    message = "couldn't assign flavors to pod set head: insufficient unused quota for cpu in flavor f"
    workload = {
        "metadata": {"name": "raycluster-ws", "namespace": "team-a"},
        "spec": {"queueName": "q", "active": True},
        "status": {"conditions": [{"type": "QuotaReserved", "status": "False", "reason": "Pending",
                                   "message": message}]},
    }  # fmt: skip
    fair = "behind team-b-cq's workloads: fair share 0.42 vs 0.10"
    reading = assess_cluster(cluster, workload, fair_share=fair)
    assert reading.explanation.endswith(f"{message} (Pending); {fair}"), reading.explanation
    assert fair not in assess_cluster(cluster, workload).explanation


def test_only_a_workload_waiting_for_quota_is_looked_up() -> None:
    pending = {"spec": {"queueName": "q"}, "status": {"conditions": []}}
    assert waits_for_quota(pending)
    assert not waits_for_quota({"spec": {"active": False}})
    assert not waits_for_quota({"status": {"conditions": [{"type": "Finished", "status": "True"}]}})
    assert not waits_for_quota(None)
    assert fair_share_for(None, pending) is None  # no client: nothing is read
