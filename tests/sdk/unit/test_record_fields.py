"""Records said once: the assessments' shared Kueue fields, a status built from (and read back into) its
assessment by field name, and the ``to_dict`` of records whose keys are their fields. Every field is set to
a value of its own, so a field dropped, renamed or left at its default shows. Pure: no server."""

from __future__ import annotations

import pickle
from dataclasses import FrozenInstanceError, fields
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from rayqueue_sdk.admission.cluster import (
    Assessment,
    ClusterPhase,
    ErrorKind,
    JobAssessment,
    JobPhase,
    Verdict,
    assess_cluster,
    assess_job,
)
from rayqueue_sdk.admission.eta import AdmissionEstimate
from rayqueue_sdk.admission.fit import FitAnswer, Shortage
from rayqueue_sdk.admission.idle import IdleStatus
from rayqueue_sdk.admission.overview import AdmissionCheckState, QueueSummary, WorkloadEntry
from rayqueue_sdk.admission.usage import UsageRow
from rayqueue_sdk.admission.verdict import KueueAssessment
from rayqueue_sdk.cluster.status import ClusterStatus, status_from
from rayqueue_sdk.errors import AdmissionCheckRejected
from rayqueue_sdk.job.status import RayJobStatus, status_from_assessment

ETA = AdmissionEstimate(datetime(2026, 1, 2, 3, 4, tzinfo=UTC), None, "after team-b's job ends")

SHARED = ("phase", "verdict", "explanation", "reason", "message", "position", "error_kind")


def test_both_assessments_are_the_one_kueue_assessment_with_its_fields_first() -> None:
    for cls in (Assessment, JobAssessment):
        assert issubclass(cls, KueueAssessment)
        assert tuple(f.name for f in fields(cls))[: len(SHARED)] == SHARED
    job = JobAssessment(
        JobPhase.DEACTIVATED,
        Verdict.FAIL,
        "deactivated",
        "AdmissionCheck",
        "no nodes",
        error_kind=ErrorKind.REJECTED,
    )
    cluster = Assessment(
        ClusterPhase.DEACTIVATED,
        Verdict.FAIL,
        "x",
        "AdmissionCheck",
        "no nodes",
        error_kind=ErrorKind.REJECTED,
    )
    for a in (job, cluster):
        err = a.error("ws")
        assert isinstance(err, AdmissionCheckRejected) and "no nodes" in str(err)
        assert a.why == ("AdmissionCheck", "no nodes")
        assert pickle.loads(pickle.dumps(a)) == a
        with pytest.raises(FrozenInstanceError):
            a.reason = "other"  # type: ignore[misc]


def test_a_job_status_carries_every_field_of_its_assessment_and_gives_it_back() -> None:
    a = JobAssessment(
        JobPhase.PREEMPTED,
        Verdict.WAIT,
        "preempted",
        "Preempted",
        "by team-b",
        4,
        cluster_name="j-x7k2p",
        job_id="j-abcde",
        error_kind=ErrorKind.EVICTED,
    )
    st = status_from_assessment("j", "ds", a, {"status": {"jobStatus": "RUNNING"}})
    assert (st.name, st.namespace, st.owns_cluster, st.ray_status, st.eta) == (
        "j",
        "ds",
        True,
        "RUNNING",
        None,
    )
    for f in fields(JobAssessment):
        assert getattr(st, f.name) == getattr(a, f.name), f.name
    assert st.assessment == a
    assert pickle.loads(pickle.dumps(st)) == st


