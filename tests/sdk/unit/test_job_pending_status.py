"""What a job waiting for its queued or starting cluster says, and what its wait raises (pure readings)."""

from __future__ import annotations

import pytest

from rayqueue_sdk.admission.cluster import ClusterPhase, ErrorKind, JobPhase, Verdict
from rayqueue_sdk.cluster.status import ClusterStatus
from rayqueue_sdk.errors import AdmissionTimeout, ClusterDeletedError, JobFailedError, PreemptedError
from rayqueue_sdk.job.pending import _failed_status, waiting_status

KUEUE = (
    "couldn't assign flavors to pod set head: insufficient quota for cpu in flavor default-flavor, "
    "previously considered podsets requests (0) + current podset request (1) > maximum capacity (0)"
)


def _cluster(phase: ClusterPhase, words: str, **kw: object) -> ClusterStatus:
    return ClusterStatus("ws", "ds", phase, phase is ClusterPhase.READY, words, **kw)  # type: ignore[arg-type]


def test_a_queued_cluster_makes_a_queued_job_in_kueues_words() -> None:
    cluster = _cluster(
        ClusterPhase.QUEUED,
        f"queued in LocalQueue 'q' at position 1: {KUEUE} (Pending)",
        reason="Pending",
        message=KUEUE,
        position=1,
    )
    st = waiting_status("j", "ds", "j-1", cluster, timeout=900)
    assert (st.phase, st.verdict, st.done) == (JobPhase.QUEUED, Verdict.WAIT, False)
    assert st.explanation == (
        f"waiting for RayCluster 'ws' (submitted once it is ready, at most 900 s): {cluster.explanation}"
    )
    assert (st.reason, st.message, st.position) == ("Pending", KUEUE, 1)
    assert (st.job_id, st.cluster_name, st.owns_cluster) == ("j-1", "ws", False)
    assert st.assessment.error("j") is None


@pytest.mark.parametrize("phase", [ClusterPhase.ADMITTED, ClusterPhase.STARTING, ClusterPhase.READY])
def test_an_admitted_cluster_makes_a_starting_job(phase: ClusterPhase) -> None:
    st = waiting_status("j", "ds", "j-1", _cluster(phase, "starting, 0/1 workers ready"), timeout=None)
    assert st.phase is JobPhase.STARTING and st.verdict is Verdict.WAIT
    assert "(submitted once it is ready, no time limit): starting" in st.explanation


def test_a_cluster_that_stays_queued_past_the_timeout_leaves_a_failed_job() -> None:
    err = AdmissionTimeout("ws", 5.0, phase="queued", reason=KUEUE, position=0)
    st = _failed_status("j", "ds", "j-1", "ws", err)
    assert (st.phase, st.verdict, st.done, st.reason) == (
        JobPhase.FAILED,
        Verdict.FAIL,
        True,
        "AdmissionTimeout",
    )
    assert st.explanation.startswith("not submitted: ws: gave up waiting for admission after 5s")
    assert "see docs/" not in st.explanation and KUEUE in st.explanation


def test_a_cluster_deleted_meanwhile_leaves_a_deleted_job_whose_wait_raises_cluster_deleted() -> None:
    st = _failed_status(
        "j", "ds", "j-1", "ws", ClusterDeletedError("RayCluster ws was deleted while waiting")
    )
    assert st.phase is JobPhase.DELETED and st.error_kind is ErrorKind.DELETED and st.done
    assert isinstance(st.assessment.error("j"), ClusterDeletedError)


def test_a_cluster_preempted_meanwhile_leaves_a_failed_job() -> None:
    st = _failed_status("j", "ds", "j-1", "ws", PreemptedError("ws", "Preempted", "preempted by prod"))
    assert st.phase is JobPhase.FAILED and st.reason == "PreemptedError" and st.done


def test_a_job_stopped_before_its_submission_reads_stopped() -> None:
    st = _failed_status("j", "ds", "j-1", "ws", None)
    assert st.phase is JobPhase.STOPPED and st.done
    assert st.explanation == "not submitted: stopped while it waited for its cluster"
    assert isinstance(st.assessment.error("j"), JobFailedError)
