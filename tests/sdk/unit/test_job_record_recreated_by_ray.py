"""A finished job deleted from an existing cluster stays deleted, though Ray writes its record back.

Ray's job monitor (Ray 2.60) pings the job's supervisor actor once a second. When the supervisor has
written the job's terminal status and exits, and the job is deleted before the monitor notices the
exit, the monitor finds no status, takes it for a job still running, and writes ``FAILED`` /
``JOB_SUPERVISOR_ACTOR_DIED`` on a record it makes anew, with the entrypoint ``"Entrypoint not found."``
(ray-project/ray#65251, open). CI met it once: ``job.delete()`` was True, and the next ``status()``
read ``FAILED``. The race cannot be staged on a real head, so Ray's job client is replaced here by one
that returns Ray's own ``JobDetails`` as the dashboard would.
"""

from __future__ import annotations

from typing import Any

from ray.job_submission import JobDetails, JobStatus, JobType

from rayqueue_sdk.admission.cluster import JobPhase
from rayqueue_sdk.job.existing import ExistingClusterJob
from rayqueue_sdk.kube.session import KubeSession


class DashboardJobs:
    """Ray's job client as far as ``status()`` uses it: one job record, as the dashboard returns it."""

    def __init__(self, record: JobDetails) -> None:
        self.record = record

    def get_job_info(self, job_id: str) -> JobDetails:
        assert job_id == self.record.submission_id
        return self.record


def _job_reading(record: JobDetails) -> Any:
    job = ExistingClusterJob(
        KubeSession(namespace="ds"), job_name="broken-job", cluster_name="ws", job_id="broken-job-2401bb"
    )
    job._client = DashboardJobs(record)  # type: ignore[assignment]
    job.dashboard = "http://127.0.0.1:8265"
    return job.status()


def _record(entrypoint: str, message: str, error_type: str) -> JobDetails:
    return JobDetails(
        type=JobType.SUBMISSION,
        submission_id="broken-job-2401bb",
        entrypoint=entrypoint,
        status=JobStatus.FAILED,
        message=message,
        error_type=error_type,
    )


def test_a_record_ray_wrote_back_after_the_delete_reads_deleted() -> None:
    died = "Job supervisor actor died: The actor died because its owner requested to exit the actor."
    status = _job_reading(_record("Entrypoint not found.", died, "JOB_SUPERVISOR_ACTOR_DIED"))
    assert status.phase is JobPhase.DELETED
    assert "written back by its job monitor" in status.explanation
    assert status.job_id == "broken-job-2401bb"


def test_the_jobs_own_failed_record_still_reads_failed() -> None:
    status = _job_reading(_record("python broken.py", "exit code 1", "JOB_ENTRYPOINT_COMMAND_ERROR"))
    assert status.phase is JobPhase.FAILED
    assert status.reason == "JOB_ENTRYPOINT_COMMAND_ERROR"
