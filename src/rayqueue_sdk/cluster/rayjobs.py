"""A running :class:`~rayqueue_sdk.cluster.cluster.Cluster`: its addresses (``ray://``, the dashboard) and
its Ray jobs through Ray's ``JobSubmissionClient`` (:mod:`rayqueue_sdk.cluster.dashboard` finds and
checks the addresses; Ray is loaded on first use).

Example:
    >>> from rayqueue_sdk import Cluster, ClusterConfiguration
    >>> callable(Cluster(ClusterConfiguration(name="ws"), show=False).job_status)
    True
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from rayqueue_sdk.cluster.base import ClusterBase
from rayqueue_sdk.errors import NotFoundError

if TYPE_CHECKING:  # pragma: no cover
    from ray.job_submission import JobDetails, JobStatus, JobSubmissionClient

__all__ = ["RayJobsMixin"]


class RayJobsMixin(ClusterBase):
    """The addresses and the Ray jobs of a running ``Cluster``.

    Example:
        >>> [name for name in ("cluster_uri", "job_client", "list_jobs") if hasattr(RayJobsMixin, name)]
        ['cluster_uri', 'job_client', 'list_jobs']
    """

    def cluster_uri(self) -> str:
        """The ``ray://host:port`` address for ``ray.init()``.

        Raises:
            DashboardNotFoundError: the head has no address yet (queued or starting).
            ScaledToZeroError: the idle policy scaled the cluster to zero ("call cluster.resume()").

        Example:
            >>> from rayqueue_sdk import Cluster, ClusterConfiguration
            >>> cluster = Cluster(ClusterConfiguration(name="doc-cluster-uri", namespace="default"),
            ...                   client=api)
            >>> cluster.cluster_uri()   # before apply(); the class example shows a queued cluster's error
            Traceback (most recent call last):
            ...
            rayqueue_sdk.errors.ClusterNotFoundError: 404 NotFound: RayCluster 'doc-cluster-uri' does not ...

            On a ready cluster (not run here: it needs a Ray head)::

                import ray; ray.init(cluster.cluster_uri())
        """
        from rayqueue_sdk.cluster import dashboard  # lazy: the dashboard and Ray, for a running cluster

        try:
            return dashboard.cluster_uri(self.name, self.namespace, client=self.session)
        except NotFoundError:
            from rayqueue_sdk.cluster.observe import observe_one  # lazy: the read path

            # a better answer than "no address", where it applies
            observe_one(self.session, name=self.name, namespace=self.namespace)[0].refuse_if_scaled_to_zero()
            raise

    def local_client_url(self) -> str:
        """The ``ray://`` address for ``ray.init()`` from outside the Kubernetes cluster (codeflare-sdk).

        The same as :meth:`cluster_uri`: this SDK already picks the address reachable from where it runs
        (an exposed client port, else the head Service inside the cluster), and it needs no client
        certificates, so codeflare-sdk's ``generate_cert`` step has no counterpart.

        Raises:
            DashboardNotFoundError: the head has no address yet (queued or starting).

        Example::

            import ray; ray.init(address=cluster.local_client_url())
        """
        return self.cluster_uri()

    def cluster_dashboard_uri(self, override: str | None = None) -> str:
        """The Ray dashboard URL (override, Route/HTTPRoute/Ingress, in-cluster Service, status address).

        Example::

            cluster.cluster_dashboard_uri()   # 'http://127.0.0.1:41234' on the local control plane
        """
        from rayqueue_sdk.cluster import dashboard  # lazy: the dashboard and Ray, for a running cluster

        return dashboard.cluster_dashboard_uri(
            self.name, self.namespace, client=self.session, override=override
        )

    # -- jobs --------------------------------------------------------------------------------------
    @functools.cached_property
    def job_client(self) -> JobSubmissionClient:
        """Ray's ``JobSubmissionClient`` for this cluster (auth header and TLS verification handled).

        Example::

            sid = cluster.job_client.submit_job(entrypoint="python -c 'print(42)'")
            cluster.job_client.get_job_logs(sid)
        """
        from rayqueue_sdk.cluster import dashboard  # lazy: the dashboard and Ray, for a running cluster

        return dashboard.ray_job_client(
            self.cluster_dashboard_uri(), client=self.session, verify=self.config.verify_tls
        )

    def list_jobs(self) -> list[JobDetails]:
        """The Ray jobs of this cluster.

        Example::

            [j.submission_id for j in cluster.list_jobs()]
        """
        return list(self.job_client.list_jobs())

    def job_status(self, job_id: str) -> JobStatus:
        """The status of Ray job ``job_id``.

        Example::

            cluster.job_status(sid)   # <JobStatus.SUCCEEDED: 'SUCCEEDED'>
        """
        return self.job_client.get_job_status(job_id)

    def job_logs(self, job_id: str) -> str:
        """The logs of Ray job ``job_id``.

        Example::

            print(cluster.job_logs(sid))
        """
        return str(self.job_client.get_job_logs(job_id))