def test_a_job_status_to_dict_is_its_fields_but_the_verdict() -> None:
    st = RayJobStatus(
        "j",
        "ds",
        JobPhase.QUEUED,
        "queued",
        "Pending",
        "no quota",
        2,
        "c",
        "id",
        True,
        "PENDING",
        Verdict.WAIT,
        ErrorKind.NONE,
        ETA,
        "resumed from the Ray Train run at b/p/run (epoch 2)",
    )
    assert st.to_dict() == {
        "name": "j",
        "namespace": "ds",
        "phase": "queued",
        "explanation": "queued",
        "eta": ETA.to_dict(),
        "reason": "Pending",
        "message": "no quota",
        "position": 2,
        "cluster_name": "c",
        "job_id": "id",
        "owns_cluster": True,
        "ray_status": "PENDING",
        "resumed_from": "resumed from the Ray Train run at b/p/run (epoch 2)",
    }


def test_a_cluster_status_carries_its_assessments_words_queue_and_workers() -> None:
    a = Assessment(
        ClusterPhase.QUEUED,
        Verdict.WAIT,
        "queued at 3",
        "Pending",
        "no quota",
        3,
        queue="q",
        cluster_queue="cq",
        managed=True,
        workers_ready=1,
        workers_desired=2,
        position_unavailable="forbidden",
    )
    rc = {"metadata": {"name": "ws", "namespace": "ds", "labels": {"kueue.x-k8s.io/priority-class": "hi"}}}
    st = status_from(rc, {"metadata": {"name": "wl-1"}}, assessment=a, eta=ETA)
    assert st == ClusterStatus(
        "ws",
        "ds",
        ClusterPhase.QUEUED,
        False,
        "queued at 3",
        queue="q",
        priority_class="hi",
        reason="Pending",
        message="no quota",
        position=3,
        position_unavailable="forbidden",
        cluster_queue="cq",
        workload="wl-1",
        workers_ready=1,
        workers_desired=2,
        dashboard_url="http://ws-head-svc.ds.svc:8265",
        cluster_uri="ray://ws-head-svc.ds.svc:10001",
        eta=ETA,
    )


def test_a_cluster_status_to_dict_is_its_fields_and_whether_it_scaled_to_zero() -> None:
    idle = IdleStatus("reaper", "workload", 60, "gpu")
    st = ClusterStatus(
        "ws",
        "ds",
        ClusterPhase.QUEUED,
        False,
        "queued",
        "q",
        "hi",
        "Pending",
        "m",
        1,
        "none",
        "cq",
        "wl",
        0,
        2,
        "http://d",
        "ray://c",
        idle,
        ETA,
    )
    assert st.to_dict() == {
        "name": "ws",
        "namespace": "ds",
        "phase": "queued",
        "ready": False,
        "explanation": "queued",
        "queue": "q",
        "priority_class": "hi",
        "reason": "Pending",
        "message": "m",
        "position": 1,
        "position_unavailable": "none",
        "cluster_queue": "cq",
        "workload": "wl",
        "workers_ready": 0,
        "workers_desired": 2,
        "dashboard_url": "http://d",
        "cluster_uri": "ray://c",
        "idle": idle.to_dict(),
        "eta": ETA.to_dict(),
        "scaling": None,
        "scaled_to_zero": False,
    }


def _entry() -> WorkloadEntry:
    return WorkloadEntry(
        "wl",
        "ds",
        "q",
        "pending",
        100,
        "hi",
        "RayCluster",
        "ws",
        "2026-01-01T00:00:00Z",
        "Pending",
        "no quota",
        "cq",
        0,
        True,
        (AdmissionCheckState("prov", "Pending", "m", 1),),
        12.5,
        ETA,
    )


def test_the_queue_records_to_dict_are_their_fields() -> None:
    assert _entry().to_dict() == {
        "name": "wl",
        "namespace": "ds",
        "local_queue": "q",
        "cluster_queue": "cq",
        "state": "pending",
        "priority": 100,
        "priority_class": "hi",
        "owner_kind": "RayCluster",
        "owner_name": "ws",
        "created": "2026-01-01T00:00:00Z",
        "reason": "Pending",
        "message": "no quota",
        "position": 0,
        "mine": True,
        "admission_checks": [{"name": "prov", "state": "Pending", "message": "m", "retry_count": 1}],
        "eta": ETA.to_dict(),
    }
    summary = QueueSummary("q", "ds", "cq", True, None, (_entry(),), (), 3, 1)
    assert summary.to_dict() == {
        "name": "q",
        "namespace": "ds",
        "cluster_queue_name": "cq",
        "default": True,
        "cluster_queue": None,
        "pending": [_entry().to_dict()],
        "holding": [],
        "pending_count": 3,
        "admitted_count": 1,
        "hidden_pending": 0,
    }


