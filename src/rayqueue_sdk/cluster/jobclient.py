"""``RayJobClient``: Ray's job-submission client under codeflare-sdk's name and signature.

``RayJobClient(address=..., headers=..., verify=...)`` talks to a Ray dashboard with the headers and TLS
setting given, as codeflare-sdk's does (its methods, return values included: ``stop_job`` and ``delete_job``
return ``(ok, message)``). Given ``cluster=`` (a :class:`~rayqueue_sdk.cluster.cluster.Cluster`) instead
of an address, it finds the dashboard and fills the auth header and TLS setting from the SDK's client the
way ``cluster.job_client`` does. Ray is imported on first use, and nothing is sent before the first call.
Headers never appear in its repr: they carry a token.

Example:
    >>> client = RayJobClient(address="https://ray-dashboard-ws.apps.example",
    ...                       headers={"Authorization": "Bearer s3cr3t"}, verify=False)
    >>> client
    RayJobClient(address='https://ray-dashboard-ws.apps.example', verify=False, headers=['Authorization'])
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from rayqueue_sdk.cluster import dashboard
from rayqueue_sdk.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from ray.job_submission import JobDetails, JobSubmissionClient

    from rayqueue_sdk.cluster.cluster import Cluster
    from rayqueue_sdk.kube.session import SessionLike

__all__ = ["RayJobClient"]


class RayJobClient:
    """Ray's job-submission client for one Ray dashboard, with codeflare-sdk's signature.

    Args:
        address: the Ray dashboard URL (e.g. ``cluster.cluster_dashboard_uri()``). ``None`` with
            ``cluster=``: that cluster's dashboard; ``None`` alone: Ray's own default (``$RAY_ADDRESS``).
        create_cluster_cert: codeflare-sdk's mTLS certificates for the Ray client; not provided here
            (``True`` is a :class:`~rayqueue_sdk.errors.ConfigError`): the dashboard is reached over
            HTTP(S) with a bearer token instead.
        headers: HTTP headers sent with every request, e.g. ``{"Authorization": "Bearer <token>"}``.
            ``None`` with ``cluster=``: the SDK's bearer token, for an ``https`` dashboard (as
            ``cluster.job_client``); ``None`` with an address: no headers (the token is never sent to an
            address the SDK did not find itself).
        verify: verify the dashboard's TLS certificate (``True``), not (``False``), or a CA bundle path.
            With ``cluster=`` and the default, the cluster's ``verify_tls`` decides.
        cluster: a :class:`~rayqueue_sdk.cluster.cluster.Cluster` whose dashboard to use.
        client: the Kubernetes session, client or authentication object whose token fills the header
            (default: the cluster's, else the current one).

    Example:
        >>> RayJobClient(address="http://127.0.0.1:8265").get_address()
        'http://127.0.0.1:8265'
        >>> RayJobClient(address="http://127.0.0.1:8265", create_cluster_cert=True)
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: create_cluster_cert: not provided by rayqueue_sdk (got True); ...

        Against a running Ray head (not run here)::

            client = RayJobClient(address=cluster.cluster_dashboard_uri(), headers=header, verify=True)
            sid = client.submit_job(entrypoint="python mnist.py", runtime_env={"working_dir": "./"})
    """

    def __init__(
        self,
        address: str | None = None,
        create_cluster_cert: bool = False,
        headers: Mapping[str, Any] | None = None,
        verify: bool | str | None = True,
        *,
        cluster: Cluster | None = None,
        client: SessionLike = None,
    ) -> None:
        if create_cluster_cert:
            raise ConfigError(
                "create_cluster_cert",
                create_cluster_cert,
                "False: the SDK reaches the Ray dashboard over HTTP(S) with a bearer token, not mTLS "
                "client certificates (see docs/security.md)",
                problem="not provided by rayqueue_sdk",
            )
        self._cluster = cluster
        self._k8s = client
        self._address = address
        self._headers: dict[str, str] | None = (
            {str(k): str(v) for k, v in headers.items()} if headers is not None else None
        )
        self._verify = verify
        self._ray: JobSubmissionClient | None = None

    def __repr__(self) -> str:
        headers = sorted(self._headers) if self._headers else []
        return f"RayJobClient(address={self.get_address()!r}, verify={self._verify!r}, headers={headers})"

    # -- the Ray client, made on first use -----------------------------------------------------------
    def _client(self) -> JobSubmissionClient:
        if self._ray is not None:
            return self._ray
        if self._cluster is not None:
            k8s = self._k8s if self._k8s is not None else self._cluster.session.api
            address = self._address or self._cluster.cluster_dashboard_uri()
            verify = self._cluster.config.verify_tls if self._verify is True else self._verify
            self._ray = dashboard.ray_job_client(
                address,
                client=k8s,
                verify=bool(verify),
                ca_cert_path=verify if isinstance(verify, str) else None,
                auth=None if self._headers is None else False,
                headers=self._headers,
            )
            return self._ray
        if self._address is None:
            from ray.job_submission import JobSubmissionClient  # lazy: ray costs seconds to import

            self._ray = JobSubmissionClient(None, headers=self._headers, verify=self._verify)
            return self._ray
        self._ray = dashboard.ray_job_client(
            self._address,
            client=self._k8s,
            verify=self._verify is not False,
            ca_cert_path=self._verify if isinstance(self._verify, str) else None,
            auth=False,
            headers=self._headers,
        )
        return self._ray

    # -- codeflare-sdk's methods ------------------------------------------------------------------------
    def submit_job(
        self,
        entrypoint: str,
        job_id: str | None = None,
        runtime_env: dict[str, Any] | None = None,
        metadata: dict[str, str] | None = None,
        submission_id: str | None = None,
        entrypoint_num_cpus: int | float | None = None,
        entrypoint_num_gpus: int | float | None = None,
        entrypoint_memory: int | None = None,
        entrypoint_resources: dict[str, float] | None = None,
    ) -> str:
        """Submit a job; returns its submission id.

        Example::

            sid = client.submit_job(entrypoint="python -c 'print(42)'")
        """
        return str(
            self._client().submit_job(
                entrypoint=entrypoint,
                job_id=job_id,
                runtime_env=runtime_env,
                metadata=metadata,
                submission_id=submission_id,
                entrypoint_num_cpus=entrypoint_num_cpus,
                entrypoint_num_gpus=entrypoint_num_gpus,
                entrypoint_memory=entrypoint_memory,
                entrypoint_resources=entrypoint_resources,
            )
        )

    def delete_job(self, job_id: str) -> tuple[bool, str]:
        """Delete a finished job's record and logs; returns ``(deleted, message)``.

        Example::

            client.delete_job(sid)   # (True, 'Successfully deleted Job raysubmit_...')
        """
        ok = bool(self._client().delete_job(job_id))
        return ok, f"Successfully deleted Job {job_id}" if ok else f"Failed to delete Job {job_id}"

    def stop_job(self, job_id: str) -> tuple[bool, str]:
        """Stop a running job; returns ``(stopped, message)`` (False when it had already ended).

        Example::

            client.stop_job(sid)   # (True, 'Successfully stopped Job raysubmit_...')
        """
        ok = bool(self._client().stop_job(job_id))
        if ok:
            return ok, f"Successfully stopped Job {job_id}"
        return ok, f"Failed to stop Job, {job_id} could have already completed."

    def get_address(self) -> str:
        """The dashboard address (found through the cluster on first use when none was given).

        Example:
            >>> RayJobClient(address="http://127.0.0.1:8265").get_address()
            'http://127.0.0.1:8265'
        """
        if self._address is not None:
            return self._address
        return str(self._client().get_address())

    def get_job_info(self, job_id: str) -> JobDetails:
        """Ray's ``JobDetails`` of a job (status, times, entrypoint, metadata).

        Example::

            client.get_job_info(sid).status
        """
        return self._client().get_job_info(job_id)

    def get_job_logs(self, job_id: str) -> str:
        """The job's logs so far.

        Example::

            print(client.get_job_logs(sid))
        """
        return str(self._client().get_job_logs(job_id))

    def get_job_status(self, job_id: str) -> Any:
        """Ray's ``JobStatus`` of a job (``PENDING``, ``RUNNING``, ``SUCCEEDED``, ...; a ``str`` enum).

        Example::

            client.get_job_status(sid)   # <JobStatus.SUCCEEDED: 'SUCCEEDED'>
        """
        return self._client().get_job_status(job_id)

    def list_jobs(self) -> list[JobDetails]:
        """Every job the cluster knows.

        Example::

            [j.submission_id for j in client.list_jobs()]
        """
        return list(self._client().list_jobs())

    async def tail_job_logs(self, job_id: str) -> AsyncIterator[str]:
        """The job's logs as they come, until it ends (``async for lines in client.tail_job_logs(sid)``).

        Example::

            async for lines in client.tail_job_logs(sid): print(lines, end="")
        """
        async for lines in self._client().tail_job_logs(job_id):
            yield lines
