"""What :class:`~rayqueue_sdk.job.rayjob.RayJob` asks of the place its job runs: :class:`JobBackend`.

A RayJob runs either on an existing RayCluster (:class:`~rayqueue_sdk.job.existing.ExistingClusterJob`:
Ray's job-submission API, no RayJob object) or on a cluster it owns
(:class:`~rayqueue_sdk.job.owned.OwnedClusterJob`: a Kueue-queued ``ray.io/v1`` RayJob). The facade picks
one backend when it is made and hands every operation to it; the backends share :class:`KubeTarget`,
the Kubernetes client and namespace resolved on first use (making a RayJob does no I/O).

Example:
    >>> target = KubeTarget(None, "ds")
    >>> target.namespace
    'ds'
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

from rayqueue_sdk.job.runtime_env import PreparedRuntimeEnv
from rayqueue_sdk.job.spec import JobFields
from rayqueue_sdk.job.status import RayJobStatus

if TYPE_CHECKING:  # pragma: no cover
    from kubernetes.client import ApiClient

    from rayqueue_sdk.kube.client import ClientSource

__all__ = ["JobBackend", "KubeTarget"]


class KubeTarget:
    """The Kubernetes client and namespace of a job, resolved on first use and then kept.

    ``client``: an ``ApiClient``, an authentication object, or ``None`` for the current login;
    ``namespace``: ``None`` for the client's current namespace.

    Example:
        >>> KubeTarget(None, "team-a").namespace
        'team-a'
    """

    def __init__(self, client: ApiClient | ClientSource | None, namespace: str | None) -> None:
        self._source = client
        self._api: ApiClient | None = None
        self._namespace = namespace

    @property
    def api(self) -> ApiClient:
        """The Kubernetes ``ApiClient`` (built from the login on first use)."""
        from rayqueue_sdk.kube.client import get_client  # lazy: the API client

        if self._api is None:
            self._api = get_client(self._source)
        return self._api

    @property
    def namespace(self) -> str:
        """The namespace given, or the client's current one."""
        from rayqueue_sdk.kube.client import default_namespace  # lazy: the API client

        if self._namespace is None:
            self._namespace = default_namespace(self.api)
        return self._namespace


class JobBackend(Protocol):
    """The operations a :class:`~rayqueue_sdk.job.rayjob.RayJob` delegates to where its job runs.

    Attributes:
        job_id: the Ray submission id, once known.
        keeps_logs: True when the job's logs go away with it (a job-owned cluster is deleted when the
            job ends), so a waiter keeps their tail while the job runs.

    Example:
        >>> from rayqueue_sdk.job.existing import ExistingClusterJob
        >>> backend: JobBackend = ExistingClusterJob("j", "ws", KubeTarget(None, "ds"))
        >>> backend.keeps_logs
        False
    """

    job_id: str | None
    keeps_logs: bool

    def submit(self, job: JobFields, env: PreparedRuntimeEnv) -> str:
        """Send the job with its checked runtime_env; returns its id."""
        ...

    def status(self) -> RayJobStatus:
        """The job's typed status, with the admission machine's verdict."""
        ...

    def logs(self) -> str:
        """The job's logs so far."""
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
