"""What a job is straight after stop(): the pure decision (:func:`settle`) and the bounded, said wait
(:func:`await_stop`) that ``resubmit()`` runs first, over a scripted backend (no plane, no Ray)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from rayqueue_sdk.admission.phases import JobPhase
from rayqueue_sdk.errors import AdmissionTimeout
from rayqueue_sdk.job.rayjob import RayJob
from rayqueue_sdk.job.runtime_env import PreparedRuntimeEnv
from rayqueue_sdk.job.settle import Settling, await_stop, settle
from rayqueue_sdk.job.spec import JobFields
from rayqueue_sdk.job.status import RayJobStatus


class Readings:
    """A StopAware backend whose status follows a script (the last reading repeats)."""

    def __init__(self, phases: Sequence[JobPhase], *, stop_asked: bool = True) -> None:
        self.phases = list(phases)
        self.stop_asked = stop_asked
        self.reads = 0

    def status(self) -> RayJobStatus:
        self.reads += 1
        phase = self.phases.pop(0) if len(self.phases) > 1 else self.phases[0]
        return RayJobStatus("train", "ds", phase, f"reads {phase}")


@pytest.mark.parametrize(
    ("phase", "asked", "expected"),
    [
        (JobPhase.RUNNING, True, Settling.STOPPING),
        (JobPhase.STARTING, True, Settling.STOPPING),
        (JobPhase.RUNNING, False, Settling.LIVE),
        (JobPhase.QUEUED, True, Settling.LIVE),
        (JobPhase.DEACTIVATED, True, Settling.LIVE),
        (JobPhase.STOPPED, True, Settling.ENDED),
        (JobPhase.SUCCEEDED, False, Settling.ENDED),
        (JobPhase.DELETED, True, Settling.ENDED),
    ],
)
def test_settle(phase: JobPhase, asked: bool, expected: Settling) -> None:
    assert settle(phase, stop_asked=asked) is expected


def test_a_stop_in_flight_is_waited_for_and_said() -> None:
    said: list[str] = []
    backend = Readings([JobPhase.RUNNING, JobPhase.RUNNING, JobPhase.RUNNING, JobPhase.STOPPED])
    assert await_stop(backend, "train", timeout=30, interval=0.01, say=said.append) is JobPhase.STOPPED
    assert backend.reads == 4
    assert len(said) == 2 and "has not landed yet" in said[0] and "up to 30 s" in said[0]
    assert said[1] == "train: stop landed (stopped)"


def test_a_stop_that_never_lands_raises_and_says_nothing_was_resubmitted() -> None:
    backend = Readings([JobPhase.RUNNING])
    with pytest.raises(AdmissionTimeout) as caught:
        await_stop(backend, "train", timeout=0.05, interval=0.01, say=lambda _: None)
    assert caught.value.phase == "stopping"
    assert "the stop to land" in str(caught.value) and "nothing was resubmitted" in str(caught.value)


def test_no_stop_asked_reads_nothing() -> None:
    backend = Readings([JobPhase.RUNNING], stop_asked=False)
    assert await_stop(backend, "train", say=lambda _: pytest.fail("nothing to say")) is None
    assert backend.reads == 0


def test_a_stop_that_already_landed_is_not_waited_for() -> None:
    backend = Readings([JobPhase.STOPPED])
    assert await_stop(backend, "train", say=lambda _: pytest.fail("nothing to say")) is JobPhase.STOPPED
    assert backend.reads == 1


class StoppingBackend(Readings):
    """An existing-cluster backend whose stop lands two readings later."""

    keeps_logs = False
    job_id: str | None = "train-1"

    def __init__(self) -> None:
        super().__init__([JobPhase.RUNNING, JobPhase.RUNNING, JobPhase.STOPPED], stop_asked=False)
        self.calls: list[str] = []

    def status(self) -> RayJobStatus:
        self.calls.append("status")
        return super().status()

    def stop(self) -> bool:
        self.calls.append("stop")
        self.stop_asked = True
        return True

    def submit(self, job: JobFields, env: PreparedRuntimeEnv) -> str:
        self.calls.append("submit")
        self.job_id = "train-2"
        return "train-2"


def test_resubmit_straight_after_stop_submits_only_once_the_stop_landed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    backend = StoppingBackend()
    job = RayJob(job_name="train", entrypoint="python x.py", cluster_name="ws")
    job._backend = backend  # type: ignore[assignment]
    assert job.stop() is True
    assert job.resubmit() is True
    assert backend.calls == ["stop", "status", "status", "status", "submit"]
    assert job.job_id == "train-2"
    assert "train: the stop asked through Ray has not landed yet (running)" in capsys.readouterr().err
