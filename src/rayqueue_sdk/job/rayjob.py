"""``RayJob``: a Ray job on a cluster it owns (a KubeRay RayJob) or on an existing RayCluster.

The constructor validates (no I/O); :meth:`RayJob.to_dict` / :meth:`RayJob.to_yaml` render offline.
:meth:`RayJob.submit`, :meth:`~RayJob.status`, :meth:`~RayJob.wait`, :meth:`~RayJob.logs`,
:meth:`~RayJob.stop` and :meth:`~RayJob.delete` go to the :class:`~rayqueue_sdk.job.backend.JobBackend`
chosen once in the constructor: :mod:`rayqueue_sdk.job.existing` (Ray's job client on an existing
cluster) or :mod:`rayqueue_sdk.job.owned` (a Kueue-queued ``ray.io/v1`` RayJob). :meth:`RayJob.wait`
acts on each status's verdict (:attr:`~rayqueue_sdk.job.status.RayJobStatus.assessment`). Local code
and its limits are handled by :mod:`rayqueue_sdk.job.runtime_env`; the typed status is
:class:`~rayqueue_sdk.job.status.RayJobStatus`; the job view, the stop permission and the logs are
:mod:`rayqueue_sdk.job.view`'s.

Example:
    >>> from rayqueue_sdk.config.models import ClusterConfiguration, ManagedClusterConfig, managed_from
    >>> job = RayJob(job_name="nightly", entrypoint="python train.py", local_queue="batch-jobs-queue",
    ...              cluster_config=ManagedClusterConfig(num_workers=2), priority_class="prod-priority")
    >>> job.to_dict()["metadata"]["labels"]["kueue.x-k8s.io/priority-class"]
    'prod-priority'
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from rayqueue_sdk.admission.cluster import ErrorKind, JobPhase, Verdict
from rayqueue_sdk.config.models import ClusterConfiguration, ManagedClusterConfig, managed_from
from rayqueue_sdk.display.environment import is_notebook
from rayqueue_sdk.display.jobs import JobCard
from rayqueue_sdk.errors import AdmissionTimeout, ConfigError
from rayqueue_sdk.job.backend import JobBackend
from rayqueue_sdk.job.existing import ExistingClusterJob
from rayqueue_sdk.job.logs import LogKeeper
from rayqueue_sdk.job.owned import OwnedClusterJob
from rayqueue_sdk.job.peer_api import PeerJobApi
from rayqueue_sdk.job.pending import DEFAULT_CLUSTER_TIMEOUT, ClusterWait
from rayqueue_sdk.job.resume import ResumeWatch, with_resumption
from rayqueue_sdk.job.runtime_env import prepare_runtime_env
from rayqueue_sdk.job.settle import await_stop
from rayqueue_sdk.job.spec import JobSpec, render_rayjob, resolve_runtime_env
from rayqueue_sdk.job.status import RayJobStatus
from rayqueue_sdk.job.view import JobViewMixin
from rayqueue_sdk.manifests import dump_yaml

if TYPE_CHECKING:  # pragma: no cover
    from rayqueue_sdk.kube.session import KubeSession, SessionLike

__all__ = [
    "DEFAULT_CLUSTER_TIMEOUT",
    "DEFAULT_JOB_TIMEOUT",
    "RayJob",
    "RayJobStatus",
    "render_rayjob",
    "resolve_runtime_env",
]

log = logging.getLogger(__name__)

#: Default limit of :meth:`RayJob.wait`, in seconds (queue, start-up and run). Never infinite by default.
DEFAULT_JOB_TIMEOUT = 3600.0
#: How many log lines a :class:`~rayqueue_sdk.errors.JobFailedError` carries by default.
_LOG_TAIL_LINES = 50
#: The most seconds resubmit() waits for an ended job-owned RayJob to be deleted before it submits it again.
_GONE_TIMEOUT = 60.0


_T = TypeVar("_T")

#: The spec fields the job's backend took when the RayJob was made (its name, cluster and namespace).
_FIXED = frozenset({"job_name", "cluster_name", "namespace"})


class _FromSpec(Generic[_T]):
    """A :class:`RayJob` attribute that is a field of its validated spec: read from the spec, and assigned
    through it, so an assignment is validated with the whole spec (a :class:`ConfigError` leaves the
    job as it was). The fields the backend took at construction (``job_name``, ``cluster_name``,
    ``namespace``) refuse assignment: make a new ``RayJob``.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> _FromSpec[_T]: ...

    @overload
    def __get__(self, obj: RayJob, objtype: type | None = None) -> _T: ...

    def __get__(self, obj: RayJob | None, objtype: type | None = None) -> _FromSpec[_T] | _T:
        if obj is None:
            return self
        value: _T = getattr(obj._spec, self.name)
        return value

    def __set__(self, obj: RayJob, value: _T) -> None:
        if self.name in _FIXED:
            raise ConfigError(
                self.name,
                value,
                f"the {self.name} the RayJob was made with (make a new RayJob for another)",
                problem="fixed once the RayJob is made",
            )
        setattr(obj._spec, self.name, value)


