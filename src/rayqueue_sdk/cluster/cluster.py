"""``Cluster``: a long-running RayCluster described by a
:class:`~rayqueue_sdk.config.models.ClusterConfiguration`.

The constructor keeps the configuration (no I/O, no credentials): :meth:`Cluster.to_dict` /
:meth:`Cluster.to_yaml` render the ``ray.io/v1`` RayCluster offline. With a connection (``login()``,
a kubeconfig, or ``client=``), :meth:`Cluster.apply` checks the LocalQueue and the priority class and
sends it (server-side apply), :meth:`Cluster.wait_ready` waits explaining Kueue's decisions,
:meth:`Cluster.status` reads a typed :class:`~rayqueue_sdk.cluster.status.ClusterStatus`, and
:meth:`Cluster.down` gives the resources back to the queue.

Example:
    >>> from rayqueue_sdk.config.models import ClusterConfiguration
    >>> Cluster(ClusterConfiguration(name="ws", local_queue="team-q")).to_dict()["kind"]
    'RayCluster'
"""

from __future__ import annotations

import functools
import logging
import os
import textwrap
import time
import weakref
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rayqueue_sdk.cluster.applied import AppliedCluster
from rayqueue_sdk.cluster.status import DEFAULT_TIMEOUT, ClusterStatus, not_found_status, status_from
from rayqueue_sdk.config.idle import IdlePolicy, PreStopHook, PrometheusSource
from rayqueue_sdk.config.models import ClusterConfiguration
from rayqueue_sdk.display.controls import ClusterControls
from rayqueue_sdk.display.environment import is_notebook
from rayqueue_sdk.display.live import execution_count
from rayqueue_sdk.display.progress import progress_log_level, wait_progress
from rayqueue_sdk.errors import (
    AdmissionTimeout,
    AlreadyExistsError,
    ClusterNotFoundError,
    ConfigError,
    NotFoundError,
    RayQueueError,
    ScaledToZeroError,
    UnsupportedError,
)
from rayqueue_sdk.manifests import dump_yaml
from rayqueue_sdk.manifests.labels import QUEUE_LABEL
from rayqueue_sdk.manifests.meta import labels_of, name_of, uid_of
from rayqueue_sdk.manifests.raycluster import build_raycluster

if TYPE_CHECKING:  # pragma: no cover
    from ray.job_submission import JobDetails, JobStatus, JobSubmissionClient

    from rayqueue_sdk.cluster.live import LiveFollow
    from rayqueue_sdk.cluster.observe import ClusterDetails
    from rayqueue_sdk.kube.session import KubeSession, SessionLike

__all__ = ["Cluster", "get_cluster"]

log = logging.getLogger(__name__)


class _Unset:
    """The type of ``_UNSET``: no idle policy set on the ``Cluster`` yet (the configuration's applies)."""


_UNSET = _Unset()

#: Seconds to wait for the dashboard after the cluster is ready, when ``timeout=None``.
_DASHBOARD_TIMEOUT = 120.0
#: How long deactivate()/resume() wait for Kueue to make the Workload of a cluster that names a queue.
_WORKLOAD_WAIT = 30.0


