"""``Cluster``: a long-running RayCluster described by a
:class:`~rayqueue_sdk.config.models.ClusterConfiguration`.

The constructor keeps the configuration (no I/O, no credentials): :meth:`Cluster.to_dict` /
:meth:`Cluster.to_yaml` render the ``ray.io/v1`` RayCluster offline. With a connection (``login()``,
a kubeconfig, or ``client=``), :meth:`Cluster.apply` checks the LocalQueue and the priority class and
sends it (server-side apply), :meth:`Cluster.wait_ready` waits explaining Kueue's decisions,
:meth:`Cluster.status` reads a typed :class:`~rayqueue_sdk.cluster.status.ClusterStatus`, and
:meth:`Cluster.down` gives the resources back to the queue.

This module is the lifecycle; ``Cluster`` gets the rest from one module per concept:
:mod:`~rayqueue_sdk.cluster.base` (the configuration rendered offline, the connection),
:mod:`~rayqueue_sdk.cluster.card` (the notebook card), :mod:`~rayqueue_sdk.cluster.rayjobs` (the
addresses and Ray jobs of a running cluster) and :mod:`~rayqueue_sdk.cluster.scale_to_zero`
(deactivate/resume and idle scale-to-zero).

Example:
    >>> from rayqueue_sdk.config.models import ClusterConfiguration
    >>> Cluster(ClusterConfiguration(name="ws", local_queue="team-q")).to_dict()["kind"]
    'RayCluster'
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rayqueue_sdk.cluster.applied import AppliedCluster
from rayqueue_sdk.cluster.base import one_client
from rayqueue_sdk.cluster.card import CardMixin
from rayqueue_sdk.cluster.scale_to_zero import ScaleToZeroMixin
from rayqueue_sdk.cluster.status import DEFAULT_TIMEOUT, ClusterStatus, not_found_status, status_from
from rayqueue_sdk.config.models import ClusterConfiguration
from rayqueue_sdk.display.environment import is_notebook
from rayqueue_sdk.display.live import execution_count
from rayqueue_sdk.display.progress import progress_log_level, wait_progress
from rayqueue_sdk.errors import (
    AdmissionTimeout,
    AlreadyExistsError,
    ClusterNotFoundError,
    NotFoundError,
    OutcomeUnknownError,
)

if TYPE_CHECKING:  # pragma: no cover
    from rayqueue_sdk.cluster.observe import ClusterDetails
    from rayqueue_sdk.kube.session import KubeSession, SessionLike

__all__ = ["Cluster", "get_cluster"]

log = logging.getLogger(__name__)

#: Seconds to wait for the dashboard after the cluster is ready, when ``timeout=None``.
_DASHBOARD_TIMEOUT = 120.0


class Cluster(ScaleToZeroMixin, CardMixin):
    """A RayCluster you can render offline, apply, wait on, use and give back.

    The constructor only checks its argument: it does no I/O and needs no credentials, so a configuration
    can be reviewed as YAML (a dry run) anywhere. ``client`` (an ``ApiClient`` or an authentication
    object) overrides the process-wide login for this cluster only.

    In a notebook (``show=None``; ``show=False``: never) the cluster shows its box when built, as the
    peer's does, and again as a cell's last expression: what the configuration asks for, said offline,
    with Apply, Down (confirmed first) and "Wait for the cluster" buttons
    (:class:`~rayqueue_sdk.display.controls.ClusterControls`). Nothing is read from the API server until a
    button is clicked; then the box follows the cluster as ``apply()``'s card does.

    Example:
        >>> from rayqueue_sdk.config.models import ClusterConfiguration
        >>> cluster = Cluster(ClusterConfiguration(name="my-workspace-cluster", num_workers=2,
        ...     worker_cpu_requests=2, worker_memory_requests=8,
        ...     worker_extended_resource_requests={"nvidia.com/gpu": 1}, local_queue="ds-workspace-queue",
        ...     labels={"kueue.x-k8s.io/priority-class": "rd-priority"}))
        >>> cluster.to_dict()["spec"]["workerGroupSpecs"][0]["rayStartParams"]["num-gpus"]
        '1'
        >>> "kueue.x-k8s.io/queue-name: ds-workspace-queue" in cluster.to_yaml()
        True

        Applied (here to a local control plane without Ray; ``api`` is its client, ``session`` a
        :class:`~rayqueue_sdk.kube.session.KubeSession` over it) in a LocalQueue (of a namespace of its own)
        whose ClusterQueue has no quota, the cluster waits in the queue and has no Ray address yet:

        >>> from rayqueue_sdk.kube.kinds import Kind
        >>> _ = session.apply(Kind("", "v1", "namespaces", namespaced=False),
        ...     {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doc-cluster"}})
        >>> kueue = {"apiVersion": "kueue.x-k8s.io/v1beta2"}
        >>> _ = session.apply(Kind("kueue.x-k8s.io", "v1beta2", "clusterqueues", namespaced=False),
        ...     {**kueue, "kind": "ClusterQueue", "metadata": {"name": "doc-cluster-cq"},
        ...      "spec": {"namespaceSelector": {}, "resourceGroups": []}})
        >>> _ = session.apply(Kind("kueue.x-k8s.io", "v1beta2", "localqueues"),
        ...     {**kueue, "kind": "LocalQueue",
        ...      "metadata": {"name": "doc-cluster-q", "namespace": "doc-cluster"},
        ...      "spec": {"clusterQueue": "doc-cluster-cq"}})
        >>> queued = Cluster(ClusterConfiguration(name="doc-cluster-queued", namespace="doc-cluster",
        ...     num_workers=1, local_queue="doc-cluster-q"), client=api)
        >>> queued.apply()
        doc-cluster/doc-cluster-queued: applied (RayCluster generation 1)
          cluster.wait_ready() waits until it is ready; cluster.status() reads it
        >>> queued.status().phase
        <ClusterPhase.QUEUED: 'queued'>
        >>> d = queued.details(show=False); d.gpus, [g.name for g in d.groups]
        (0, ['worker-group'])
        >>> queued.cluster_uri()
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.DashboardNotFoundError: 404 NotFound: no Ray address for RayCluster ...
        >>> queued.down()
        True

        With Ray, once admitted (not run here)::

            cluster.apply(); cluster.wait_ready(); ray.init(cluster.cluster_uri()); cluster.down()
    """

    def __init__(
        self,
        config: ClusterConfiguration,
        *,
        client: SessionLike = None,
        api_client: SessionLike = None,
        show: bool | None = None,
    ) -> None:
        super().__init__(config, client=client, api_client=api_client)
        if show is not False and is_notebook() and execution_count() is not None:  # a kernel's cell
            self._controls().live.show_once()

    def _manifest(self, session: KubeSession, *, refuse_foreign: str | None = None) -> dict[str, Any]:
        """The manifest to send: one preflight (queues, priority class, the existing object), then the
        pure decision (:mod:`rayqueue_sdk.cluster.preflight`)."""
        from rayqueue_sdk.cluster.preflight import decide, fetch_facts  # lazy: apply's checks

        facts = fetch_facts(
            session,
            name=self.name,
            namespace=self.namespace,
            local_queue=self.config.local_queue,
            priority_class=self.config.priority_class,
            read_existing=refuse_foreign is not None,
            worker_groups=len(self.config.resolved_worker_groups()),
            password_secret=self.config.redis_password_secret,
        )
        self._existing_seen = dict(facts.existing) if facts.existing is not None else None
        self._queues_seen = list(facts.queue_objects) if facts.queue_listing == "listed" else None
        return decide(
            self.to_dict(),
            facts,
            local_queue=self.config.local_queue,
            priority_class=self.config.priority_class,
            refuse_foreign=refuse_foreign,
            elastic_by_default=self.config.elastic_by_default,
        )

    # -- lifecycle ---------------------------------------------------------------------------------
    def apply(self, force: bool = False) -> AppliedCluster:
        """Create or update the RayCluster (server-side apply, field manager ``rayqueue-sdk``); idempotent.

        The LocalQueue, the WorkloadPriorityClass and an existing RayCluster of that name are read first, in
        one round trip (:mod:`rayqueue_sdk.cluster.preflight`). Without ``local_queue`` the
        namespace's default LocalQueue is used (Kueue's rule: one named ``default``; the peer's
        annotation ``kueue.x-k8s.io/default-queue: "true"`` too). ``force=True`` takes over fields
        another manager owns. Returns the RayCluster as stored: an
        :class:`~rayqueue_sdk.cluster.applied.AppliedCluster`, a ``dict`` in code
        (``cluster.apply()["metadata"]["uid"]``) that shows as the cluster's card in a notebook and as two
        lines elsewhere, rather than the whole object.

        Raises:
            QueueNotFoundError: the LocalQueue does not exist (lists those that do).
            PriorityClassNotFoundError: the priority class does not exist (lists those that do).
            ConfigError: e.g. autoscaling under a (default) queue with ``elastic=False``.
            ForbiddenError: the identity may not write RayClusters there (names verb and resource).
            ConflictError: the cluster of that name was not made by rayqueue_sdk, or another field
                manager owns a field (``force=True`` takes it over).

        Example:
            >>> cluster = Cluster(ClusterConfiguration(name="doc-cluster-apply", namespace="default"),
            ...                   client=api)
            >>> cluster.apply()
            default/doc-cluster-apply: applied (RayCluster generation 1)
              cluster.wait_ready() waits until it is ready; cluster.status() reads it
            >>> cluster.apply().generation   # twice is fine: the second is a no-op
            1
            >>> cluster.down()
            True
        """
        from rayqueue_sdk.kube.kinds import RAYCLUSTERS  # lazy: API calls
        from rayqueue_sdk.scaling import policy as scaling  # lazy: scale-to-zero, loaded on first use

        session = self.session
        manifest = self._manifest(
            session, refuse_foreign=None if force else "apply(force=True) would take it over"
        )
        # never let this edit re-activate a cluster its idle policy is scaling to zero (kueue#6719)
        scaling.settle_before_edit(session, self._existing_seen)
        stored = session.apply(RAYCLUSTERS, manifest, force=force)
        log.info("%s/%s: applied", self.namespace, self.name)
        if self.idle_policy is not None:
            self._enable(session, stored, self.idle_policy)
        self._show_card(session, stored)
        return AppliedCluster(stored, show_box=self._box_in_cell)

    def up(self) -> AppliedCluster:
        """Create the RayCluster (the seed-000 form); an existing one is an :class:`AlreadyExistsError`.
        Returns what :meth:`apply` returns.

        A create whose answer was lost is settled by reading the RayCluster back: there as sent, it is
        returned; absent, it is created. When reading back cannot settle it,
        :class:`~rayqueue_sdk.errors.OutcomeUnknownError` says the RayCluster may exist and that
        :meth:`apply` settles it.

        Example:
            >>> cluster = Cluster(ClusterConfiguration(name="doc-cluster-up", namespace="default"),
            ...                   client=api)
            >>> cluster.up()
            default/doc-cluster-up: applied (RayCluster generation 1)
              cluster.wait_ready() waits until it is ready; cluster.status() reads it
            >>> cluster.up()
            Traceback (most recent call last):
            ...
            rayqueue_sdk.errors.AlreadyExistsError: 409 AlreadyExists: RayCluster default/doc-cluster-up ...
            >>> cluster.down()
            True

            Then, with Ray (not run here)::

                cluster.wait_ready()
        """
        from rayqueue_sdk.kube.kinds import RAYCLUSTERS  # lazy: API calls

        session = self.session
        manifest = self._manifest(session)
        try:
            stored = session.create(RAYCLUSTERS, manifest)
        except AlreadyExistsError as err:
            raise AlreadyExistsError(
                409,
                "AlreadyExists",
                f"RayCluster {self.namespace}/{self.name} already exists: use apply() to update it, "
                f"get_cluster({self.name!r}, {self.namespace!r}) to adopt it, or down() first",
            ) from err
        except OutcomeUnknownError as err:  # the create's answer was lost and reading back did not settle it
            raise OutcomeUnknownError(
                err.verb,
                err.resource,
                err.namespace,
                err.name,
                err.why,
                "the RayCluster may exist: cluster.apply() settles it (it creates or updates, whichever is "
                "needed), cluster.status() reads what is there",
            ) from err
        log.info("%s/%s: created", self.namespace, self.name)
        if self.idle_policy is not None:
            self._enable(session, stored, self.idle_policy)
        self._show_card(session, stored)
        return AppliedCluster(stored, show_box=self._box_in_cell)

    def down(self, force: bool = False) -> bool:
        """Delete the RayCluster (its pods and Kueue Workload go with it); idempotent.

        Only a cluster the SDK made (label ``app.kubernetes.io/managed-by: rayqueue-sdk``) is deleted
        unless ``force=True``. Returns whether something was deleted (``True`` too when the DELETE's
        answer was lost and its retry found the cluster gone: that DELETE removed it).

        Raises:
            ConflictError: the cluster of that name was not made by rayqueue_sdk.

        Example:
            >>> cluster = Cluster(ClusterConfiguration(name="doc-cluster-down", namespace="default"),
            ...                   client=api)
            >>> _ = cluster.apply()
            >>> cluster.down()   # resources immediately returned to the queue
            True
            >>> cluster.down()   # nothing left to delete
            False
        """
        from rayqueue_sdk.admission.idle import policy_of  # lazy: the policy a cluster carries
        from rayqueue_sdk.cluster.preflight import check_ours  # lazy: apply's checks
        from rayqueue_sdk.kube.kinds import RAYCLUSTERS  # lazy: API calls
        from rayqueue_sdk.scaling import policy as scaling  # lazy: scale-to-zero, loaded on first use

        session = self.session
        self.__dict__.pop("job_client", None)
        try:
            obj = session.get(RAYCLUSTERS, name=self.name, namespace=self.namespace)
        except NotFoundError:
            log.info("%s/%s: already gone", self.namespace, self.name)
            return False
        if not force:
            check_ours(obj, "down(force=True) would delete it")
        if policy_of(obj) is not None:
            removed = scaling.remove_policy(
                session, name=self.name, namespace=self.namespace, annotation=False
            )
            log.info("%s/%s: idle policy removed (%s)", self.namespace, self.name, ", ".join(removed))
        if not session.delete(
            RAYCLUSTERS, name=self.name, namespace=self.namespace, propagation="Background"
        ):
            return False
        log.info("%s/%s: deleted", self.namespace, self.name)
        if self._card is not None:
            self._follow(status_from(None, name=self.name, namespace=self.namespace))
        return True

    # -- observing ---------------------------------------------------------------------------------
    def status(self, *, missing_ok: bool = True) -> ClusterStatus:
        """The typed status now: phase, ready, queue, Kueue's reason and message, position, workers, URLs.

        A cluster that does not exist (not applied yet, or taken down) is a status too: phase
        ``NOT_FOUND``, saying "call cluster.apply() to create it" and listing the clusters that do exist
        (as the peer's ``status()`` answers rather than raising). ``missing_ok=False`` raises instead.

        Raises:
            ClusterNotFoundError: with ``missing_ok=False``, the cluster does not exist (lists those that
                do).

        Example:
            >>> cluster = Cluster(ClusterConfiguration(name="doc-cluster-status", namespace="default"),
            ...                   client=api)
            >>> cluster.status().phase   # before apply()
            <ClusterPhase.NOT_FOUND: 'not found'>

            On a cluster you have (not run here)::

                st = cluster.status(); print(st.phase.value, st.position, st.explanation)
        """
        from rayqueue_sdk.cluster.observe import observe_one  # lazy: the read path

        try:
            status, obj = observe_one(self.session, name=self.name, namespace=self.namespace)
        except ClusterNotFoundError as err:
            if not missing_ok:
                raise
            status = not_found_status(self.name, self.namespace, list(err.available))
            if self._card is not None:
                self._follow(status)
            return status
        if self._card is not None:
            self._follow(status)
        return status

    def wait_ready(
        self,
        timeout: float | None = DEFAULT_TIMEOUT,
        queue_timeout: float | None = None,
        dashboard_check: bool = True,
        *,
        show: bool | None = None,
    ) -> ClusterStatus:
        """Wait until the cluster is ready, saying why it waits on ONE progress line, with no logging set up.

        The line is an output that updates in place in a notebook (the cluster's card, if ``apply()``
        showed one, follows too; when that card is in the same cell it is the one output and no line is
        added), rich's live line in a terminal, and a plain line per
        change on stderr elsewhere (:func:`~rayqueue_sdk.display.progress.wait_progress`); the changes
        are then logged at ``DEBUG`` only. ``show=False`` shows nothing and logs them at ``INFO``.

        Args:
            timeout: the most seconds for the whole wait (``None``: no limit, only when asked).
            queue_timeout: the most seconds queued before Kueue admits the cluster.
            dashboard_check: also wait until the Ray dashboard answers.
            show: ``None`` (the line that suits where this runs), ``True`` (a live line even when stderr
                is not a terminal) or ``False`` (nothing).

        Raises:
            AdmissionTimeout: gave up (carries the phase, Kueue's last reason, the position).
            PreemptedError: Kueue evicted the cluster (with the reason).
            ClusterFailedError: the head cannot start (bad image, a crash loop, ...): at once.
            ClusterDeletedError: someone deleted the cluster meanwhile.
            AuthenticationError: the credentials expired.

        Example::

            cluster.wait_ready(timeout=600, queue_timeout=120)
        """
        from rayqueue_sdk.cluster import dashboard  # lazy: the dashboard and Ray, for a running cluster
        from rayqueue_sdk.cluster.wait import wait_for_cluster  # lazy: the wait
        from rayqueue_sdk.kube.poll import poll_until  # lazy: only a dashboard check polls

        api = self.session.api
        started = time.monotonic()
        card_in_cell = self._card is not None and self._card.live.shown_in == execution_count()
        with wait_progress(show, card_in_cell=card_in_cell) as line:

            def progress(status: ClusterStatus) -> None:
                line(status)
                if self._card is not None:  # the card apply() showed follows; no second output here
                    self._follow(status)

            # One read for the wait: its last sight of the cluster, with the read path's addresses and
            # idle state, is the status returned (nothing reads the RayCluster again).
            status = wait_for_cluster(
                self.name,
                self.namespace,
                timeout=timeout,
                queue_timeout=queue_timeout,
                client=api,
                on_progress=progress,
                log_level=progress_log_level(show),
                refuse_scaled_to_zero=True,
            )
            if self._card is not None:
                self._follow(status)
            if not dashboard_check:
                return status
            uri = status.dashboard_url or self.cluster_dashboard_uri()
            headers = dashboard.auth_headers(api) if uri.startswith("https://") else {}
            limit = (
                _DASHBOARD_TIMEOUT if timeout is None else max(0.0, timeout - (time.monotonic() - started))
            )
            answered = poll_until(
                lambda: dashboard.dashboard_ready(
                    uri, timeout=5.0, headers=headers, verify=self.config.verify_tls
                ),
                timeout=limit,
                interval=0.1,
                max_interval=1.0,
            )
            if not answered:
                raise AdmissionTimeout(
                    self.name,
                    timeout if timeout is not None else _DASHBOARD_TIMEOUT,
                    phase=status.phase.value,
                    reason=f"the Ray dashboard at {uri} does not answer",
                    what="the Ray dashboard",
                )
            ready = replace(status, dashboard_url=uri)
            if self._card is not None:
                self._follow(ready)
            return ready

    def details(self, *, show: bool | None = None) -> ClusterDetails:
        """The status plus the cluster's shape (head, every worker group, GPUs): rendered with rich in a
        console, as a widget in a notebook, and returned.

        Example:
            >>> cluster = Cluster(ClusterConfiguration(name="doc-cluster-details", namespace="default"),
            ...                   client=api)
            >>> cluster.details(show=False)   # before apply()
            Traceback (most recent call last):
            ...
            rayqueue_sdk.errors.ClusterNotFoundError: 404 NotFound: RayCluster 'doc-cluster-details' does ...

            Once applied (the class example shows it on a queued cluster; not run here)::

                d = cluster.details(); d.gpus, [g.name for g in d.groups]
        """
        from rayqueue_sdk.cluster.observe import observe_one, summarize  # lazy: the read path
        from rayqueue_sdk.display import show_details  # lazy: notebook cards

        status, obj = observe_one(self.session, name=self.name, namespace=self.namespace)
        found = summarize(obj, status)
        if self._card is not None:
            self._follow(status, found.gpus)
        show_details(found, show=show)
        return found


def get_cluster(
    name: str,
    namespace: str | None = None,
    verify_tls: bool | None = None,
    write_to_file: bool = False,
    api_client: SessionLike = None,
    *,
    client: SessionLike = None,
) -> Cluster:
    """Adopt a live RayCluster: a :class:`Cluster` whose configuration is rebuilt from it, every worker
    group included.

    codeflare-sdk's keywords work too: ``verify_tls=False`` stops verifying the dashboard's TLS certificate
    (for this cluster's job client and readiness check; ``None`` keeps the default, verified),
    ``write_to_file=True`` writes the manifest like ``ClusterConfiguration(write_to_file=True)``, and
    ``api_client=`` is ``client=`` (the arguments are in codeflare's order). Unlike codeflare-sdk,
    ``namespace=None`` means the credentials' namespace, not ``"default"``.

    Raises:
        ClusterNotFoundError: no such RayCluster (lists those that exist).

    Example:
        >>> from rayqueue_sdk import get_cluster
        >>> get_cluster("doc-cluster-missing", "default", client=session)
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ClusterNotFoundError: 404 NotFound: RayCluster 'doc-cluster-missing' does not ...

        A cluster that exists (not run here)::

            cluster = get_cluster("my-workspace-cluster", "ds-team")
            [g.name for g in cluster.config.resolved_worker_groups()], cluster.status().phase
    """
    from rayqueue_sdk.cluster.adopt import config_from_raycluster  # lazy: get_cluster() only
    from rayqueue_sdk.kube.lookups import fetch_raycluster  # lazy: API calls
    from rayqueue_sdk.kube.session import KubeSession  # lazy: the API client

    session = KubeSession.of(one_client(client, api_client), namespace=namespace)
    obj = fetch_raycluster(session, name=name)
    config = config_from_raycluster(obj)
    changes: dict[str, Any] = {}
    if verify_tls is not None:
        changes["verify_tls"] = verify_tls
    if write_to_file:
        changes["write_to_file"] = True
    if changes:
        config = config.model_copy(update=changes)
    return Cluster(config, client=session, show=False)
