"""The typed status of a :class:`~rayqueue_sdk.job.rayjob.RayJob` (pure: no I/O).

A job-owned job is read by :func:`rayqueue_sdk.admission.cluster.assess_job` (the RayJob, its Kueue Workload
and its queue position); a job on an existing cluster by :func:`assess_ray_job` (Ray's own job status).
Both readings are a :class:`~rayqueue_sdk.admission.cluster.JobAssessment` (phase, verdict, words, the
error a failed wait raises) and end up as one :class:`RayJobStatus` that keeps the verdict.

Example:
    >>> st = status_from_ray("quick-dev-test", "ds", "quick-dev-test-3f9a1c", "ws", "RUNNING", "")
    >>> st.phase, st.cluster_name, str(st)
    (<JobPhase.RUNNING: 'running'>, 'ws', "ds/quick-dev-test: running on RayCluster 'ws'")
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from rayqueue_sdk.admission.cluster import ErrorKind, JobAssessment, JobPhase, Verdict
from rayqueue_sdk.admission.eta import AdmissionEstimate
from rayqueue_sdk.admission.records import carried, record_dict
from rayqueue_sdk.display.jobs import job_html, job_text, show_job_status

__all__ = [
    "RAY_RECREATED_ENTRYPOINT",
    "RayJobStatus",
    "assess_ray_job",
    "recreated_by_ray",
    "status_from_assessment",
    "status_from_ray",
]

#: The entrypoint Ray writes on a job record it makes without the job's own (``put_status`` on a record
#: that is not there, ``dashboard/modules/job/common.py``). Ray's job monitor does that when it notices
#: the supervisor actor's exit only after the finished job was deleted: the deleted job comes back as
#: ``FAILED``/``JOB_SUPERVISOR_ACTOR_DIED`` (ray-project/ray#65251, open; Ray 2.60).
RAY_RECREATED_ENTRYPOINT = "Entrypoint not found."

# Ray's job status -> (phase, verdict, error kind of a failed wait).
_RAY_PHASES = {
    "PENDING": (JobPhase.STARTING, Verdict.WAIT, ErrorKind.NONE),
    "RUNNING": (JobPhase.RUNNING, Verdict.WAIT, ErrorKind.NONE),
    "SUCCEEDED": (JobPhase.SUCCEEDED, Verdict.DONE, ErrorKind.NONE),
    "FAILED": (JobPhase.FAILED, Verdict.FAIL, ErrorKind.FAILED),
    "STOPPED": (JobPhase.STOPPED, Verdict.FAIL, ErrorKind.FAILED),
}


@dataclass(frozen=True)
class RayJobStatus:
    """What a :class:`~rayqueue_sdk.job.rayjob.RayJob` is doing, typed.

    Attributes:
        name, namespace: the job (``job_name``) and its namespace.
        phase: a :class:`~rayqueue_sdk.admission.cluster.JobPhase`: ``QUEUED`` (with Kueue's reason and the
            ``position``), ``STARTING``, ``RUNNING``, ``SUCCEEDED``, ``FAILED`` (with KubeRay's or Ray's
            ``reason``), ``STOPPED``, ``PREEMPTED``, ``REQUEUED``, ``DEACTIVATED``, ``DELETED``.
        explanation: one sentence, quoting Kueue or KubeRay as they wrote it.
        reason, message: the reason and message behind the phase.
        position: the 0-based position in the LocalQueue, when queued and known.
        cluster_name: the real RayCluster name (``status.rayClusterName`` of a job-owned cluster).
        job_id: the Ray submission id.
        owns_cluster: True for a job-owned cluster (a KubeRay RayJob), False on an existing cluster.
        ray_status: Ray's own job status string (``PENDING``/``RUNNING``/...), when known.
        verdict: the admission machine's verdict: ``DONE`` (succeeded), ``FAIL`` (a wait raises
            :meth:`assessment`'s error), ``WAIT``.
        error_kind: which error a ``FAIL`` verdict stands for.
        eta: while a job-owned cluster waits for quota, when it may be admitted and on what basis
            (:class:`~rayqueue_sdk.admission.eta.AdmissionEstimate`); ``None`` once admitted.
        resumed_from: after a preemption, the Ray Train checkpoint the job resumed from (run folder,
            epoch), as its logs say (:mod:`rayqueue_sdk.job.resume`); ``None`` when it started fresh.

    Example:
        >>> st = RayJobStatus("j", "ds", JobPhase.QUEUED, "queued in LocalQueue 'batch' at position 2",
        ...                   position=2, owns_cluster=True)
        >>> st.done, st.to_dict()["phase"]
        (False, 'queued')
    """

    name: str
    namespace: str
    phase: JobPhase
    explanation: str
    reason: str | None = None
    message: str | None = None
    position: int | None = None
    cluster_name: str | None = None
    job_id: str | None = None
    owns_cluster: bool = False
    ray_status: str | None = None
    verdict: Verdict = Verdict.WAIT
    error_kind: ErrorKind = ErrorKind.NONE
    eta: AdmissionEstimate | None = None
    resumed_from: str | None = None

    @property
    def assessment(self) -> JobAssessment:
        """The admission machine's reading behind this status: its verdict and the error of a failed wait.

        Example:
            >>> st = status_from_ray("j", "ds", "j-1", "ws", "STOPPED", "stopped by the user")
            >>> st.assessment.verdict, type(st.assessment.error("j")).__name__
            (<Verdict.FAIL: 'fail'>, 'JobFailedError')
        """
        return carried(JobAssessment, self)

    @property
    def done(self) -> bool:
        """True once the job can no longer change on its own (succeeded, failed, stopped, deleted).

        Example:
            >>> RayJobStatus("j", "ds", JobPhase.SUCCEEDED, "the job succeeded").done
            True
        """
        return self.phase.terminal

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}: {self.explanation}"

    def __repr__(self) -> str:
        """A few lines within 80 columns (:func:`rayqueue_sdk.display.jobs.job_text`): the phase with its
        reason, the explanation, where it runs; :meth:`to_dict` and the fields have everything.

        Example:
            >>> RayJobStatus("j", "ds", JobPhase.RUNNING, "running on RayCluster 'ws'", cluster_name="ws",
            ...              job_id="j-1")
            ds/j: running
              running on RayCluster 'ws'
              cluster ws, Ray job j-1
        """
        return job_text(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(job_text(self))

    def _repr_html_(self) -> str:
        """The job's card (:func:`rayqueue_sdk.display.jobs.job_html`), without the log tail."""
        return job_html(self)

    def _ipython_display_(self) -> None:
        """As a cell's value: the job's card, unless the cell already shows the job's view with this
        status (``job.wait()`` then ``job.status()``): one box per cell."""
        show_job_status(self)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict (the phase as its string value).

        Example:
            >>> RayJobStatus("j", "ds", JobPhase.RUNNING, "running").to_dict()["phase"]
            'running'
        """
        return record_dict(
            self,
            drop=("verdict", "error_kind"),
            phase=self.phase.value,
            eta=None if self.eta is None else self.eta.to_dict(),
        )

    def __iter__(self) -> Iterator[Any]:
        """``(phase, succeeded)``, so codeflare-sdk's ``status, ready = job.status()`` unpacks the same way
        (its ``ready`` is True once the job completed) while the status stays typed.

        Example:
            >>> phase, ready = RayJobStatus("j", "ds", JobPhase.SUCCEEDED, "the job succeeded")
            >>> phase.value, ready
            ('succeeded', True)
        """
        return iter((self.phase, self.phase is JobPhase.SUCCEEDED))


def status_from_assessment(
    name: str,
    namespace: str,
    assessment: JobAssessment,
    rayjob: dict[str, Any] | None = None,
    *,
    owns_cluster: bool = True,
    ray_status: str | None = None,
) -> RayJobStatus:
    """A :class:`RayJobStatus` from the admission machine's reading (``rayjob``: the RayJob it read, for
    Ray's job status; ``owns_cluster=False`` for a job on an existing cluster).

    Example:
        >>> from rayqueue_sdk.admission.cluster import assess_job
        >>> job = {"status": {"jobDeploymentStatus": "Running", "jobStatus": "RUNNING",
        ...                   "rayClusterName": "j-x7k2p", "jobId": "j-abcde"}}
        >>> st = status_from_assessment("j", "ds", assess_job(job, None), job)
        >>> st.phase, st.cluster_name, st.job_id
        (<JobPhase.RUNNING: 'running'>, 'j-x7k2p', 'j-abcde')
    """
    if ray_status is None:
        job_status = ((rayjob or {}).get("status") or {}).get("jobStatus")
        ray_status = str(job_status) if job_status else None
    return carried(
        RayJobStatus,
        assessment,
        name=name,
        namespace=namespace,
        owns_cluster=owns_cluster,
        ray_status=ray_status,
    )


def assess_ray_job(
    job_id: str, cluster_name: str, ray_status: str, message: str | None, *, error_type: str | None = None
) -> JobAssessment:
    """Read Ray's status of a job on an existing cluster: the phase, the verdict and the words.

    ``PENDING`` (Ray is starting the driver, maybe waiting for resources) reads as ``STARTING``.

    Example:
        >>> a = assess_ray_job("j-1", "ws", "FAILED", "exit code 1", error_type="JOB_FAILED")
        >>> a.phase, a.verdict, a.explanation
        (<JobPhase.FAILED: 'failed'>, <Verdict.FAIL: 'fail'>, 'the job failed: exit code 1 (JOB_FAILED)')
    """
    value = str(getattr(ray_status, "value", ray_status)).upper()
    phase, verdict, kind = _RAY_PHASES.get(value, (JobPhase.UNKNOWN, Verdict.WAIT, ErrorKind.NONE))
    lead = {
        JobPhase.STARTING: f"submitted to RayCluster {cluster_name!r}, Ray is starting it",
        JobPhase.RUNNING: f"running on RayCluster {cluster_name!r}",
        JobPhase.SUCCEEDED: "the job succeeded",
        JobPhase.FAILED: "the job failed",
        JobPhase.STOPPED: "the job was stopped",
    }.get(phase, f"unknown Ray job status {value!r}")
    detail = message or ""
    if error_type:
        detail = f"{detail} ({error_type})" if detail else error_type
    explanation = f"{lead}: {detail}" if detail and phase.terminal else lead
    return JobAssessment(
        phase,
        verdict,
        explanation,
        error_type,
        message or None,
        cluster_name=cluster_name,
        job_id=job_id,
        error_kind=kind,
    )


def status_from_ray(
    name: str,
    namespace: str,
    job_id: str,
    cluster_name: str,
    ray_status: str,
    message: str | None,
    *,
    error_type: str | None = None,
) -> RayJobStatus:
    """A :class:`RayJobStatus` for a job on an existing cluster, from Ray's job status (read by
    :func:`assess_ray_job`).

    Example:
        >>> st = status_from_ray("j", "ds", "j-1", "ws", "FAILED", "exit code 1", error_type="JOB_FAILED")
        >>> st.phase, st.reason, st.explanation
        (<JobPhase.FAILED: 'failed'>, 'JOB_FAILED', 'the job failed: exit code 1 (JOB_FAILED)')
    """
    value = str(getattr(ray_status, "value", ray_status)).upper()
    assessment = assess_ray_job(job_id, cluster_name, value, message, error_type=error_type)
    return status_from_assessment(name, namespace, assessment, owns_cluster=False, ray_status=value)


def recreated_by_ray(entrypoint: str | None) -> bool:
    """Whether a Ray job record is one Ray's job monitor wrote back after the job was deleted (a job
    submitted through the SDK always has its own entrypoint); such a job reads as ``DELETED``.

    Example:
        >>> recreated_by_ray("Entrypoint not found."), recreated_by_ray("python train.py")
        (True, False)
    """
    return entrypoint == RAY_RECREATED_ENTRYPOINT
