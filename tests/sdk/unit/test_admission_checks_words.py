"""The SDK's words for admission checks, retries, rejections and requeue backoff, from Workload dicts.

Pure (rayqueue_sdk.admission.checks and assess_cluster): the Workloads are written as Kueue v0.19 writes
them for seed 002's ProvisioningRequest check ``sample-prov`` (backoffLimitCount 2: three attempts).
"""

from __future__ import annotations

from typing import Any

import pytest

from rayqueue_sdk.admission.checks import backoff_sentence, rejected_check, waiting_checks
from rayqueue_sdk.admission.cluster import (
    ClusterPhase,
    ErrorKind,
    JobPhase,
    Verdict,
    assess_cluster,
    assess_job,
)
from rayqueue_sdk.errors import AdmissionCheckRejected, PreemptedError

NOW = 1767225600.0  # 2026-01-01T00:00:00Z
WL_NAME = "raycluster-ws-1a2b3"
RESERVED = {
    "type": "QuotaReserved",
    "status": "True",
    "reason": "QuotaReserved",
    "message": "Quota reserved in ClusterQueue cluster-queue",
}
NOT_FOUND = "Capacity is not found, CA will try to find it later."
REJECTED_MSG = 'AdmissionCheck in Rejected state: "sample-prov" (no nodes of that shape)'


