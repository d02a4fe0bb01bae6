"""``job._api``: the one call of codeflare-sdk's private KubeRay client that its notebooks make.

codeflare-sdk's checkpointing notebook (``7_rayjob_checkpointing_example``) finds the RayCluster that KubeRay
generated for a job with ``job._api.get_job_status(name=job.name, k8s_namespace=NAMESPACE)`` and reads
``rayClusterName`` from it. ``_api`` is a private ``RayjobApi`` of KubeRay's python client there, but users
copy the cell, so :class:`PeerJobApi` answers that call the way codeflare-sdk does: the RayJob's ``status``
as a plain dict (KubeRay's field names: ``rayClusterName``, ``jobId``, ``jobStatus``,
``jobDeploymentStatus``, ...), waiting up to ``timeout`` seconds for KubeRay to set one, and ``None`` when
the RayJob does not exist or has no status in time. It is a compatibility shim, nothing more: new code reads
:meth:`RayJob.status() <rayqueue_sdk.job.rayjob.RayJob.status>` (``.cluster_name`` is ``rayClusterName``).
Any other ``RayjobApi`` method raises :class:`AttributeError` naming the public ``RayJob`` method to use.

Example:
    >>> api_shim = PeerJobApi(session)
    >>> api_shim.get_job_status(name="no-such-job", k8s_namespace="default") is None
    True
    >>> api_shim.suspend_job
    Traceback (most recent call last):
    ...
    AttributeError: codeflare-sdk's private RayjobApi.suspend_job is not emulated: use RayJob.stop()
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rayqueue_sdk.errors import NotFoundError

if TYPE_CHECKING:  # pragma: no cover
    from rayqueue_sdk.kube.session import KubeSession

__all__ = ["PeerJobApi"]

log = logging.getLogger(__name__)

#: The public RayJob method that stands for each other method of codeflare-sdk's private RayjobApi.
_INSTEAD = {
    "submit_job": "RayJob.submit()",
    "suspend_job": "RayJob.stop()",
    "resubmit_job": "RayJob.resubmit()",
    "delete_job": "RayJob.delete()",
    "wait_until_job_finished": "RayJob.wait()",
    "wait_until_job_running": "RayJob.wait() with on_progress",
    "list_jobs": "rayqueue_sdk.list_jobs() or `rayqueue job list`",
    "get_job": "RayJob.status() or RayJob.to_dict()",
}


class PeerJobApi:
    """codeflare-sdk's ``RayJob._api`` (KubeRay python client's ``RayjobApi``), reduced to
    :meth:`get_job_status`, over a :class:`~rayqueue_sdk.kube.session.KubeSession`.

    ``sleep`` is how it waits between reads (a parameter so that a test need not wait).
    """

    def __init__(self, session: KubeSession, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self._session = session
        self._sleep = sleep

    def __repr__(self) -> str:
        return f"PeerJobApi({self._session!r})"

    def get_job_status(
        self,
        name: str,
        k8s_namespace: str = "default",
        timeout: int = 60,
        delay_between_attempts: int = 5,
    ) -> dict[str, Any] | None:
        """The RayJob's ``status`` as KubeRay wrote it, as codeflare-sdk returns it: waits (re-reading every
        ``delay_between_attempts`` seconds, at most ``timeout`` seconds) while KubeRay has set none yet;
        ``None`` when the RayJob is not found or still has no status at the end (both logged, as there).

        Other API errors (forbidden, connection) raise this SDK's typed errors rather than being logged
        and turned into ``None``.

        Example::

            status = job._api.get_job_status(name=job.name, k8s_namespace="ds")
            (status or {}).get("rayClusterName")      # 'checkpointing-job-x7k2p'
        """
        from rayqueue_sdk.kube.kinds import RAYJOBS  # lazy: RayJob's import loads no Kubernetes code

        remaining = float(timeout)
        while True:
            try:
                obj = self._session.get(RAYJOBS, name=name, namespace=k8s_namespace)
            except NotFoundError:
                log.error("RayJob %s/%s is not found", k8s_namespace, name)
                return None
            status = obj.get("status")
            if isinstance(status, dict) and status:
                return status
            if remaining <= 0:
                return None
            log.info("RayJob %s/%s has no status yet, waiting...", k8s_namespace, name)
            step = max(0.0, min(float(delay_between_attempts), remaining))
            self._sleep(step)
            remaining -= max(step, 1e-3)

    def __getattr__(self, name: str) -> Any:
        instead = _INSTEAD.get(name)
        if instead is None:
            raise AttributeError(name)
        raise AttributeError(f"codeflare-sdk's private RayjobApi.{name} is not emulated: use {instead}")