class RayJob(JobViewMixin):
    """A Ray job: on a cluster it owns (``cluster_config``) or on an existing RayCluster (``cluster_name``).

    Give exactly one of ``cluster_name`` and ``cluster_config``.

    * ``cluster_config=ManagedClusterConfig(...)``: a KubeRay ``RayJob`` whose cluster is created for the
      job and deleted after it (``shutdown_after_job_finishes=True``, required under a Kueue queue).
      ``local_queue`` / ``priority_class`` (or the same Kueue labels in ``labels``) go on its metadata.
    * ``cluster_name="my-workspace-cluster"``: there is no RayJob object (Kueue cannot manage a RayJob on an
      existing cluster); :meth:`to_dict` renders the request sent to Ray's job-submission API instead
      (``entrypoint``, ``runtime_env``, ``submission_id``: the job name in a dry run; :meth:`submit` makes
      it unique). Queue, priority, TTL and deadline do not apply there and are rejected.

    ``runtime_env``: ``pip`` lists, ``env_vars`` and remote ``working_dir`` URIs are rendered unchanged; a
    ``pip`` string is the path of a requirements file, read when the job is rendered (a missing file is a
    :class:`~rayqueue_sdk.errors.ConfigError`). A local ``working_dir`` directory is rendered as written here
    and handled at submit time: on an existing cluster Ray's job client uploads it (up to Ray's 512 MiB
    package limit); for a job-owned cluster it is zipped into a Secret owned by the RayJob and unpacked in
    KubeRay's submitter pod (up to :data:`~rayqueue_sdk.job.runtime_env.OWNED_WORKING_DIR_LIMIT`, just under
    1 MiB; larger code belongs in a remote archive). See :mod:`rayqueue_sdk.job.runtime_env`.

    The constructor does no I/O and needs no credentials. ``client`` (an ``ApiClient`` or an
    authentication object; default: the current login) and ``dashboard_url`` (an explicit Ray dashboard
    address for ``cluster_name``) are used from :meth:`submit` on.

    On an existing cluster the Ray submission id is ``<job_name>-<6 hex>`` (the name alone would collide
    when the job is submitted again); it is in :attr:`job_id` after :meth:`submit`. For a job-owned
    cluster KubeRay chooses it, and :attr:`job_id` / :attr:`cluster_name_in_status` follow the status.

    Example:
        >>> job = RayJob(job_name="quick-dev-test", entrypoint="python test_model.py",
        ...              cluster_name="my-workspace-cluster", namespace="your-namespace",
        ...              runtime_env={"working_dir": "."})
        >>> body = job.to_dict()
        >>> body["submission_id"], body["runtime_env"]
        ('quick-dev-test', {'working_dir': '.'})

        Submitted (here to a local control plane without Ray; ``api`` is its client, ``session`` a
        :class:`~rayqueue_sdk.kube.session.KubeSession` over it) with a job-owned cluster, in a LocalQueue (of
        a namespace of its own) whose ClusterQueue has no quota, the job waits in the queue; deleted, it
        is gone:

        >>> from rayqueue_sdk.kube.kinds import Kind
        >>> from rayqueue_sdk.manifests.kueue import cluster_queue, local_queue
        >>> _ = session.apply(Kind("", "v1", "namespaces", namespaced=False),
        ...     {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doc-rayjob"}})
        >>> _ = session.apply(session.kueue_kind("clusterqueues", namespaced=False),
        ...     cluster_queue("doc-rayjob-cq", resource_groups=[]))
        >>> _ = session.apply(session.kueue_kind("localqueues"),
        ...     local_queue("doc-rayjob-q", "doc-rayjob", "doc-rayjob-cq"))
        >>> job = RayJob(job_name="doc-rayjob-queued", entrypoint="python -c 'print(42)'",
        ...              cluster_config=ClusterConfiguration(num_workers=1), namespace="doc-rayjob",
        ...              local_queue="doc-rayjob-q", client=api)
        >>> job.submit()
        'doc-rayjob-queued'
        >>> job.status().phase
        <JobPhase.QUEUED: 'queued'>
        >>> job.delete(), job.delete()
        (True, False)

        Once admitted, with Ray (not run here)::

            job.submit(); job.wait(timeout=600); print(job.logs())
    """

    # The validated spec's fields, read from it and assigned through it (re-validated; see _FromSpec).
    job_name: _FromSpec[str] = _FromSpec()
    entrypoint: _FromSpec[str] = _FromSpec()
    cluster_name: _FromSpec[str | None] = _FromSpec()
    cluster_config: _FromSpec[ManagedClusterConfig | None] = _FromSpec()
    namespace: _FromSpec[str | None] = _FromSpec()
    runtime_env: _FromSpec[dict[str, Any] | None] = _FromSpec()
    local_queue: _FromSpec[str | None] = _FromSpec()
    labels: _FromSpec[dict[str, str]] = _FromSpec()
    priority_class: _FromSpec[str | None] = _FromSpec()
    ttl_seconds_after_finished: _FromSpec[int] = _FromSpec()
    active_deadline_seconds: _FromSpec[int | None] = _FromSpec()
    shutdown_after_job_finishes: _FromSpec[bool] = _FromSpec()
    submission_mode: _FromSpec[str] = _FromSpec()

    def __init__(
        self,
        job_name: str,
        entrypoint: str,
        cluster_name: str | None = None,
        cluster_config: ManagedClusterConfig | ClusterConfiguration | None = None,
        namespace: str | None = None,
        runtime_env: Mapping[str, Any] | None = None,
        local_queue: str | None = None,
        labels: Mapping[str, str] | None = None,
        priority_class: str | None = None,
        ttl_seconds_after_finished: int = 0,
        active_deadline_seconds: int | None = None,
        shutdown_after_job_finishes: bool = True,
        submission_mode: str = "K8sJobMode",
        *,
        client: SessionLike = None,
        dashboard_url: str | None = None,
        api_client: SessionLike = None,
    ) -> None:
        if api_client is not None:
            if client is not None and client is not api_client:
                raise ConfigError(
                    "api_client",
                    f"<{type(api_client).__name__}>",
                    "one of client= and api_client= (codeflare-sdk's name for the same thing)",
                    problem="given together with client",
                )
            client = api_client
        if isinstance(cluster_config, ClusterConfiguration):
            cluster_config, local_queue, priority_class = managed_from(
                cluster_config, local_queue, priority_class
            )
        spec = JobSpec(
            job_name=job_name,
            entrypoint=entrypoint,
            cluster_name=cluster_name,
            cluster_config=cluster_config,
            namespace=namespace,
            runtime_env=dict(runtime_env) if isinstance(runtime_env, Mapping) else runtime_env,
            local_queue=local_queue,
            labels=dict(labels or {}),
            priority_class=priority_class,
            ttl_seconds_after_finished=ttl_seconds_after_finished,
            active_deadline_seconds=active_deadline_seconds,
            shutdown_after_job_finishes=shutdown_after_job_finishes,
            submission_mode=submission_mode,
        )
        #: the validated arguments; the attributes above read them from here.
        self._spec = spec
        self.client = client
        self.dashboard_url = dashboard_url
        self.cluster_name_in_status: str | None = None
        self._kept_logs: str | None = None  # what wait() followed, for logs() once no source is left
        self._card: JobCard | None = None  # the job view in a notebook (view(), wait())
        self._patch_answer: str | None = None  # stop_permission's SelfSubjectAccessReview ("" = allowed)
        self._dashboard_override = dashboard_url
        self._resume_watch = ResumeWatch()  # whether a run resumed from a checkpoint (job/resume)

    @functools.cached_property
    def session(self) -> KubeSession:
        """The connection this job uses: ``client=`` (else the login, resolved on first use) in
        ``namespace`` (else the credentials' namespace). Made on first use: an offline job loads no
        Kubernetes code.

        Example:
            >>> RayJob("j", "python -c 1", cluster_name="ws", namespace="ds").session.namespace
            'ds'
        """
        from rayqueue_sdk.kube.session import KubeSession  # lazy: offline use loads no I/O path

        return KubeSession.of(self.client, namespace=self._spec.namespace)

    @functools.cached_property
    def _backend(self) -> JobBackend:
        """Where the job runs (chosen by ``cluster_name``), over :attr:`session`; made on first use."""
        spec = self._spec
        if spec.cluster_name is None:
            return OwnedClusterJob(self.session, name=spec.job_name)
        return ExistingClusterJob(
            self.session,
            job_name=spec.job_name,
            cluster_name=spec.cluster_name,
            dashboard_url=self._dashboard_override,
        )

    @functools.cached_property
    def _api(self) -> PeerJobApi:
        """codeflare-sdk's private KubeRay client, for copied cells (:mod:`rayqueue_sdk.job.peer_api`)."""
        return PeerJobApi(self.session)

    @property
    def job_id(self) -> str | None:
        """The Ray submission id: set by :meth:`submit` on an existing cluster, followed from the status
        for a job-owned cluster (KubeRay chooses it).

        Example:
            >>> RayJob(job_name="j", entrypoint="python x.py", cluster_name="ws").job_id is None
            True
        """
        return self._backend.job_id

    @job_id.setter
    def job_id(self, value: str | None) -> None:
        self._backend.job_id = value

    @property
    def name(self) -> str:
        """``job_name``, under codeflare-sdk's attribute name.

        Example:
            >>> RayJob(job_name="nightly", entrypoint="python x.py", cluster_name="ws").name
            'nightly'
        """
        return self.job_name

    @property
    def owns_cluster(self) -> bool:
        """True when the job runs on a cluster it creates (``cluster_config``), False for ``cluster_name``.

        Example:
            >>> RayJob(job_name="j", entrypoint="python x.py", cluster_name="ws").owns_cluster
            False
        """
        return self.cluster_config is not None

    def to_dict(self) -> dict[str, Any]:
        """Render the RayJob (job-owned cluster) or the job-submission request (existing cluster).

        Reads a ``pip`` requirements file named in ``runtime_env``; nothing else touches the disk or network.

        Example:
            >>> from rayqueue_sdk.config.models import ManagedClusterConfig
            >>> RayJob(job_name="j", entrypoint="python x.py", cluster_config=ManagedClusterConfig()
            ...        ).to_dict()["spec"]["shutdownAfterJobFinishes"]
            True
        """
        return render_rayjob(self)

    def to_yaml(self) -> str:
        """:meth:`to_dict` as YAML.

        Example:
            >>> print(RayJob(job_name="j", entrypoint="python x.py", cluster_name="ws").to_yaml(), end="")
            entrypoint: python x.py
            submission_id: j
        """
        return dump_yaml(self.to_dict())

    # -- submitting and following (I/O) -------------------------------------------------------------
    @classmethod
    def attach(
        cls,
        job_name: str,
        *,
        cluster_name: str | None = None,
        job_id: str | None = None,
        namespace: str | None = None,
        client: SessionLike = None,
        dashboard_url: str | None = None,
    ) -> RayJob:
        """A handle on a job submitted earlier (e.g. by another process or the CLI), without resubmitting.

        Job-owned: give the RayJob's name. On an existing cluster: ``cluster_name`` and the Ray
        ``job_id`` (the submission id that :meth:`submit` returned).

        Example:
            >>> job = RayJob.attach("quick-dev-test", cluster_name="ws", job_id="quick-dev-test-3f9a1c")
            >>> job.job_id, job.owns_cluster
            ('quick-dev-test-3f9a1c', False)
        """
        if cluster_name is not None:
            if not job_id:
                raise ConfigError("job_id", job_id, "the Ray submission id of the job on cluster_name")
            job = cls(
                job_name,
                "<attached>",
                cluster_name=cluster_name,
                namespace=namespace,
                client=client,
                dashboard_url=dashboard_url,
            )
            job.job_id = job_id
            return job
        return cls(
            job_name,
            "<attached>",
            cluster_config=ManagedClusterConfig(),
            namespace=namespace,
            client=client,
        )

    def submit(
        self,
        *,
        cluster_timeout: float | None = DEFAULT_CLUSTER_TIMEOUT,
        show: bool | None = None,
        wait_for_cluster: bool = False,
    ) -> str:
        """Send the job; returns the Ray submission id (existing cluster) or the RayJob's name.

        Everything is checked before anything is sent: the runtime_env (a local ``working_dir`` exists
        and is within the size limit, a ``pip`` requirements file exists, ``python X.py`` finds ``X.py``
        in the working_dir), then the cluster (existing-cluster mode) or the LocalQueue and the
        WorkloadPriorityClass (job-owned mode).

        On an existing cluster that is still queued in Kueue or starting (``cluster.apply()`` just
        before), the job waits for it: this returns at once with the submission id the job will have,
        :meth:`status` says that the job waits for its cluster (Kueue's reason, the queue position), and
        the job is submitted as soon as the cluster is ready, on a background thread of this process
        (:mod:`rayqueue_sdk.job.pending`). In a notebook the wait shows ``Cluster.wait_ready()``'s
        progress line (``show=False``: none). The wait gives up after ``cluster_timeout`` seconds
        (default :data:`DEFAULT_CLUSTER_TIMEOUT`, ``None``: no limit): then, or when the cluster is
        deleted meanwhile, nothing is submitted and :meth:`wait` raises
        :class:`~rayqueue_sdk.errors.AdmissionTimeout` or :class:`~rayqueue_sdk.errors.ClusterDeletedError`.
        ``wait_for_cluster=True`` makes this call itself wait (a script or a CI step that wants the job
        on Ray before it goes on): it returns once the job is submitted and raises those errors itself.
        ``cluster_timeout``, ``show`` and ``wait_for_cluster`` do not apply to a job-owned cluster (Kueue
        queues the RayJob itself; :meth:`wait` has the timeout).

        Raises:
            ConfigError: bad runtime_env or entrypoint (names the field and what is allowed).
            ClusterNotFoundError: ``cluster_name`` does not exist (lists the user's clusters).
            ScaledToZeroError: the cluster's idle policy scaled it to zero (``cluster.resume()`` first).
            PreemptedError / ClusterFailedError: the cluster is deactivated, or its head cannot start.
            AdmissionTimeout / ClusterDeletedError: with ``wait_for_cluster=True`` only: the cluster was
                not ready within ``cluster_timeout``, or was deleted meanwhile (nothing was submitted).
            QueueNotFoundError / PriorityClassNotFoundError: unknown queue or priority class (the
                error lists those that exist).
            AlreadyExistsError: a RayJob of that name exists (job-owned mode).

        Example:
            >>> job = RayJob(job_name="quick-dev-test", entrypoint="python test_model.py",
            ...              cluster_name="my-workspace-cluster", runtime_env={"working_dir": "."})

            On an existing cluster (not run here: it needs a Ray head; the class example submits a
            job-owned one)::

                job.submit()   # 'quick-dev-test-3f9a1c'
                job.submit(cluster_timeout=1800)   # a cluster just applied may queue for a while
        """
        env = prepare_runtime_env(resolve_runtime_env(self.runtime_env), self.entrypoint)
        if isinstance(self._backend, ExistingClusterJob):
            submitted = self._backend.submit(self, env, ClusterWait(cluster_timeout, show, wait_for_cluster))
        else:
            submitted = self._backend.submit(self, env)
        self.cluster_name_in_status = self.cluster_name
        return submitted

    def status(self) -> RayJobStatus:
        """The job's status, typed: a :class:`~rayqueue_sdk.job.status.RayJobStatus` whose ``phase`` is a
        :class:`~rayqueue_sdk.admission.cluster.JobPhase` (queued with Kueue's reason and position, starting,
        running, succeeded, failed with KubeRay's/Ray's reason, stopped, preempted, requeued, ...), with
        the real cluster name and the Ray job id.

        Example::

            job.status().phase          # <JobPhase.RUNNING: 'running'>
            job.status().cluster_name   # 'final-training-run-x7k2p'
        """
        now = self._backend.status()
        st = with_resumption(now, self._resume_watch, lambda: self._backend.logs(now))  # not read again
        if st.cluster_name:
            self.cluster_name_in_status = st.cluster_name
        return st

    def wait(
        self,
        timeout: float | None = DEFAULT_JOB_TIMEOUT,
        *,
        raise_on_preemption: bool = False,
        on_progress: Callable[[RayJobStatus], None] | None = None,
        log_lines: int = _LOG_TAIL_LINES,
        show: bool | None = None,
    ) -> RayJobStatus:
        """Wait until the job succeeds; explain every change (``logging`` and ``on_progress``).

        In a notebook the job view (:meth:`view`: status, last log lines, Stop) is shown once in the
        cell and follows the wait in place: each change of status, and each new log line of a job-owned
        job while it runs (``show=False``: no view).

        Polls with backoff (0.1 s growing to 2 s, back to fast after each change). A job that Kueue
        preempts is requeued by Kueue and runs again from the start on a new cluster, so by default the
        wait goes on through ``PREEMPTED`` and ``REQUEUED`` (reported as they happen); with
        ``raise_on_preemption=True`` it raises :class:`~rayqueue_sdk.errors.PreemptedError` instead.
        A deactivated Workload (``spec.active=false``) will not come back by itself: that always raises.
        On an existing cluster, a job whose cluster Kueue preempts or deactivates dies with the cluster's
        head and nothing reruns it: that raises :class:`~rayqueue_sdk.errors.PreemptedError` too.

        Args:
            timeout: the most seconds to wait (``None``: no limit, only when asked).
            raise_on_preemption: fail at the first eviction instead of waiting for the requeued run.
            on_progress: called with each new :class:`RayJobStatus`.
            log_lines: how many log lines a :class:`~rayqueue_sdk.errors.JobFailedError` carries.
            show: ``None`` (the view in a notebook) or ``False`` (none).

        Returns:
            The final status (``SUCCEEDED``).

        Raises:
            JobFailedError: the job FAILED or was STOPPED; carries the tail of its logs.
            PreemptedError: deactivated, or evicted with ``raise_on_preemption``.
            AdmissionTimeout: ``timeout`` passed (a ``TimeoutError`` carrying the last phase, reason
                and queue position), or, on an existing cluster, the job's wait for its queued or
                starting cluster passed ``submit(cluster_timeout=...)`` (nothing was submitted).
            ClusterDeletedError: the RayJob was deleted while waiting, or the existing cluster the job
                waited for was deleted before it was submitted.

        Example::

            job.wait(timeout=1800).phase   # <JobPhase.SUCCEEDED: 'succeeded'>
        """
        started = time.monotonic()
        deadline = started + timeout if timeout is not None else None
        pause, last_key = 0.1, None
        keeper = LogKeeper(log_lines)
        viewing = show is not False and is_notebook()
        shown_lines = 0
        try:
            while True:
                st = self.status()
                key = (st.phase, st.explanation, st.position)
                changed = key != last_key
                if changed:
                    log.info("%s", st)
                    if on_progress is not None:
                        on_progress(st)
                    last_key, pause = key, 0.1
                    if self._backend.keeps_logs and st.phase is JobPhase.RUNNING:
                        keeper.start(self._backend.follow)
                if viewing and (changed or len(keeper.lines) != shown_lines):
                    shown_lines = len(keeper.lines)
                    self._follow_card(st, keeper.text() if keeper.seen else None, fetch=changed)
                verdict = st.assessment
                if verdict.verdict is Verdict.DONE:
                    return st
                if raise_on_preemption and st.phase in (JobPhase.PREEMPTED, JobPhase.REQUEUED):
                    verdict = dataclasses.replace(verdict, verdict=Verdict.FAIL, error_kind=ErrorKind.EVICTED)
                if verdict.verdict is Verdict.FAIL:
                    unsent = self._unsent_failure()
                    if unsent is not None:  # the wait for its cluster failed: that wait's own error
                        raise unsent
                    failed = verdict.error_kind is ErrorKind.FAILED
                    error = verdict.error(
                        self.job_name, self._failure_tail(keeper, log_lines) if failed else ""
                    )
                    assert error is not None
                    raise error
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    assert timeout is not None
                    raise AdmissionTimeout(
                        self.job_name,
                        timeout,
                        phase=str(st.phase),
                        reason=st.explanation,
                        position=st.position,
                        what="the job to finish",
                    )
                sleep = pause if deadline is None else min(pause, max(0.0, deadline - now))
                time.sleep(sleep)
                pause = min(2.0, pause * 1.5)
        finally:
            keeper.stop()
            if keeper.seen:
                self._kept_logs = keeper.text()

    def _unsent_failure(self) -> BaseException | None:
        """Why a job that waited for its cluster was never submitted (AdmissionTimeout, ...), or None."""
        if isinstance(self._backend, ExistingClusterJob):
            return self._backend.submission_failure
        return None

    def stop(self) -> bool:
        """Stop the job. On an existing cluster Ray stops it; a job-owned job that runs is stopped
        through Ray (KubeRay then ends the RayJob and deletes its cluster), one still queued has its Kueue
        Workload deactivated. Returns True if anything changed.

        Example:
            >>> job = RayJob(job_name="doc-rayjob-stop", entrypoint="python x.py",
            ...              cluster_config=ClusterConfiguration(), namespace="default", client=api)
            >>> job.stop()   # never submitted: nothing changed (a submitted one: True)
            False
        """
        return self._backend.stop()

    def resubmit(self) -> bool:
        """Run the job again after :meth:`stop` (codeflare-sdk's name). Returns True once it is resubmitted.

        A stop asked through Ray lands asynchronously (the job reads RUNNING until Ray, then KubeRay, have
        ended it), so straight after :meth:`stop` this first waits for that, saying so on stderr, up to
        :data:`~rayqueue_sdk.job.settle.STOP_LAND_TIMEOUT` seconds (then it raises
        :class:`~rayqueue_sdk.errors.AdmissionTimeout` and nothing is resubmitted).

        A job-owned job whose Kueue Workload was deactivated (stopped while queued) is reactivated
        (``Workload.spec.active=true``; Kueue queues it again), and a suspended RayJob without a Workload is
        resumed (``spec.suspend=false``), as codeflare-sdk does. A job-owned job that already ended
        (stopped while running, failed, succeeded) is deleted with its cluster and submitted again under the
        same name, so code that resumes from a checkpoint picks up where it stopped. On an existing cluster
        the job is submitted again with a new Ray submission id (:attr:`job_id`).

        Raises:
            NotFoundError: a job-owned job that was never submitted (or was deleted): use :meth:`submit`.
            AdmissionTimeout: a stop in flight did not land in time (``phase="stopping"``).

        Example::

            job.stop(); job.resubmit(); job.wait()   # back to back: resubmit waits for the stop
        """
        await_stop(self._backend, self.job_name)  # a stop in flight lands first (job/settle.py)
        if not self.owns_cluster:
            self.submit()
            return True
        backend = self._backend
        assert isinstance(backend, OwnedClusterJob)
        if backend.resume():
            return True
        backend.delete()
        from rayqueue_sdk.kube.poll import poll_until  # lazy: only a resubmission polls

        # the old RayJob and its Secret must be gone before the name is reused
        if not poll_until(lambda: not backend.remains(), timeout=_GONE_TIMEOUT, interval=0.2):
            raise AdmissionTimeout(
                self.job_name,
                _GONE_TIMEOUT,
                phase="deleting",
                reason="the ended RayJob is still being deleted",
                what="the old RayJob to go",
            )
        self.submit()
        return True

    def delete(self) -> bool:
        """Delete the job: the RayJob with its cluster, Workload and working-dir Secret (job-owned), or
        the job's record and logs on the existing cluster (stopping it first if it still runs).
        Safe to repeat; returns False when there was nothing to delete.

        Example:
            >>> job = RayJob(job_name="doc-rayjob-delete", entrypoint="python x.py",
            ...              cluster_config=ClusterConfiguration(), namespace="default", client=api)
            >>> job.delete()   # never submitted: nothing to delete (the class example deletes one)
            False
        """
        return self._backend.delete()

    def __repr__(self) -> str:
        target = f"cluster_name={self.cluster_name!r}" if self.cluster_name else "cluster_config=..."
        return f"RayJob(job_name={self.job_name!r}, entrypoint={self.entrypoint!r}, {target})"
