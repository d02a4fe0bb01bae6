"""The Kueue controller of the local control plane: jobs -> Workloads -> admission -> jobs.

It plays the parts of Kueue's job reconciler (jobframework/reconciler.go), workload controller
(core/workload_controller.go), scheduler (an :func:`~.engine.admission_pass` whenever something
changed, and every ``resync_seconds``) and queue controllers, writing through the store:

* a managed RayCluster/RayJob (queue label, not owned by a queued RayJob) gets its Workload;
  a job whose pod sets change is stopped and its Workload replaced;
* admission writes ``status.admission``, ``QuotaReserved``/``Admitted`` and the ``QuotaReserved``
  and ``Admitted`` events, then unsuspends the job with the flavors' nodeLabels and tolerations;
* evictions (preemption, ``spec.active=false``, a draining queue) set ``Evicted`` (and
  ``Preempted``) with upstream's reasons, messages and events, suspend the job, and, once the job
  is no longer active, clear the reservation and set ``Requeued``;
* ``spec.active=true`` after a deactivation sets ``Requeued=True`` (``Reactivated``);
* ``PodsReady`` follows the job (RayCluster ``status.state``, RayJob ``rayClusterStatus.state``);
  a RayJob whose ``jobDeploymentStatus`` is Complete/Failed finishes its Workload;
* ClusterQueue and LocalQueue status (counts, flavor usage, ``Active``) are kept current; a ClusterQueue
  naming a missing or inactive AdmissionCheck is inactive (:mod:`.queue_status`);
* the webhooks (:mod:`.webhook`) and the visibility API (:mod:`.visibility`) are installed at start.

The job and Workload halves live in :mod:`.jobs` and :mod:`.lifecycle`; this module wires them to
the store and runs the scheduler and the queue-status updates.

Example:
    >>> KueueController().name, "workloads.kueue.x-k8s.io" in KueueController.watches
    ('kueue', True)
"""

from __future__ import annotations

import copy
import logging
import time
from typing import Any

from rayqueue_local.apimachinery.time import now_rfc3339, parse_rfc3339
from rayqueue_local.controllers.base import QueueController
from rayqueue_local.controllers.kueue import admissionfairsharing as admission_fs
from rayqueue_local.controllers.kueue import conditions as cond
from rayqueue_local.controllers.kueue import fairsharing as fs
from rayqueue_local.controllers.kueue import messages as msg
from rayqueue_local.controllers.kueue import queue_status, slices, visibility, webhook
from rayqueue_local.controllers.kueue.admissionchecks import (
    all_checks_ready,
    checks_for_admission,
    initial_check_states,
    waits_for_backoff,
)
from rayqueue_local.controllers.kueue.amounts import format_amount
from rayqueue_local.controllers.kueue.engine import PassResult, admission_pass
from rayqueue_local.controllers.kueue.jobs import JobReconciler
from rayqueue_local.controllers.kueue.lifecycle import WorkloadReconciler
from rayqueue_local.controllers.kueue.ops import (
    ADMISSION,
    ADMISSION_CHECKS,
    CLUSTER_QUEUES,
    COHORTS,
    FLAVORS,
    JOB_KINDS,
    LOCAL_QUEUES,
    PRIORITY_CLASSES,
    SCHEDULE,
    TOPOLOGIES,
    WORKLOADS,
    JobItem,
    KueueItem,
    Schedule,
    WorkloadItem,
    metadata_of,
)
from rayqueue_local.controllers.kueue.podsready import PodsReadyConfig, seconds_left
from rayqueue_local.controllers.kueue.snapshot import WorkloadInfo
from rayqueue_local.controllers.plane import Plane
from rayqueue_local.storage.store import StoreError

__all__ = ["KueueController"]

log = logging.getLogger(__name__)


