"""What :class:`~rayqueue_sdk.job.rayjob.RayJob` asks of the place its job runs: :class:`JobBackend`.

A RayJob runs either on an existing RayCluster (:class:`~rayqueue_sdk.job.existing.ExistingClusterJob`:
Ray's job-submission API, no RayJob object) or on a cluster it owns
(:class:`~rayqueue_sdk.job.owned.OwnedClusterJob`: a Kueue-queued ``ray.io/v1`` RayJob). The facade picks
one backend when it is made and hands every operation to it; the backends share the job's
:class:`~rayqueue_sdk.kube.session.KubeSession`, whose client and namespace are resolved on first use
(making a RayJob does no I/O).

Example:
    >>> from rayqueue_sdk.job.existing import ExistingClusterJob
    >>> from rayqueue_sdk.kube.session import KubeSession
    >>> ExistingClusterJob(KubeSession(namespace="ds"), job_name="j", cluster_name="ws").keeps_logs
    False
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Protocol

from rayqueue_sdk.job.runtime_env import PreparedRuntimeEnv
from rayqueue_sdk.job.spec import JobFields
from rayqueue_sdk.job.status import RayJobStatus

__all__ = ["JobBackend"]


class JobBackend(Protocol):
    """The operations a :class:`~rayqueue_sdk.job.rayjob.RayJob` delegates to where its job runs.

    Attributes:
        job_id: the Ray submission id, once known.
        keeps_logs: True when the job's logs go away with it (a job-owned cluster is deleted when the
            job ends), so a waiter keeps their tail while the job runs.
        stop_asked: True once :meth:`stop` asked Ray to stop the job (since the last :meth:`submit`): the
            job may read as running until the stop lands (:mod:`rayqueue_sdk.job.settle`).

    Example:
        >>> from rayqueue_sdk.job.existing import ExistingClusterJob
        >>> from rayqueue_sdk.kube.session import KubeSession
        >>> session = KubeSession(namespace="ds")
        >>> backend: JobBackend = ExistingClusterJob(session, job_name="j", cluster_name="ws")
        >>> backend.keeps_logs
        False
    """

    job_id: str | None
    keeps_logs: bool
    stop_asked: bool

    def submit(self, job: JobFields, env: PreparedRuntimeEnv) -> str:
        """Send the job with its checked runtime_env; returns its id."""
        ...

    def status(self) -> RayJobStatus:
        """The job's typed status, with the admission machine's verdict."""
        ...

    def logs(self, status: RayJobStatus | None = None) -> str:
        """The job's logs so far (``status``: the job's status when the caller has just read it, so that it
        is not read again)."""
        ...

    def follow(self, stop: threading.Event | None = None) -> Iterator[str]:
        """The job's log lines as they come; ends when the job ends or ``stop`` is set."""
        ...

    def stop(self) -> bool:
        """Stop the job; True if anything changed."""
        ...

    def delete(self) -> bool:
        """Delete the job and what it owns; False when there was nothing to delete."""
        ...
