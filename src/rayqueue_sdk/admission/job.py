"""The RayJob half of the admission machine: :func:`assess_job` reads a RayJob and its Kueue Workload.

KubeRay's terminal answers (``jobStatus``, ``jobDeploymentStatus``) come first, then Kueue's (the
Workload read by :mod:`rayqueue_sdk.admission.workload`), then KubeRay's progress. The result is a
:class:`JobAssessment`: the :class:`~rayqueue_sdk.admission.cluster.JobPhase`, a verdict, Kueue's or KubeRay's
words, and the error a failed wait raises. Pure: no I/O. :mod:`rayqueue_sdk.admission.cluster` re-exports both
names.

Example:
    >>> assess_job({"status": {"jobDeploymentStatus": "Running", "jobStatus": "RUNNING"}}, None).phase
    <JobPhase.RUNNING: 'running'>
"""

from __future__ import annotations

from dataclasses import dataclass

from rayqueue_sdk.admission.checks import waiting_checks
from rayqueue_sdk.admission.phases import QUEUE_LABEL, ErrorKind, JobPhase, Obj, Verdict
from rayqueue_sdk.admission.verdict import KueueAssessment, KueueKind, kueue_verdict
from rayqueue_sdk.admission.workload import kueue_words, queued_sentence
from rayqueue_sdk.errors import ClusterDeletedError, JobFailedError, RayQueueError
from rayqueue_sdk.manifests.meta import labels_of

__all__ = ["JobAssessment", "assess_job"]


@dataclass(frozen=True)
class JobAssessment(KueueAssessment[JobPhase]):
    """The machine's reading of one observation of a RayJob: the fields every assessment has
    (:class:`~rayqueue_sdk.admission.verdict.KueueAssessment`) and what a job adds.

    Attributes:
        phase: the :class:`JobPhase`.
        verdict: ``DONE`` when the job succeeded, ``FAIL`` when it ended otherwise or was
            deactivated or deleted, ``WAIT`` while it may still progress.
        explanation: a human sentence quoting Kueue's or KubeRay's message.
        reason / message: the reason and message behind the phase.
        position: the queue position, when queued and known.
        cluster_name: ``status.rayClusterName`` (the real name of a job-owned cluster).
        job_id: ``status.jobId`` (the Ray submission id).

    Example:
        >>> assess_job({"status": {"jobDeploymentStatus": "Complete", "jobStatus": "SUCCEEDED"}}, None).phase
        <JobPhase.SUCCEEDED: 'succeeded'>
    """

    cluster_name: str | None = None
    job_id: str | None = None

    def error(self, name: str, log_tail: str = "") -> RayQueueError | None:
        """The error for a ``FAIL`` verdict (``JobFailedError``, ``PreemptedError`` or
        ``ClusterDeletedError``), or ``None``. ``RayJob.wait`` raises it.

        Example:
            >>> a = assess_job({"status": {"jobDeploymentStatus": "Failed", "jobStatus": "FAILED",
            ...                 "reason": "AppFailed", "jobId": "j-1"}}, None)
            >>> type(a.error("train")).__name__
            'JobFailedError'
        """
        if self.verdict is not Verdict.FAIL:
            return None
        if self.error_kind is ErrorKind.DELETED:
            return ClusterDeletedError(f"{name} is gone while waiting: {self.explanation}")
        decided = self.kueue_failure(name)
        if decided is not None:
            return decided
        status = "STOPPED" if self.phase is JobPhase.STOPPED else "FAILED"
        return JobFailedError(self.job_id or name, status, self.reason or self.message, log_tail)


_DEPLOYMENT_STARTING = {
    "": "",
    "Initializing": "initializing",
    "Retrying": "retrying after a failure",
    "Waiting": "waiting for a submission (InteractiveMode)",
}