def _resource_requests(wl: WorkloadInfo) -> list[dict[str, Any]]:
    """``status.resourceRequests`` of a pending Workload: each pod set's total requests.

    Example:
        >>> from rayqueue_local.controllers.kueue.snapshot import PodSetInfo
        >>> head = PodSetInfo("head", 2, {"cpu": 500}, {})
        >>> info = WorkloadInfo({}, "ns", "w", "u", "", 0, 0.0, "lq", True, [head])
        >>> _resource_requests(info)
        [{'name': 'head', 'resources': {'cpu': '1'}}]
    """
    return [
        {
            "name": ps.name,
            "resources": {r: format_amount(r, v * ps.count) for r, v in sorted(ps.per_pod.items())},
        }
        for ps in wl.pod_sets
    ]


class KueueController(JobReconciler, WorkloadReconciler, QueueController):
    """Kueue for the local control plane; ``cp`` (optional) gets the visibility routes.

    Example:
        >>> ctrl = KueueController()
        >>> ctrl.keys_for(type("E", (), {"key": "clusterqueues.kueue.x-k8s.io", "object": {}})())
        [Schedule()]
    """

    name = "kueue"
    watches = (
        *JOB_KINDS,
        WORKLOADS,
        CLUSTER_QUEUES,
        LOCAL_QUEUES,
        COHORTS,
        FLAVORS,
        PRIORITY_CLASSES,
        TOPOLOGIES,
        ADMISSION_CHECKS,
        "namespaces",
        "nodes",
    )
    resync_seconds = 2.0
    #: re-check every job on every n-th resync (events drive them otherwise)
    job_resync_every = 10
    #: run a pass at least this often even when nothing was written
    idle_pass_seconds = 30.0
    #: wait this long after a pass before the next, so a burst of writes makes one pass
    min_pass_interval = 0.05

    def __init__(self, cp: Plane | None = None) -> None:
        super().__init__()
        self.cp = cp
        self._dirty = True
        self._ticks = 0
        self._last_pass = 0.0
        self._cluster_queues: dict[str, dict[str, Any]] = {}
        options: Any = getattr(cp, "options", None)
        timeout = getattr(options, "wait_for_pods_ready_timeout_seconds", None)
        if timeout is not None:
            self.pods_ready_config = PodsReadyConfig(
                timeout=float(timeout),
                base=options.requeuing_backoff_base_seconds,
                maximum=options.requeuing_backoff_max_seconds,
                limit=options.requeuing_backoff_limit_count,
            )
        #: Admission Fair Sharing: per LocalQueue, consumed resources (Kueue units) and when they were sampled
        self._afs: dict[tuple[str, str], tuple[dict[str, float], float]] = {}

    def fair_sharing(self) -> fs.FairSharingSettings:
        """Kueue's fair-sharing configuration, from the control plane's options (off without them)."""
        options = getattr(self.cp, "options", None)
        if options is None:
            return fs.FairSharingSettings()
        afs = None
        if getattr(options, "admission_fair_sharing", False):
            afs = admission_fs.AdmissionFairSharing(
                half_life_seconds=options.afs_usage_half_life_seconds,
                sampling_interval_seconds=options.afs_usage_sampling_interval_seconds,
            )
        return fs.FairSharingSettings(
            enabled=bool(getattr(options, "fair_sharing", False)),
            preemption_strategies=tuple(options.fair_sharing_preemption_strategies.split(",")),
            admission=afs,
        )

    # -- wiring ----------------------------------------------------------------------------------
    def start(self, store: Any) -> None:
        """Install the webhooks and the visibility API, then start reconciling."""
        webhook.install(store)
        if self.cp is not None and hasattr(self.cp, "add_route"):
            visibility.register(self.cp, store)
        super().start(store)

    def keys_for(self, event: Any) -> list[KueueItem]:
        """Work items for a store event: the job; or the Workload, its owner and a pass; or a pass."""
        if event.key not in JOB_KINDS:
            self._dirty = True
        meta = metadata_of(event.object)
        if event.key in JOB_KINDS:
            # A job's changes reach the scheduler through its Workload's writes.
            return [JobItem(event.key, meta.get("namespace"), meta.get("name") or "")]
        if event.key == WORKLOADS:
            items: list[KueueItem] = [WorkloadItem(meta.get("namespace"), meta.get("name") or "")]
            for ref in meta.get("ownerReferences") or ():
                for key, kind in JOB_KINDS.items():
                    if ref.get("kind") == kind:
                        items.append(JobItem(key, meta.get("namespace"), ref.get("name") or ""))
            return [*items, SCHEDULE]
        return [SCHEDULE]

    def resync(self) -> list[KueueItem]:
        """A pass (skipped by :meth:`schedule` when nothing changed), the running Workloads that have
        a maximum execution time, those in a requeue backoff or waiting for their pods (waitForPodsReady),
        and every job on every ``job_resync_every``-th call."""
        self._ticks += 1
        items: list[KueueItem] = []
        if self._ticks % self.job_resync_every == 1:
            for key in JOB_KINDS:
                for job in self.store.list(key):
                    items.append(
                        JobItem(key, metadata_of(job).get("namespace"), metadata_of(job).get("name") or "")
                    )
        now = time.time()
        for wl in self.store.list(WORKLOADS):
            timed = (wl.get("spec") or {}).get("maximumExecutionTimeSeconds") and cond.is_true(
                wl, msg.ADMITTED
            )
            config = self.pods_ready_config
            waits_for_pods = config is not None and seconds_left(wl, config, now=now) is not None
            if timed or waits_for_backoff(wl) or waits_for_pods:
                items.append(
                    WorkloadItem(metadata_of(wl).get("namespace"), metadata_of(wl).get("name") or "")
                )
        return [*items, SCHEDULE]

    def reconcile(self, item: KueueItem) -> None:
        """Dispatch one work item; a write conflict re-queues it."""
        try:
            if isinstance(item, Schedule):
                try:
                    self.schedule()
                except Exception:  # whatever failed (re-raised below), the next resync schedules again
                    self._dirty = True
                    raise
            elif isinstance(item, WorkloadItem):
                self.reconcile_workload(item.namespace, item.name)
            else:
                self.reconcile_job(item.key, item.namespace, item.name)
        except StoreError as exc:
            if exc.code == 409:
                self.enqueue(item)
            elif exc.code != 404:
                raise

    # -- the scheduler and the queue controllers ---------------------------------------------------
    def schedule(self) -> None:
        """One admission pass over the store's current state, its decisions written back.

        Skipped when no watched object changed since the last pass, unless ``idle_pass_seconds``
        have gone by."""
        since = time.monotonic() - self._last_pass
        if not self._dirty and since < self.idle_pass_seconds:
            return
        if since < self.min_pass_interval:
            time.sleep(self.min_pass_interval - since)
        self._dirty = False
        self._last_pass = time.monotonic()
        workloads = [w for w in self.store.list(WORKLOADS) if not metadata_of(w).get("deletionTimestamp")]
        cluster_queues = self.store.list(CLUSTER_QUEUES)
        self._cluster_queues = {metadata_of(cq)["name"]: cq for cq in cluster_queues}
        local_queues = self.store.list(LOCAL_QUEUES)
        flavors = self.store.list(FLAVORS)
        namespaces = {
            metadata_of(n)["name"]: metadata_of(n).get("labels") or {} for n in self.store.list("namespaces")
        }
        fair = self.fair_sharing()
        topologies = self._list(TOPOLOGIES)
        cohorts = self.store.list(COHORTS)
        checks = {metadata_of(ac)["name"]: ac for ac in self._list(ADMISSION_CHECKS)}
        result = admission_pass(
            cluster_queues=cluster_queues,
            cohorts=cohorts,
            resource_flavors=flavors,
            local_queues=self._with_consumed(local_queues) if fair.admission else local_queues,
            workloads=slices.scheduling_views(workloads),  # a scale-up slice asks for its delta
            namespaces=namespaces,
            now=time.time(),
            fair_sharing=fair,
            topologies=topologies,
            nodes=self.store.list("nodes") if topologies else (),
            admission_checks=checks.values(),
            **self._pods_ready_pass_options(),
        )
        self._apply(result)
        if fair.admission is not None:
            self._sample_consumption(result, fair.admission)
        self._update_queues(result, cluster_queues, local_queues, flavors, checks)
        if fair.enabled:
            for cohort in cohorts:
                share = result.cohort_weighted_shares.get(metadata_of(cohort)["name"], 0)
                self._write_fair_share(COHORTS, cohort, share)

    def _pods_ready_pass_options(self) -> dict[str, Any]:
        """``waitForPodsReady``'s ``blockAdmission`` and ``requeuingStrategy.timestamp`` for the pass, only
        while waitForPodsReady is on (a timeout set), as Kueue reads them."""
        options: Any = getattr(self.cp, "options", None)
        if self.pods_ready_config is None or options is None:
            return {}
        return {
            "block_admission": bool(getattr(options, "wait_for_pods_ready_block_admission", False)),
            "requeuing_timestamp": getattr(options, "requeuing_timestamp", "Eviction"),
        }

    def _list(self, key: str) -> list[dict[str, Any]]:
        try:
            return list(self.store.list(key))
        except (KeyError, StoreError):
            return []

    def _with_consumed(self, local_queues: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The LocalQueues with the ledger's consumed resources in their status (seeding the ledger from
        the status the first time a LocalQueue is seen, as upstream seeds from persisted state)."""
        now = time.time()
        out = []
        for lq in local_queues:
            key = (metadata_of(lq).get("namespace", ""), metadata_of(lq)["name"])
            if key not in self._afs:
                self._afs[key] = (admission_fs.consumed_resources(lq), now)
            consumed = self._afs[key][0]
            copy_ = dict(lq, status=dict(lq.get("status") or {}))
            copy_["status"]["fairSharing"] = admission_fs.local_queue_fair_sharing_status(0, consumed, None)
            out.append(copy_)
        return out

    def _sample_consumption(self, result: PassResult, afs: admission_fs.AdmissionFairSharing) -> None:
        """Entry penalties of this pass's admissions at once; every ``usageSamplingInterval`` the decayed
        fold of the LocalQueues' admitted usage (upstream's ``reconcileConsumedUsage``)."""
        now = time.time()
        for key, consumed in result.consumed.items():
            if key in self._afs:
                self._afs[key] = (dict(consumed), self._afs[key][1])
        admitted: dict[tuple[str, str], dict[str, float]] = {}
        for wl in result.workloads:
            if wl.reserved and not wl.finished:
                usage = admitted.setdefault((wl.namespace, wl.queue_name), {})
                for (_, res), value in wl.usage.items():
                    usage[res] = usage.get(res, 0.0) + value
        for key, (consumed, last) in list(self._afs.items()):
            elapsed = now - last
            if elapsed >= afs.sampling_interval_seconds:
                self._afs[key] = (admission_fs.decayed(consumed, admitted.get(key, {}), elapsed, afs), now)

    def _write_fair_share(self, key: str, obj: dict[str, Any], share: int) -> None:
        if ((obj.get("status") or {}).get("fairSharing") or {}).get("weightedShare") == share:
            return
        new = copy.deepcopy(obj)
        new.setdefault("status", {})["fairSharing"] = {"weightedShare": share}
        try:
            self.store.update_status(key, new)
        except StoreError as exc:
            if exc.code not in (404, 409):
                raise

    def _write(self, wl: dict[str, Any]) -> dict[str, Any] | None:
        try:
            return dict(self.store.update_status(WORKLOADS, wl))
        except StoreError as exc:
            if exc.code not in (404, 409):
                raise
            self._dirty = True  # the Workload moved on; decide again with fresh state
            self.enqueue(SCHEDULE)
            return None

    def _apply(self, result: PassResult) -> None:
        now = now_rfc3339()
        for admission in result.admitted:
            wl = copy.deepcopy(admission.workload.obj)
            previously = cond.find(wl, msg.ADMITTED)
            replaced = self._replaced_slice(wl)
            if replaced is not None:  # a scale-up slice holds what its old slice held, and its delta
                admission.admission = slices.merged_admission(admission.admission, replaced)
            cond.set_quota_reserved(wl, admission.admission, now)
            wl["status"].pop("resourceRequests", None)  # admission.resourceUsage says it now
            checks = checks_for_admission(
                self._cluster_queues.get(admission.admission["clusterQueue"]), admission.admission
            )
            if checks or wl["status"].get("admissionChecks"):
                states = initial_check_states(checks, wl["status"].get("admissionChecks") or [], now)
                wl["status"]["admissionChecks"] = states
                if not states:
                    wl["status"].pop("admissionChecks")
            if not all_checks_ready(wl):
                # QuotaReserved first; Admitted once every check is Ready (.admissionchecks).
                cond.remove_condition(wl, msg.ADMITTED)
                if previously is not None:
                    wl["status"]["conditions"].append(previously)
            stored = self._write(wl)
            if stored is None:
                continue
            if replaced is not None:
                self._finish_replaced(replaced, stored)
            cq = admission.admission["clusterQueue"]
            queued_at = cond.find(stored, msg.REQUEUED) or {}
            since = parse_rfc3339(
                queued_at.get("lastTransitionTime") or metadata_of(stored).get("creationTimestamp")
            )
            waited = max(0.0, time.time() - since) if since else 0.0
            text = f"Quota reserved in ClusterQueue {cq}, wait time since queued was {waited:.0f}s"
            self._event(stored, "QuotaReserved", text, source=ADMISSION)
            if not cond.is_true(stored, msg.ADMITTED):
                continue
            self._event(
                stored,
                "Admitted",
                f"Admitted by ClusterQueue {cq}, wait time since reservation was 0s",
                source=ADMISSION,
            )
            self._enqueue_owner(stored)
        for eviction in result.evicted:
            wl = copy.deepcopy(eviction.workload.obj)
            cond.evict(wl, eviction.reason, eviction.message, now, eviction.preemption_reason)
            stored = self._write(wl)
            if stored is None:
                continue
            if eviction.preemptor is not None:
                suffix = msg.priority_suffix(eviction.preemptor.priority, eviction.workload.priority)
                self._event(stored, "Preempted", eviction.message + suffix, source=ADMISSION)
                preemptor = eviction.preemptor
                victim = eviction.workload
                text = (
                    f"Preempted workload {victim.namespace}/{victim.name} "
                    f"(UID: {victim.uid}) in ClusterQueue {victim.cluster_queue}{suffix}"
                )
                self._event(preemptor.obj, "PreemptedWorkload", text, source=ADMISSION)
            self._event(stored, f"EvictedDueTo{eviction.reason}", eviction.message, source=ADMISSION)
            self._enqueue_owner(stored)
        for pending in result.pending:
            wl = copy.deepcopy(pending.workload.obj)
            changed = cond.set_condition(wl, msg.QUOTA_RESERVED, False, pending.reason, pending.message, now)
            requests = _resource_requests(pending.workload)
            if wl["status"].get("resourceRequests") != requests:
                wl["status"]["resourceRequests"] = requests
                changed = True
            if not changed:
                continue
            stored = self._write(wl)
            if stored is not None and pending.reason == msg.PENDING:
                self._event(stored, msg.PENDING, pending.message, warning=True, source=ADMISSION)

    def _enqueue_owner(self, wl: dict[str, Any]) -> None:
        for ref in metadata_of(wl).get("ownerReferences") or ():
            for key, kind in JOB_KINDS.items():
                if ref.get("kind") == kind:
                    self.enqueue(JobItem(key, metadata_of(wl).get("namespace"), ref.get("name") or ""))

    def _update_queues(
        self,
        result: PassResult,
        cluster_queues: list[dict[str, Any]],
        local_queues: list[dict[str, Any]],
        flavors: list[dict[str, Any]],
        checks: dict[str, dict[str, Any]],
    ) -> None:
        now = now_rfc3339()
        usage: dict[str, dict[tuple[str, str], int]] = {}
        lq_usage: dict[tuple[str, str], dict[tuple[str, str], int]] = {}
        reserving: dict[str, int] = {}
        lq_reserving: dict[tuple[str, str], int] = {}
        reserved: list[WorkloadInfo] = [w for w in result.workloads if w.reserved and not w.finished]
        for wl in reserved:
            owner = wl.cluster_queue or ""
            reserving[owner] = reserving.get(owner, 0) + 1
            lq_key = (wl.namespace, wl.queue_name)
            lq_reserving[lq_key] = lq_reserving.get(lq_key, 0) + 1
            for fr, value in wl.usage.items():
                usage.setdefault(owner, {})[fr] = usage.setdefault(owner, {}).get(fr, 0) + value
                lq_usage.setdefault(lq_key, {})[fr] = lq_usage.setdefault(lq_key, {}).get(fr, 0) + value
        lq_pending: dict[tuple[str, str], int] = {}
        for wls in result.queue_order.values():
            for wl in wls:
                lq_pending[(wl.namespace, wl.queue_name)] = (
                    lq_pending.get((wl.namespace, wl.queue_name), 0) + 1
                )
        flavor_names = {metadata_of(f)["name"] for f in flavors}
        by_name = {metadata_of(cq)["name"]: cq for cq in cluster_queues}
        active_cqs = set()
        for cq in cluster_queues:
            name = metadata_of(cq)["name"]
            referenced = [
                f["name"]
                for g in (cq.get("spec") or {}).get("resourceGroups") or ()
                for f in g.get("flavors") or ()
            ]
            missing = sorted({f for f in referenced if f not in flavor_names})
            fields = queue_status.cluster_queue_status(
                cq,
                usage=usage.get(name, {}),
                pending=len(result.queue_order.get(name, [])),
                reserving=reserving.get(name, 0),
                missing_flavors=missing,
            )
            if name in result.weighted_shares:
                fields["fairSharing"] = {"weightedShare": result.weighted_shares[name]}
            missing_checks, inactive_checks = queue_status.admission_check_problems(cq, checks)
            active, reason, message = queue_status.cluster_queue_active(
                cq, missing, missing_checks, inactive_checks
            )
            if active:
                active_cqs.add(name)
            self._write_queue(CLUSTER_QUEUES, cq, fields, active, reason, message, now)
        for lq in local_queues:
            key = (metadata_of(lq).get("namespace", ""), metadata_of(lq)["name"])
            cq_name = (lq.get("spec") or {}).get("clusterQueue", "")
            fields = queue_status.local_queue_status(
                by_name.get(cq_name),
                usage=lq_usage.get(key, {}),
                pending=lq_pending.get(key, 0),
                reserving=lq_reserving.get(key, 0),
            )
            if key in self._afs:
                consumed, last = self._afs[key]
                fields["fairSharing"] = admission_fs.local_queue_fair_sharing_status(
                    0, consumed, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(last))
                )
            if ((lq.get("spec") or {}).get("stopPolicy") or "None") != "None":
                state = (False, "Stopped", "LocalQueue is stopped")
            elif cq_name not in active_cqs:
                state = (False, "ClusterQueueIsInactive", "Can't submit new workloads to clusterQueue")
            else:
                state = (True, "Ready", "Can submit new workloads to localQueue")
            self._write_queue(LOCAL_QUEUES, lq, fields, *state, now)

    def _write_queue(
        self,
        key: str,
        obj: dict[str, Any],
        fields: dict[str, Any],
        active: bool,
        reason: str,
        message: str,
        now: str,
    ) -> None:
        new = copy.deepcopy(obj)
        status = new.setdefault("status", {})
        status.update(fields)
        cond.set_condition(new, "Active", active, reason, message, now)
        if new.get("status") == obj.get("status"):
            return
        try:
            self.store.update_status(key, new)
        except StoreError as exc:
            if exc.code not in (404, 409):
                raise
