"""RayJob over its JobBackend: the facade delegates, and ``wait`` acts on the assessment's verdict.

A scripted backend stands in for the cluster (no control plane, no Ray): each ``status()`` returns the
next reading, so every branch of ``wait`` is driven by what the assessment decided.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from rayqueue_sdk.admission.cluster import ErrorKind, JobPhase, Verdict, assess_job
from rayqueue_sdk.config.models import ManagedClusterConfig
from rayqueue_sdk.errors import AdmissionTimeout, ClusterDeletedError, JobFailedError, PreemptedError
from rayqueue_sdk.job.backend import JobBackend
from rayqueue_sdk.job.existing import ExistingClusterJob
from rayqueue_sdk.job.owned import OwnedClusterJob
from rayqueue_sdk.job.rayjob import RayJob
from rayqueue_sdk.job.runtime_env import PreparedRuntimeEnv
from rayqueue_sdk.job.spec import JobFields
from rayqueue_sdk.job.status import RayJobStatus, status_from_assessment, status_from_ray
from rayqueue_sdk.kube.session import KubeSession


class ScriptedBackend:
    """A JobBackend whose status follows a script (the last reading repeats)."""

    keeps_logs = False
    stop_asked = False

    def __init__(self, readings: Sequence[RayJobStatus], logs: str = "line 1\nline 2\nboom") -> None:
        self.job_id: str | None = None
        self.readings = list(readings)
        self.text = logs
        self.calls: list[str] = []

    def submit(self, job: JobFields, env: PreparedRuntimeEnv) -> str:
        self.calls.append(f"submit {job.entrypoint}")
        self.job_id = "j-1"
        return "j-1"

    def status(self) -> RayJobStatus:
        self.calls.append("status")
        return self.readings.pop(0) if len(self.readings) > 1 else self.readings[0]

    def logs(self, status: RayJobStatus | None = None) -> str:
        self.calls.append("logs")
        return self.text

    def follow(self, stop: threading.Event | None = None) -> Iterator[str]:
        return iter(self.text.splitlines())

    def stop(self) -> bool:
        self.calls.append("stop")
        return True

    def delete(self) -> bool:
        self.calls.append("delete")
        return True


def owned(deployment: str, job_status: str = "", **status: Any) -> RayJobStatus:
    rayjob = {
        "status": {"jobDeploymentStatus": deployment, "jobStatus": job_status, "jobId": "j-1", **status}
    }
    return status_from_assessment("train", "ds", assess_job(rayjob, None), rayjob)


def ray(state: str, message: str = "", error_type: str | None = None) -> RayJobStatus:
    return status_from_ray("train", "ds", "train-1", "ws", state, message, error_type=error_type)


def job_on(backend: ScriptedBackend, *, existing: bool = False) -> RayJob:
    where: dict[str, Any] = (
        {"cluster_name": "ws"} if existing else {"cluster_config": ManagedClusterConfig(num_workers=1)}
    )
    job = RayJob(job_name="train", entrypoint="python x.py", **where)
    job._backend = backend
    return job


def test_the_backend_is_chosen_once_from_the_arguments() -> None:
    assert isinstance(RayJob("j", "python x.py", cluster_name="ws")._backend, ExistingClusterJob)
    assert isinstance(
        RayJob("j", "python x.py", cluster_config=ManagedClusterConfig())._backend, OwnedClusterJob
    )
    # Both satisfy the protocol (checked by mypy too); keeps_logs tells a waiter to keep the log tail.
    backends: list[JobBackend] = [
        ExistingClusterJob(KubeSession(namespace="ds"), job_name="j", cluster_name="ws"),
        OwnedClusterJob(KubeSession(namespace="ds"), name="j"),
    ]
    assert [b.keeps_logs for b in backends] == [False, True]


def test_facade_delegates_every_operation() -> None:
    backend = ScriptedBackend([ray("RUNNING")])
    job = job_on(backend, existing=True)
    assert job.submit() == "j-1" and job.job_id == "j-1"
    assert job.status().phase is JobPhase.RUNNING and job.cluster_name_in_status == "ws"
    assert job.logs() == backend.text and list(job.logs(follow=True))[-1] == "boom"
    assert job.stop() is True and job.delete() is True
    assert backend.calls == ["submit python x.py", "status", "logs", "stop", "delete"]


def test_job_id_is_the_backends() -> None:
    job = RayJob.attach("j", cluster_name="ws", job_id="j-abc123")
    assert job._backend.job_id == "j-abc123" == job.job_id


def test_wait_returns_on_a_done_verdict() -> None:
    seen: list[JobPhase] = []
    backend = ScriptedBackend(
        [owned("Initializing"), owned("Running", "RUNNING"), owned("Complete", "SUCCEEDED")]
    )
    st = job_on(backend).wait(timeout=10, on_progress=lambda s: seen.append(s.phase))
    assert st.assessment.verdict is Verdict.DONE
    assert seen == [JobPhase.STARTING, JobPhase.RUNNING, JobPhase.SUCCEEDED]


def test_wait_raises_the_assessments_job_failed_error_with_the_log_tail() -> None:
    backend = ScriptedBackend([owned("Failed", "FAILED", reason="AppFailed", message="exit 1")])
    with pytest.raises(JobFailedError) as info:
        job_on(backend).wait(timeout=10, log_lines=2)
    assert (info.value.job_id, info.value.status, info.value.reason) == ("j-1", "FAILED", "AppFailed")
    assert info.value.log_tail == "line 2\nboom"


def test_wait_on_a_ray_failure_without_error_type_carries_rays_message_as_reason() -> None:
    with pytest.raises(JobFailedError) as info:
        job_on(ScriptedBackend([ray("STOPPED", "stopped by the user")]), existing=True).wait(timeout=10)
    assert (info.value.status, info.value.reason) == ("STOPPED", "stopped by the user")


def test_wait_goes_on_through_preemption_unless_asked_to_raise() -> None:
    preempted = RayJobStatus(
        "train", "ds", JobPhase.PREEMPTED, "preempted by Kueue", reason="InClusterQueue", message="to fit x"
    )
    assert preempted.assessment.verdict is Verdict.WAIT
    done = owned("Complete", "SUCCEEDED")
    assert job_on(ScriptedBackend([preempted, done])).wait(timeout=10).phase is JobPhase.SUCCEEDED
    with pytest.raises(PreemptedError) as info:
        job_on(ScriptedBackend([preempted, done])).wait(timeout=10, raise_on_preemption=True)
    assert (info.value.reason, info.value.message) == ("InClusterQueue", "to fit x")


def test_wait_fails_on_a_lost_cluster_and_on_deletion() -> None:
    lost = RayJobStatus(
        "train", "ds", JobPhase.PREEMPTED, "lost with its head", reason="Deactivated", message="gone",
        verdict=Verdict.FAIL, error_kind=ErrorKind.EVICTED,
    )  # fmt: skip
    with pytest.raises(PreemptedError, match="Deactivated"):
        job_on(ScriptedBackend([lost]), existing=True).wait(timeout=10)
    deleted = RayJobStatus(
        "train", "ds", JobPhase.DELETED, "the RayJob does not exist",
        verdict=Verdict.FAIL, error_kind=ErrorKind.DELETED,
    )  # fmt: skip
    with pytest.raises(ClusterDeletedError, match="train is gone while waiting: the RayJob does not exist"):
        job_on(ScriptedBackend([deleted])).wait(timeout=10)


def test_wait_times_out_with_the_last_reading() -> None:
    queued = RayJobStatus("train", "ds", JobPhase.QUEUED, "queued in 'batch' at position 1", position=1)
    with pytest.raises(AdmissionTimeout) as info:
        job_on(ScriptedBackend([queued])).wait(timeout=0.2)
    assert (info.value.phase, info.value.position) == ("queued", 1)