def test_a_fit_answer_and_a_usage_row_to_dict_are_their_fields() -> None:
    short = Shortage("cpu", "f", Decimal(8), Decimal(2), Decimal(6))
    answer = FitAnswer(
        False,
        "short of cpu",
        "q",
        "cq",
        "ml",
        {"cpu": Decimal(8)},
        {"cpu": "f"},
        {"memory": Decimal(2**30)},
        (short,),
    )
    assert answer.to_dict() == {
        "fits": False,
        "never": True,
        "reason": "short of cpu",
        "queue": "q",
        "cluster_queue": "cq",
        "cohort": "ml",
        "requests": {"cpu": "8"},
        "flavors": {"cpu": "f"},
        "borrowing": {"memory": "1Gi"},
        "shortages": [short.to_dict()],
    }
    row = UsageRow("ds", "rc", "q", 2.123456, 1.000049, 0.5, "RayJob", ("prometheus",))
    assert row.to_dict() == {
        "namespace": "ds",
        "name": "rc",
        "kind": "RayJob",
        "queue": "q",
        "gpu_hours_allocated": 2.1235,
        "gpu_hours_busy": 1.0,
        "gpu_hours_reclaimed": 0.5,
        "sources": ["prometheus"],
        "cluster_queue": None,
    }


PENDING_WL = {
    "spec": {"queueName": "q"},
    "status": {
        "conditions": [
            {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": "no quota"}
        ]
    },
}


def test_every_answer_about_a_job_carries_its_ids_and_kuberays_words_unless_kueue_gives_its_own() -> None:
    status = {"rayClusterName": "j-x7k2p", "jobId": "j-1", "reason": "Why", "message": "KubeRay says"}
    running = assess_job(
        {"status": {**status, "jobDeploymentStatus": "Running", "jobStatus": "RUNNING"}}, None
    )
    assert (running.phase, running.why, running.position, running.error_kind) == (
        JobPhase.RUNNING,
        ("Why", "KubeRay says"),
        None,
        ErrorKind.NONE,
    )
    job = {"spec": {"suspend": True}, "status": {**status, "jobDeploymentStatus": "Suspended"}}
    queued = assess_job(job, PENDING_WL, position=3)
    assert (queued.phase, queued.why, queued.position) == (JobPhase.QUEUED, ("Pending", "no quota"), 3)
    for a in (running, queued):
        assert (a.cluster_name, a.job_id) == ("j-x7k2p", "j-1")


def test_every_answer_about_a_cluster_carries_its_queue_and_workers() -> None:
    rc = {
        "metadata": {"name": "ws", "labels": {"kueue.x-k8s.io/queue-name": "q"}},
        "spec": {"suspend": True},
        "status": {"readyWorkerReplicas": 0, "desiredWorkerReplicas": 2},
    }
    queued = assess_cluster(rc, PENDING_WL, position=2, position_unavailable="partial")
    assert (queued.phase, queued.why, queued.position, queued.queue, queued.managed) == (
        ClusterPhase.QUEUED,
        ("Pending", "no quota"),
        2,
        "q",
        True,
    )
    assert (queued.workers_ready, queued.workers_desired, queued.position_unavailable) == (0, 2, "partial")
    unmanaged = assess_cluster({"metadata": {"name": "ws"}, "spec": {"suspend": True}}, None)
    assert (unmanaged.phase, unmanaged.why, unmanaged.managed) == (
        ClusterPhase.SUSPENDED,
        (None, None),
        False,
    )
