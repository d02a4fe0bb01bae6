"""Giving a :class:`~rayqueue_sdk.cluster.cluster.Cluster`'s quota back without deleting it: Kueue's
``deactivate()``/``resume()``, and idle scale-to-zero (:meth:`ScaleToZeroMixin.scale_to_zero`, built by
:mod:`rayqueue_sdk.scaling.policy`, loaded on first use), with the GPU utilisation the card shows.

Example:
    >>> from rayqueue_sdk import Cluster, ClusterConfiguration
    >>> Cluster(ClusterConfiguration(name="doc-stz", namespace="default"), client=api).scale_to_zero(None)
    'idle policy removed (nothing to remove)'
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from rayqueue_sdk.cluster.rayjobs import RayJobsMixin
from rayqueue_sdk.config.idle import IdlePolicy, PreStopHook, PrometheusSource
from rayqueue_sdk.errors import NotFoundError, RayQueueError, UnsupportedError
from rayqueue_sdk.manifests.idle import IdleMode, IdleModeName, IdleSignal, StopMechanism
from rayqueue_sdk.manifests.labels import QUEUE_LABEL
from rayqueue_sdk.manifests.meta import labels_of, name_of, uid_of

if TYPE_CHECKING:  # pragma: no cover
    from rayqueue_sdk.kube.session import KubeSession

__all__ = ["ScaleToZeroMixin"]

log = logging.getLogger(__name__)

#: How long deactivate()/resume() wait for Kueue to make the Workload of a cluster that names a queue.
_WORKLOAD_WAIT = 30.0


class ScaleToZeroMixin(RayJobsMixin):
    """Kueue's deactivate/resume and the idle scale-to-zero policy of a ``Cluster``.

    Example:
        >>> from rayqueue_sdk import Cluster, ClusterConfiguration
        >>> Cluster(ClusterConfiguration(name="ws"), show=False).idle_policy is None
        True
    """

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
        from rayqueue_sdk.queues.usage import utilisation_series  # lazy: usage is rarely asked for

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
        from rayqueue_sdk.admission.idle import policy_of  # lazy: the policy a cluster carries
        from rayqueue_sdk.kube.kinds import RAYCLUSTERS  # lazy: API calls
        from rayqueue_sdk.kube.lookups import fetch_raycluster, find_workload  # lazy: API calls
        from rayqueue_sdk.scaling import policy as scaling  # lazy: scale-to-zero, loaded on first use

        session = self.session
        namespace = self.namespace
        rc = fetch_raycluster(session, name=self.name, namespace=namespace)
        info = policy_of(rc)
        if info is None:
            return self._set_active(True, rc)
        uid = uid_of(rc) or ""
        workload = (
            find_workload(session, owner_uid=uid, namespace=namespace)
            if info.mechanism is StopMechanism.WORKLOAD
            else None
        )
        done = scaling.on_resume(session, rc, workload)
        log.info("%s/%s: %s", namespace, self.name, done)
        if info.mechanism is StopMechanism.SUSPEND:
            session.patch(
                RAYCLUSTERS, name=self.name, patch={"spec": {"suspend": False}}, namespace=namespace
            )
            self.__dict__.pop("job_client", None)
            return self.name
        return self._set_active(True, rc, workload)

    # -- idle scale-to-zero ------------------------------------------------------------------------
    def _enable(self, session: KubeSession, rc: dict[str, Any], policy: IdlePolicy) -> list[str]:
        from rayqueue_sdk.admission.idle import policy_of  # lazy: the policy a cluster carries
        from rayqueue_sdk.scaling import planning  # lazy: scale-to-zero, loaded on first use
        from rayqueue_sdk.scaling import policy as scaling  # lazy: as above

        the_plan = planning.plan(session, rc, policy)
        return scaling.apply_plan(session, the_plan, previous=policy_of(rc))

    def scale_to_zero(
        self,
        idle_minutes: float | None,
        *,
        mode: IdleMode | IdleModeName = IdleMode.AUTO,
        idle_signal: IdleSignal = "gpu",
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
            >>> from rayqueue_sdk import Cluster, ClusterConfiguration
            >>> cluster = Cluster(ClusterConfiguration(name="doc-cluster-idle", namespace="default"),
            ...                   client=api)
            >>> cluster.scale_to_zero(None)   # remove the policy
            'idle policy removed (nothing to remove)'

            On a running cluster (not run here: the idle signal needs Ray or Prometheus)::

                cluster.scale_to_zero(idle_minutes=60)            # auto: KEDA where served, else the reaper
                cluster.scale_to_zero(60, dry_run=True)           # what it would do now, and why
        """
        from rayqueue_sdk.admission.idle import policy_of  # lazy: the policy a cluster carries
        from rayqueue_sdk.kube.lookups import fetch_raycluster, find_workload  # lazy: API calls
        from rayqueue_sdk.scaling import planning  # lazy: scale-to-zero, loaded on first use
        from rayqueue_sdk.scaling import policy as scaling  # lazy: as above

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
        # One fetch step: the RayCluster and (in a queue) its Workload, read once and passed down.
        rc = fetch_raycluster(session, name=self.name, namespace=namespace)
        uid = uid_of(rc) or ""
        workload = (
            find_workload(session, owner_uid=uid, namespace=namespace)
            if QUEUE_LABEL in labels_of(rc)
            else None
        )
        the_plan = planning.plan(session, rc, policy, workload=name_of(workload) if workload else None)
        if dry_run:
            from rayqueue_sdk.cluster import dashboard  # lazy: the dashboard and Ray, for a running cluster
            from rayqueue_sdk.cluster.observe import observe_pair  # lazy: the read path

            if the_plan.mechanism is not StopMechanism.WORKLOAD:
                workload = None
            elif workload is None:  # Kueue made it while the plan waited for it
                workload = find_workload(session, owner_uid=uid, namespace=namespace)
            status = observe_pair(session, rc, workload)  # the addresses, from what was read
            gpu, reading = None, None
            if policy.idle_signal != "jobs":  # read as the reaper reads it: Prometheus, else Ray's view
                gpu, reading = scaling.read_gpu(policy, rc, status.dashboard_url)
            jobs = None
            try:
                if "job_client" not in self.__dict__ and status.dashboard_url:
                    self.__dict__["job_client"] = dashboard.ray_job_client(
                        status.dashboard_url, client=session, verify=self.config.verify_tls
                    )
                jobs = [
                    {"submission_id": j.submission_id, "status": str(getattr(j.status, "value", j.status))}
                    for j in self.list_jobs()
                ]
            except (RayQueueError, OSError, RuntimeError, ValueError) as err:
                log.debug("dry run: Ray jobs not readable: %s", err)
            return scaling.dry_run(policy, the_plan, workload, rc=rc, jobs=jobs, gpu=gpu, gpu_reading=reading)
        made = scaling.apply_plan(session, the_plan, previous=policy_of(rc))
        self._idle_policy = policy
        return f"{namespace}/{self.name}: {the_plan.headline}: {', '.join(made)}"

    def _set_active(
        self, active: bool, rc: dict[str, Any] | None = None, workload: dict[str, Any] | None = None
    ) -> str:
        """Set the Workload's ``spec.active`` (``rc``, ``workload``: what the caller has just read)."""
        from rayqueue_sdk.kube import lookups  # lazy: API calls
        from rayqueue_sdk.kube.poll import poll_until  # lazy: as above

        session = self.session
        namespace = self.namespace
        if rc is None:
            rc = lookups.fetch_raycluster(session, name=self.name, namespace=namespace)
        uid = uid_of(rc) or ""
        found = workload
        if found is None and QUEUE_LABEL in labels_of(rc):
            # Kueue makes the Workload of a queued cluster moments after apply() returns: wait for it
            # rather than call a cluster applied a second ago "not in a queue".
            found = poll_until(
                lambda: lookups.find_workload(session, owner_uid=uid, namespace=namespace),
                timeout=_WORKLOAD_WAIT,
                interval=0.1,
                max_interval=1.0,
            )
        try:
            wl = lookups.set_workload_active(
                session, owner_uid=uid, active=active, namespace=namespace, workload=found
            )
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