def rc() -> dict[str, Any]:
    return {
        "metadata": {"name": "ws", "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
        "spec": {"suspend": True},
    }


def wl(
    *conditions: dict[str, Any], checks: list[dict[str, Any]] | None = None, **status: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {"conditions": list(conditions), **status}
    if checks is not None:
        body["admissionChecks"] = checks
    if any(c["type"] == "QuotaReserved" and c["status"] == "True" for c in conditions):
        body.setdefault("admission", {"clusterQueue": "cluster-queue", "podSetAssignments": []})
    return {
        "metadata": {"name": WL_NAME},
        "spec": {"queueName": "user-queue", "active": status.pop("active", True)},
        "status": body,
    }


def check(state: str, message: str = "", retry: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": "sample-prov",
        "state": state,
        "message": message,
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    if retry is not None:
        out["retryCount"] = retry
    return out


def test_quota_reserved_waits_for_the_provisioning_request_with_the_attempt() -> None:
    w = wl(RESERVED, checks=[check("Pending", NOT_FOUND, retry=1)])
    a = assess_cluster(rc(), w, check_limits={"sample-prov": 2}, now=NOW)
    assert (a.phase, a.verdict) == (ClusterPhase.QUEUED, Verdict.WAIT)
    assert a.explanation == (
        "queued in LocalQueue 'user-queue': quota reserved in ClusterQueue 'cluster-queue'; "
        f"waiting for admission check sample-prov: ProvisioningRequest {WL_NAME}-sample-prov-2 "
        f"Provisioned=False (attempt 2 of 3): {NOT_FOUND}"
    )


def test_without_the_limits_the_attempt_stands_alone() -> None:
    text = waiting_checks(wl(RESERVED, checks=[check("Pending")]))
    assert (
        text == f"waiting for admission check sample-prov: ProvisioningRequest {WL_NAME}-sample-prov-1 "
        "Provisioned=False (attempt 1)"
    )


def test_a_check_of_another_controller_is_named_without_a_request() -> None:
    w = wl(
        RESERVED,
        checks=[check("Pending", "waiting for the budget", retry=None), dict(check("Ready"), name="prov")],
    )
    assert (
        waiting_checks(w, limits={"prov": 3})
        == "waiting for admission check sample-prov (Pending): waiting for the budget"
    )


def test_the_reset_message_after_an_eviction_is_not_shown() -> None:
    w = wl(RESERVED, checks=[check("Pending", "Reset to Pending after eviction. Previously: Retry", retry=1)])
    assert waiting_checks(w, limits={"sample-prov": 2}).endswith("(attempt 2 of 3)")


def test_all_checks_ready_and_admitted_is_not_a_wait_for_checks() -> None:
    admitted = {
        "type": "Admitted",
        "status": "True",
        "reason": "Admitted",
        "message": "The workload is admitted",
    }
    w = wl(RESERVED, admitted, checks=[check("Ready", "Capacity is found in the cluster")])
    assert waiting_checks(w) is None
    a = assess_cluster(rc(), w, now=NOW)
    assert a.phase is ClusterPhase.ADMITTED


def test_a_retry_eviction_is_part_of_the_wait_with_the_next_attempt() -> None:
    message = 'Evicted due to AdmissionCheck in Retry state: "sample-prov" (Retrying after failure: no nodes)'
    w = wl(
        {"type": "Evicted", "status": "True", "reason": "AdmissionCheck", "message": message},
        {"type": "Requeued", "status": "False", "reason": "AdmissionCheck", "message": message},
        {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": message},
        checks=[check("Pending", "Reset to Pending after eviction. Previously: Retry", retry=1)],
        requeueState={"requeueAt": "2026-01-01T00:01:00Z"},
    )
    a = assess_cluster(rc(), w, now=NOW)
    assert (a.phase, a.verdict) == (ClusterPhase.QUEUED, Verdict.WAIT)
    assert a.explanation == (
        "queued in LocalQueue 'user-queue': evicted: AdmissionCheck in Retry state: \"sample-prov\" "
        "(Retrying after "
        "failure: no nodes) (AdmissionCheck); requeued, next attempt in 60 s"
    )
    backoff_over = dict(w, status=dict(w["status"], requeueState={}))
    backoff_over["status"]["conditions"] = [
        *w["status"]["conditions"][:1],
        {
            "type": "Requeued",
            "status": "True",
            "reason": "BackoffFinished",
            "message": "The workload backoff was finished",
        },
    ]
    assert assess_cluster(rc(), backoff_over, now=NOW).explanation.endswith("(AdmissionCheck); requeued")


@pytest.mark.parametrize(
    "workload",
    [
        wl(
            {
                "type": "Evicted",
                "status": "True",
                "reason": "DeactivatedDueToAdmissionCheck",
                "message": "The workload is deactivated due to " + REJECTED_MSG,
            },
            active=False,
        ),
        wl(
            RESERVED,
            {
                "type": "DeactivationTarget",
                "status": "True",
                "reason": "AdmissionCheck",
                "message": REJECTED_MSG,
            },
        ),
        wl(RESERVED, checks=[check("Rejected", "no nodes of that shape")]),
    ],
    ids=["deactivated", "deactivation-target", "check-rejected"],
)
def test_a_rejected_check_fails_the_wait_with_admission_check_rejected(workload: dict[str, Any]) -> None:
    a = assess_cluster(rc(), workload, now=NOW)
    assert (a.phase, a.verdict, a.error_kind) == (ClusterPhase.DEACTIVATED, Verdict.FAIL, ErrorKind.REJECTED)
    assert (
        a.explanation.startswith("admission check rejected: ") and "no nodes of that shape" in a.explanation
    )
    err = a.error("ws")
    assert isinstance(err, AdmissionCheckRejected) and isinstance(err, PreemptedError)
    assert "sample-prov" in str(err) and str(err).endswith(
        "(see docs/troubleshooting.md#admissioncheckrejected)"
    )


def test_resumed_after_a_rejection_is_queued_again() -> None:
    stale = {
        "type": "Evicted",
        "status": "True",
        "reason": "DeactivatedDueToAdmissionCheck",
        "message": "The workload is deactivated due to " + REJECTED_MSG,
    }
    w = wl(
        stale,
        {
            "type": "Requeued",
            "status": "True",
            "reason": "Reactivated",
            "message": "The workload was reactivated",
        },
    )
    assert rejected_check(w) is not None
    a = assess_cluster(rc(), w, now=NOW)
    assert (a.phase, a.verdict) == (ClusterPhase.QUEUED, Verdict.WAIT)


def test_pods_ready_timeout_with_a_backoff_in_kueues_words() -> None:
    message = "Exceeded the PodsReady timeout default/raycluster-ws-1a2b3"
    w = wl(
        {"type": "Evicted", "status": "True", "reason": "PodsReadyTimeout", "message": message},
        {"type": "Requeued", "status": "False", "reason": "PodsReadyTimeout", "message": message},
        requeueState={"count": 1, "requeueAt": "2026-01-01T00:01:00Z"},
    )
    assert backoff_sentence(w, now=NOW, pods_ready_timeout=300) == (
        "evicted: pods not ready in 5m (PodsReadyTimeout); requeued, next attempt in 60 s"
    )
    a = assess_cluster(rc(), w, now=NOW)
    assert (a.phase, a.verdict) == (ClusterPhase.EVICTED, Verdict.FAIL)  # the pods were stopped: as before
    assert a.explanation.startswith(
        "evicted: pods not ready (PodsReadyTimeout); requeued, next attempt in 60 s"
    )
    assert message in a.explanation


def test_no_backoff_sentence_for_other_evictions() -> None:
    w = wl({"type": "Evicted", "status": "True", "reason": "Preempted", "message": "m"})
    assert backoff_sentence(w, now=NOW) is None


def test_a_rayjob_waits_for_its_checks_and_fails_on_a_rejection() -> None:
    rayjob = {
        "metadata": {"name": "train", "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
        "spec": {"suspend": True},
        "status": {"jobDeploymentStatus": "Suspended"},
    }
    waiting = assess_job(rayjob, wl(RESERVED, checks=[check("Pending", NOT_FOUND)]))
    assert (waiting.phase, waiting.verdict) == (JobPhase.QUEUED, Verdict.WAIT)
    assert (
        "quota reserved; waiting for admission check sample-prov: ProvisioningRequest" in waiting.explanation
    )
    rejected = assess_job(rayjob, wl(RESERVED, checks=[check("Rejected", "no nodes of that shape")]))
    assert (rejected.phase, rejected.verdict) == (JobPhase.DEACTIVATED, Verdict.FAIL)
    assert isinstance(rejected.error("train"), AdmissionCheckRejected)