def assess_job(
    rayjob: Obj | None,
    workload: Obj | None,
    *,
    position: int | None = None,
    position_unavailable: str | None = None,
) -> JobAssessment:
    """Read one observation of a RayJob (``jobDeploymentStatus``/``jobStatus``) and its Workload.

    Eviction of a running job is ``PREEMPTED`` and the wait goes on (Kueue requeues it); once
    Kueue has requeued it, ``REQUEUED``. Deactivation (``spec.active=false``) fails the wait; once
    resumed (``spec.active=true``) the job is ``QUEUED`` again, even while Kueue still shows the
    ``Deactivated`` eviction.

    Example:
        >>> job = {"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "batch"}},
        ...        "spec": {"suspend": True}, "status": {"jobDeploymentStatus": "Suspended"}}
        >>> wl = {"status": {"conditions": [{"type": "QuotaReserved", "status": "False",
        ...       "reason": "Inadmissible", "message": "ClusterQueue prod is inactive"}]}}
        >>> a = assess_job(job, wl, position=3)
        >>> a.phase, a.position
        (<JobPhase.QUEUED: 'queued'>, 3)
    """
    if rayjob is None:
        return JobAssessment(
            JobPhase.DELETED, Verdict.FAIL, "the RayJob does not exist", error_kind=ErrorKind.DELETED
        )
    status = rayjob.get("status") or {}
    spec = rayjob.get("spec") or {}
    deployment = str(status.get("jobDeploymentStatus") or "")
    job_status = str(status.get("jobStatus") or "").upper()
    ray_why = (status.get("reason") or None, status.get("message") or None)
    queue = labels_of(rayjob).get(QUEUE_LABEL) or ((workload or {}).get("spec") or {}).get("queueName")

    # What every answer about this observation carries (KubeRay's reason and message unless a branch
    # gives its own); each branch says its phase, verdict and words.
    seen = JobAssessment(
        JobPhase.UNKNOWN,
        Verdict.WAIT,
        "",
        *ray_why,
        cluster_name=status.get("rayClusterName") or None,
        job_id=status.get("jobId") or None,
    )
    out = seen.said

    # KubeRay's terminal answers first.
    if job_status == "SUCCEEDED":
        return out(JobPhase.SUCCEEDED, Verdict.DONE, "the job succeeded")
    if job_status == "STOPPED":
        return out(
            JobPhase.STOPPED, Verdict.FAIL, _job_words("the job was stopped", *ray_why), kind=ErrorKind.FAILED
        )
    if job_status == "FAILED" or deployment in ("Failed", "ValidationFailed"):
        # A FAILED Ray job is KubeRay's AppFailed; in K8sJobMode the RayJob says so only once its submitter
        # Job has finished (kuberay#1919), so the reason may not be written yet.
        why = (ray_why[0] or ("AppFailed" if job_status == "FAILED" else deployment), ray_why[1])
        return out(
            JobPhase.FAILED, Verdict.FAIL, _job_words("the job failed", *why), why, kind=ErrorKind.FAILED
        )
    if deployment == "Complete":  # Complete without a SUCCEEDED job status: KubeRay gave up on it.
        text = _job_words("the job completed without succeeding", *ray_why)
        return out(JobPhase.FAILED, Verdict.FAIL, text, kind=ErrorKind.FAILED)

    # Then Kueue's: the verdict table shared with clusters, as a job's phase.
    suspended = deployment in ("Suspended", "Suspending")
    v = kueue_verdict(workload, queue=queue, suspended=bool(spec.get("suspend")) or suspended)
    o = v.outcome(queue, position)  # the branches that mean the same for clusters and jobs
    if o is not None:
        return seen.taking(o)
    match v.kind:
        case KueueKind.EVICTED | KueueKind.RETRYING if v.requeued:
            text = queued_sentence(queue, position, f"requeued after {v.cause}: {v.words}")
            return out(JobPhase.REQUEUED, Verdict.WAIT, text, v.why, position)
        case KueueKind.EVICTED | KueueKind.RETRYING if v.cause == "deactivated":
            return out(
                JobPhase.DEACTIVATED, Verdict.FAIL, f"deactivated: {v.words}", v.why, kind=ErrorKind.EVICTED
            )
        case KueueKind.EVICTED | KueueKind.RETRYING:
            lead = "preempted by Kueue" if v.cause == "preempted" else "evicted by Kueue"
            return out(JobPhase.PREEMPTED, Verdict.WAIT, f"{lead}, Kueue will requeue it: {v.words}", v.why)
        case KueueKind.RESERVED:
            checks = waiting_checks(workload)
            tail = f"quota reserved; {checks}" if checks else v.pending_words
            return out(JobPhase.QUEUED, Verdict.WAIT, queued_sentence(queue, None, tail), v.why)

    # Admitted (or not managed): KubeRay's progress.
    if suspended:
        return out(
            JobPhase.STARTING if v.kind is KueueKind.ADMITTED else JobPhase.QUEUED,
            Verdict.WAIT,
            deployment.lower(),
        )
    if deployment == "Running" and job_status == "RUNNING":
        return out(JobPhase.RUNNING, Verdict.WAIT, "running")
    if deployment == "Running":
        text = f"the Ray job is {job_status.lower()}" if job_status else "submitting the Ray job"
        return out(JobPhase.STARTING, Verdict.WAIT, text)
    if deployment in _DEPLOYMENT_STARTING:
        lead = "admitted; " if v.kind is KueueKind.ADMITTED else ""
        return out(
            JobPhase.STARTING,
            Verdict.WAIT,
            lead + (_DEPLOYMENT_STARTING[deployment] or "waiting for KubeRay"),
        )
    return out(JobPhase.UNKNOWN, Verdict.WAIT, f"unknown jobDeploymentStatus {deployment!r}")


def _job_words(lead: str, reason: str | None, message: str | None) -> str:
    words = kueue_words(reason, message)
    return f"{lead}: {words}" if words else lead