class Cluster:
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
        if not isinstance(config, ClusterConfiguration):
            raise ConfigError(
                "config",
                config,
                "a ClusterConfiguration (a ManagedClusterConfig belongs to RayJob(cluster_config=...))",
                problem=f"not a ClusterConfiguration but {type(config).__name__}",
            )
        if not config.name:
            raise ConfigError(
                "name",
                None,
                "a DNS-1035 label of at most 53 characters: ClusterConfiguration(name=...)",
                problem="required for a Cluster",
            )
        self.config = config
        #: the idle policy that :meth:`scale_to_zero` applied or removed (``None``: removed), kept here
        #: rather than written into the user's configuration; unset until it is called.
        self._idle_policy: IdlePolicy | None | _Unset = _UNSET
        self._client = _one_client(client, api_client)
        self._session: KubeSession | None = None  # made on first use: offline, no Kubernetes code loads
        #: the namespace once known (given, or resolved through the session), for what says it offline
        self._namespace: str | None = config.namespace
        self._existing_seen: dict[str, Any] | None = None  # the RayCluster apply()'s preflight read
        #: the notebook card with its buttons (shown when built in a notebook, and by apply()/up();
        #: followed by wait_ready(), status(), details()).
        self._card: ClusterControls | None = None
        self._clicked = False  # a button of the box is running apply()/wait_ready()
        #: the card's live updates from the session's shared watches (cluster/live.py)
        self._live: LiveFollow | None = None
        #: where write_to_file() wrote the manifest (codeflare-sdk's ``resource_yaml`` reads it back).
        self._written: str | None = None
        if config.write_to_file:
            self.write_to_file()
        if show is not False and is_notebook() and execution_count() is not None:  # a kernel's cell
            self._controls().live.show_once()

    # -- offline -----------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The RayCluster's name (``config.name``).

        Example:
            >>> from rayqueue_sdk.config.models import ClusterConfiguration
            >>> Cluster(ClusterConfiguration(name="ws")).name
            'ws'
        """
        return self.config.name

    @property
    def idle_policy(self) -> IdlePolicy | None:
        """The idle scale-to-zero policy this cluster applies: the one :meth:`scale_to_zero` last set
        (``None`` once it removed it), else the configuration's ``idle_scale_to_zero``. The
        configuration itself stays as the user gave it.

        Example:
            >>> from rayqueue_sdk.config.idle import IdlePolicy
            >>> from rayqueue_sdk.config.models import ClusterConfiguration
            >>> Cluster(ClusterConfiguration(name="ws")).idle_policy is None
            True
            >>> Cluster(ClusterConfiguration(name="ws", idle_scale_to_zero=IdlePolicy(idle_minutes=5))
            ...         ).idle_policy.idle_minutes == 5
            True
        """
        if isinstance(self._idle_policy, _Unset):
            return self.config.idle_scale_to_zero
        return self._idle_policy

    def to_dict(self) -> dict[str, Any]:
        """The ``ray.io/v1`` RayCluster manifest as a plain dict (a fresh copy on every call).

        Example:
            >>> from rayqueue_sdk.config.models import ClusterConfiguration
            >>> Cluster(ClusterConfiguration(name="ws", namespace="ds")).to_dict()["metadata"]["namespace"]
            'ds'
        """
        return build_raycluster(self.config)

    def to_yaml(self) -> str:
        """The RayCluster manifest as YAML (what ``kubectl apply -f`` would take), followed by the idle
        scale-to-zero objects when the configuration has ``idle_scale_to_zero``.

        Offline, ``mode="auto"`` shows the reaper (discovery decides at apply time), and the objects'
        ownerReferences (and KEDA's Workload name) are filled in at apply time: the server assigns the uid.

        Example:
            >>> from rayqueue_sdk.config.idle import IdlePolicy
            >>> from rayqueue_sdk.config.models import ClusterConfiguration
            >>> Cluster(ClusterConfiguration(name="ws")).to_yaml().splitlines()[0]
            'apiVersion: ray.io/v1'
            >>> text = Cluster(ClusterConfiguration(name="ws", local_queue="q",
            ...                idle_scale_to_zero=IdlePolicy(idle_minutes=60))).to_yaml()
            >>> "kind: Deployment" in text and "name: ws-idle" in text
            True
        """
        manifest = self.to_dict()
        text = dump_yaml(manifest)
        policy = self.idle_policy
        if policy is None:
            return text
        from rayqueue_sdk.scaling import policy as scaling  # lazy: scale-to-zero, loaded on first use

        the_plan = scaling.plan(None, manifest, policy)
        note = (
            f"# idle scale-to-zero, {the_plan.summary().split(':')[0]}; at apply time: ownerReferences to "
            "the RayCluster (its uid), the mode (auto: KEDA where served) and KEDA's Workload name\n"
        )
        return text + "---\n" + note + dump_yaml(the_plan.objects)

    def write_to_file(self, path: str | os.PathLike[str] | None = None) -> str:
        """Write the RayCluster manifest as YAML where codeflare-sdk does,
        ``~/.codeflare/resources/<name>.yaml`` (or ``path``), and return the path. Logged at ``INFO``.

        ``ClusterConfiguration(write_to_file=True)`` calls it when the ``Cluster`` is made, as codeflare-sdk
        does; :meth:`apply` still sends the manifest built from the configuration, not the file.

        Example:
            >>> import pathlib, tempfile
            >>> from rayqueue_sdk.config.models import ClusterConfiguration
            >>> target = pathlib.Path(tempfile.mkdtemp()) / "ws.yaml"
            >>> written = Cluster(ClusterConfiguration(name="ws")).write_to_file(target)
            >>> written == str(target), target.read_text().splitlines()[0]
            (True, 'apiVersion: ray.io/v1')
        """
        default = Path.home() / ".codeflare" / "resources" / f"{self.name}.yaml"
        target = Path(path) if path is not None else default
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(self.to_yaml(), encoding="utf-8")
        self._written = str(target)
        log.info("%s: RayCluster manifest written to %s", self.name, target)
        return self._written

    @property
    def resource_yaml(self) -> str | dict[str, Any]:
        """codeflare-sdk's ``resource_yaml``: the path :meth:`write_to_file` wrote, else the manifest dict.

        Example:
            >>> from rayqueue_sdk.config.models import ClusterConfiguration
            >>> Cluster(ClusterConfiguration(name="ws")).resource_yaml["kind"]
            'RayCluster'
        """
        return self._written if self._written is not None else self.to_dict()

    def __repr__(self) -> str:
        return f"Cluster(name={self.config.name!r}, namespace={self._namespace or self.config.namespace!r})"

    # -- notebook ----------------------------------------------------------------------------------
    def _intro(self) -> list[str]:
        """What the box says before anything was read: the configuration, offline (no I/O)."""
        from rayqueue_sdk.cluster.observe import summarize  # lazy: the notebook box's summary only

        ns = self._namespace or self.config.namespace
        where = f"{ns}/{self.name}" if ns else f"{self.name} (in your login's namespace)"
        shape = summarize(self.to_dict())
        asks = [f"{g.replicas} x {g.name}" for g in shape.groups]
        queue = f"queue {self.config.local_queue}" if self.config.local_queue else "the default queue"
        priority = f", priority {self.config.priority_class}" if self.config.priority_class else ""
        said = [
            f"{queue}{priority}; workers {', '.join(asks) or 'none'}; {shape.gpus} GPUs",
            "Apply sends it (cluster.apply()), Down deletes it (cluster.down()); cluster.status() reads it",
        ]
        lines = [f"{where}: not read from the server yet"]
        for text in said:
            lines += textwrap.wrap(text, 80, initial_indent="  ", subsequent_indent="    ")
        return lines

    def _controls(self) -> ClusterControls:
        """The notebook box (made once; nothing is read to make it)."""
        if self._card is None:
            ns = self._namespace or self.config.namespace
            self._card = ClusterControls(
                None,
                intro=self._intro(),
                apply=self._apply_clicked,
                down=self.down,
                label=f"{ns}/{self.name}" if ns else self.name,
                key=("cluster", ns or "", self.name),
            )
        return self._card

    def _box_in_cell(self) -> bool:
        """In a notebook, show the box in this cell (once); whether it is shown."""
        if self._card is None or not is_notebook():
            return False
        self._card.live.show_once()
        return True

    def _follow(self, status: ClusterStatus, gpus: int | None = None) -> None:
        """Put ``status`` on the box, where there is one (updated in place)."""
        if self._card is not None:
            self._card.live.set_key(("cluster", status.namespace, status.name))
            self._card.update(status, gpus)

    def _apply_clicked(self, wait: bool) -> object:
        """Apply, from the box's button; with ``wait``, then wait until ready. The box is the progress: a
        click updates it in place and adds no output (a click runs outside any cell, so an output made
        now would go nowhere and would count as shown in the next cell)."""
        self._clicked = True
        try:
            applied = self.apply()
            if wait:
                return self.wait_ready(show=False)
            return applied
        finally:
            self._clicked = False

    def _ipython_display_(self) -> None:
        """As a cell's last expression: the box with its buttons (once per cell), read from nothing."""
        if is_notebook():
            self._controls().live.show_once()
            return
        from IPython.display import display  # lazy: only IPython calls this

        display({"text/plain": repr(self)}, raw=True)

    # -- connection --------------------------------------------------------------------------------
    @property
    def session(self) -> KubeSession:
        """The connection this cluster uses: ``client=`` (else the login, resolved on first use) in
        ``config.namespace`` (else the credentials' namespace).

        Example:
            >>> from rayqueue_sdk.config.models import ClusterConfiguration
            >>> Cluster(ClusterConfiguration(name="ws", namespace="ds")).session.namespace
            'ds'
        """
        if self._session is None:
            from rayqueue_sdk.kube.session import KubeSession  # lazy: offline use loads no I/O path

            self._session = KubeSession.of(self._client, namespace=self.config.namespace)
        return self._session

    @property
    def namespace(self) -> str:
        """``config.namespace``, else the namespace of the credentials (kubeconfig context, service account).

        Example:
            >>> from rayqueue_sdk.config.models import ClusterConfiguration
            >>> Cluster(ClusterConfiguration(name="ws", namespace="ds")).namespace
            'ds'
        """
        if self._namespace is None:
            self._namespace = self.session.namespace
        return self._namespace

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
            password_secret=self.config.redis_password_secret,
        )
        self._existing_seen = dict(facts.existing) if facts.existing is not None else None
        return decide(
            self.to_dict(),
            facts,
            local_queue=self.config.local_queue,
            priority_class=self.config.priority_class,
            refuse_foreign=refuse_foreign,
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
            ConfigError: e.g. autoscaling under a (default) queue without ``elastic=True``.
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
        self._show_card(session)
        return AppliedCluster(stored, show_box=self._box_in_cell)

    def up(self) -> AppliedCluster:
        """Create the RayCluster (the seed-000 form); an existing one is an :class:`AlreadyExistsError`.
        Returns what :meth:`apply` returns.

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
        log.info("%s/%s: created", self.namespace, self.name)
        if self.idle_policy is not None:
            self._enable(session, stored, self.idle_policy)
        self._show_card(session)
        return AppliedCluster(stored, show_box=self._box_in_cell)

    def down(self, force: bool = False) -> bool:
        """Delete the RayCluster (its pods and Kueue Workload go with it); idempotent.

        Only a cluster the SDK made (label ``app.kubernetes.io/managed-by: rayqueue-sdk``) is deleted
        unless ``force=True``. Returns whether something was deleted.

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
        if scaling.policy_of(obj) is not None:
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

    def _refuse_if_scaled_to_zero(self) -> None:
        from rayqueue_sdk.cluster.observe import observe_one  # lazy: the read path

        status, _ = observe_one(self.session, name=self.name, namespace=self.namespace)
        if status.scaled_to_zero:
            raise ScaledToZeroError(self.name, self.namespace, status.idle_scale_to_zero or "scaled to zero")

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

    def _show_card(self, session: KubeSession) -> None:
        """In a notebook, the cluster's box: updated in place, and shown in this cell unless it already is."""
        from rayqueue_sdk.cluster.live import follow_live  # lazy: the shared watches, for a notebook box
        from rayqueue_sdk.cluster.observe import observe_one, summarize  # lazy: the read path

        if not is_notebook() and self._card is None:
            return
        status, obj = observe_one(session, name=self.name, namespace=self.namespace)
        card = self._controls()
        card.live.set_key(("cluster", status.namespace, status.name))
        card.update(status, summarize(obj, status).gpus)
        if is_notebook() and not self._clicked:
            card.live.show_once()
        if self._live is None or self._live.closed:
            # Live from then on, through the watches the session shares (no watch or request of its own).
            self._live = follow_live(
                session,
                card.update,
                name=self.name,
                namespace=self.namespace,
                last=status,
                shown=lambda: card.status if isinstance(card.status, ClusterStatus) else None,
            )
            weakref.finalize(self, self._live.close)  # the shared watches end with the last reader

    def cluster_uri(self) -> str:
        """The ``ray://host:port`` address for ``ray.init()``.

        Raises:
            DashboardNotFoundError: the head has no address yet (queued or starting).
            ScaledToZeroError: the idle policy scaled the cluster to zero ("call cluster.resume()").

        Example:
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
            self._refuse_if_scaled_to_zero()  # a better answer than "no address", where it applies
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

    # -- Kueue -------------------------------------------------------------------------------------
    def deactivate(self) -> str:
        """Give the quota back without deleting the cluster: ``Workload.spec.active=false``.

        Kueue evicts the cluster (pods stopped, phase ``deactivated``); :meth:`resume` requeues it.
        Returns the Workload's name.

        Raises:
            UnsupportedError: the cluster has no Kueue Workload (not queued through Kueue; one that names
                a queue is given 30 s for Kueue to make it).
            ForbiddenError: the identity may not patch Workloads (names verb and resource).

        Example::

            cluster.deactivate(); ...; cluster.resume(); cluster.wait_ready()
        """
        return self._set_active(False)

    def gpu_utilisation(
        self, minutes: float = 30, *, prometheus: PrometheusSource | str | None = None
    ) -> list[float]:
        """The cluster's GPU utilisation (%, oldest first) over the last ``minutes`` from Prometheus'
        DCGM series (``prometheus=``, else the idle policy's, else ``$RAYQUEUE_PROMETHEUS_URL``); the
        card shows it as a sparkline beside the idle countdown. Empty without metrics.

        Example::

            cluster.gpu_utilisation(30, prometheus="http://prometheus.monitoring:9090")[-3:]
            # [0.0, 0.0, 87.0]
        """
        from rayqueue_sdk.cluster.usage import utilisation_series  # lazy: usage is rarely asked for

        policy = self.config.idle_scale_to_zero
        source = prometheus or (policy.prometheus if policy is not None else None)
        values = utilisation_series(self.namespace, self.name, source, minutes=minutes)
        if self._card is not None:
            self._card.set_utilisation(values)
        return values

    def resume(self) -> str:
        """Requeue a deactivated (or scaled-to-zero) cluster: ``Workload.spec.active=true``; a cluster
        without a queue that its idle policy suspended gets ``spec.suspend=false``. Returns the name of
        the object changed (the Workload, or the RayCluster).

        With an idle policy, the resumed cluster gets the whole idle period again: under KEDA the
        ScaledObject is recreated first (the old one's ``lastActiveTime`` is old and its metric still 0,
        so it would scale the cluster straight back to zero); the reaper restarts its clock at the
        Workload's new admission. KEDA cannot see Kueue's admission, so its new object's
        ``initialCooldownPeriod`` counts from this call: a cluster that waits in the queue longer than
        ``initial_cooldown_minutes`` is deactivated again (size it to the wait, or use the reaper).

        Example::

            cluster.resume(); cluster.wait_ready()
        """
        from rayqueue_sdk.kube.kinds import RAYCLUSTERS  # lazy: API calls
        from rayqueue_sdk.kube.lookups import fetch_raycluster, find_workload  # lazy: API calls
        from rayqueue_sdk.scaling import policy as scaling  # lazy: scale-to-zero, loaded on first use

        session = self.session
        namespace = self.namespace
        rc = fetch_raycluster(session, name=self.name, namespace=namespace)
        info = scaling.policy_of(rc)
        if info is None:
            return self._set_active(True)
        uid = uid_of(rc) or ""
        workload = (
            find_workload(session, owner_uid=uid, namespace=namespace)
            if info.get("mechanism") == "workload"
            else None
        )
        done = scaling.on_resume(session, rc, workload)
        log.info("%s/%s: %s", namespace, self.name, done)
        if info.get("mechanism") == "suspend":
            session.patch(
                RAYCLUSTERS, name=self.name, patch={"spec": {"suspend": False}}, namespace=namespace
            )
            self.__dict__.pop("job_client", None)
            return self.name
        return self._set_active(True)

    # -- idle scale-to-zero ------------------------------------------------------------------------
    def _enable(self, session: KubeSession, rc: dict[str, Any], policy: IdlePolicy) -> list[str]:
        from rayqueue_sdk.scaling import policy as scaling  # lazy: scale-to-zero, loaded on first use

        the_plan = scaling.plan(session, rc, policy)
        return scaling.apply_plan(session, the_plan, previous=scaling.policy_of(rc))

    def scale_to_zero(
        self,
        idle_minutes: float | None,
        *,
        mode: str = "auto",
        idle_signal: str = "gpu",
        prometheus: PrometheusSource | str | dict[str, Any] | None = None,
        hook: PreStopHook | str | None = None,
        initial_cooldown_minutes: float | None = None,
        polling_seconds: int = 30,
        dry_run: bool = False,
    ) -> str:
        """Give the cluster's quota back after ``idle_minutes`` without use; ``None`` removes the policy.

        The arguments are those of :class:`~rayqueue_sdk.config.idle.IdlePolicy` and are checked before
        anything is sent. ``mode="auto"`` uses KEDA where discovery shows ``workloads/scale`` and
        ``scaledobjects.keda.sh`` (and the policy needs nothing KEDA cannot do), else the in-cluster
        reaper; a cluster without a queue is suspended through KubeRay's ``spec.suspend``. The objects are
        owned by the RayCluster and replace any previous policy. ``dry_run=True`` creates nothing and
        says what the policy would decide now and why, with the GPU reading it used (read as the reaper
        reads it: the policy's Prometheus query, else Ray's node view through the dashboard). Returns a
        one-line report.

        Raises:
            ConfigError: a bad value; ``mode="keda"`` where KEDA or Workload ``/scale`` is not served
                (names what is missing and offers ``mode="reaper"``).
            ForbiddenError: the identity may not create one of the objects (names the verb and the
                resource); nothing this call made is left behind.

        Example:
            >>> cluster = Cluster(ClusterConfiguration(name="doc-cluster-idle", namespace="default"),
            ...                   client=api)
            >>> cluster.scale_to_zero(None)   # remove the policy
            'idle policy removed (nothing to remove)'

            On a running cluster (not run here: the idle signal needs Ray or Prometheus)::

                cluster.scale_to_zero(idle_minutes=60)            # auto: KEDA where served, else the reaper
                cluster.scale_to_zero(60, dry_run=True)           # what it would do now, and why
        """
        from rayqueue_sdk.kube.lookups import fetch_raycluster, find_workload  # lazy: API calls
        from rayqueue_sdk.scaling import policy as scaling  # lazy: scale-to-zero, loaded on first use

        session = self.session
        if idle_minutes is None:
            removed = scaling.remove_policy(session, name=self.name, namespace=self.namespace)
            self._idle_policy = None
            return f"idle policy removed ({', '.join(removed) or 'nothing to remove'})"
        policy: IdlePolicy = IdlePolicy.model_validate(
            {
                "idle_minutes": idle_minutes,
                "mode": mode,
                "idle_signal": idle_signal,
                "prometheus": prometheus,
                "hook": hook,
                "initial_cooldown_minutes": initial_cooldown_minutes,
                "polling_seconds": polling_seconds,
            }
        )
        namespace = self.namespace
        rc = fetch_raycluster(session, name=self.name, namespace=namespace)
        the_plan = scaling.plan(session, rc, policy)
        if dry_run:
            from rayqueue_sdk.cluster.observe import observe_one  # lazy: the read path

            status, rc = observe_one(session, name=self.name, namespace=namespace)
            uid = uid_of(rc) or ""
            workload = (
                find_workload(session, owner_uid=uid, namespace=namespace)
                if the_plan.mechanism == "workload"
                else None
            )
            gpu, reading = None, None
            if policy.idle_signal != "jobs":  # read as the reaper reads it: Prometheus, else Ray's view
                gpu, reading = scaling.read_gpu(policy, rc, status.dashboard_url)
            jobs = None
            try:
                jobs = [
                    {"submission_id": j.submission_id, "status": str(getattr(j.status, "value", j.status))}
                    for j in self.list_jobs()
                ]
            except (RayQueueError, OSError, RuntimeError, ValueError) as err:
                log.debug("dry run: Ray jobs not readable: %s", err)
            return scaling.dry_run(policy, the_plan, workload, rc=rc, jobs=jobs, gpu=gpu, gpu_reading=reading)
        made = scaling.apply_plan(session, the_plan, previous=scaling.policy_of(rc))
        self._idle_policy = policy
        return f"{namespace}/{self.name}: {the_plan.headline}: {', '.join(made)}"

    def _set_active(self, active: bool) -> str:
        from rayqueue_sdk.kube import lookups  # lazy: API calls
        from rayqueue_sdk.kube.poll import poll_until  # lazy: as above

        session = self.session
        namespace = self.namespace
        rc = lookups.fetch_raycluster(session, name=self.name, namespace=namespace)
        uid = uid_of(rc) or ""
        if QUEUE_LABEL in labels_of(rc):
            # Kueue makes the Workload of a queued cluster moments after apply() returns: wait for it
            # rather than call a cluster applied a second ago "not in a queue".
            poll_until(
                lambda: lookups.find_workload(session, owner_uid=uid, namespace=namespace),
                timeout=_WORKLOAD_WAIT,
                interval=0.1,
                max_interval=1.0,
            )
        try:
            wl = lookups.set_workload_active(session, owner_uid=uid, active=active, namespace=namespace)
        except NotFoundError:
            raise UnsupportedError(
                f"RayCluster {self.namespace}/{self.name} has no Kueue Workload (is it in a queue?): "
                "deactivate()/resume() work through Kueue"
            ) from None
        self.__dict__.pop("job_client", None)  # the head restarts: a new address
        wl_name = name_of(wl)
        log.info(
            "%s/%s: Workload %s %s",
            self.namespace,
            self.name,
            wl_name,
            "resumed" if active else "deactivated",
        )
        return wl_name


def _one_client(client: SessionLike, api_client: SessionLike) -> SessionLike:
    """``client``, or codeflare-sdk's spelling ``api_client``; both (different) is an error."""
    if client is not None and api_client is not None and client is not api_client:
        raise ConfigError(
            "api_client",
            f"<{type(api_client).__name__}>",
            "one of client= and api_client= (codeflare-sdk's name for the same thing)",
            problem="given together with client",
        )
    return client if client is not None else api_client


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

    session = KubeSession.of(_one_client(client, api_client), namespace=namespace)
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
