"""The admission estimate's thin I/O shell: read what the user can see, hand it to the pure
:mod:`rayqueue_sdk.admission.estimate`.

:func:`estimates_for` takes an overview's reads (LocalQueues, ClusterQueues, Workloads) and lists, in the
reader's namespace, the RayClusters (their idle policy annotation), the RayJobs (``activeDeadlineSeconds``,
start time, finished) and KEDA's ScaledObjects (``lastActiveTime``, ``cooldownPeriod``): up to three LISTs,
made only where a workload waits behind a holder of the reader's namespace (RayJobs only where a Workload
there is a RayJob's, ScaledObjects only where a cluster has a KEDA policy), each skipped quietly where
forbidden or not served. Fetch, then decide: :func:`read_holders` is the fetch step of those facts
(:class:`HolderFacts`) and :func:`estimates_from` the pure decision, so that a caller that has read
something already hands it down instead of the estimate reading it again (:class:`EstimateReads`, a typed
snapshot of one call's reads): :func:`read_around` is a queued ``status()``'s (its RayCluster and
Workloads in hand, left out of the LISTs by selector), :func:`reads_from` a wait's or a card's (the
Workloads and RayClusters of their shared watches, the queues read with the position; nothing more is
listed unless a RayJob or a KEDA policy is involved), and the timeline reads the holders' facts once for
its estimates and its releases. The idle clock of either mode is the typed
:class:`~rayqueue_sdk.admission.idle.IdleStatus` (:func:`~rayqueue_sdk.admission.idle.idle_from`, the
one place that decodes the reaper's state annotation and the ScaledObject): the release is due at its
``releases_at`` and comes by its ``acts_by`` (one polling interval later, the interval from the reaper's
annotation or KEDA's ``pollingInterval``) plus Kueue's eviction and next cycle. Holders in namespaces the
reader cannot read have no known release; a reader who may not read ClusterQueues gets the queue position
and a sentence saying what is hidden.

Example:
    >>> from rayqueue_sdk.queues.eta import estimate_for_workload
    >>> estimate_for_workload(session, namespace="default", workload="raycluster-ws-1a2b3")  # not pending
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from rayqueue_sdk.admission.estimate import (
    DEFAULT_SLACK_SECONDS,
    AdmissionEstimate,
    Hold,
    Release,
    admitted_usage,
    deadline_release,
    estimate_admissions,
    finished_release,
    idle_release,
    unbounded_release,
    workload_object_requests,
)
from rayqueue_sdk.admission.idle import IdleStatus, idle_from, policy_of
from rayqueue_sdk.admission.overview import QueueOverview
from rayqueue_sdk.errors import ApiError, RayQueueError
from rayqueue_sdk.kube.kinds import RAYCLUSTERS, RAYJOBS, SCALEDOBJECTS, Kind
from rayqueue_sdk.kube.lookups import list_or_none
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.manifests.idle import IdleMode, StopMechanism
from rayqueue_sdk.manifests.labels import JOB_UID_LABEL
from rayqueue_sdk.manifests.meta import condition_of, meta_of, name_of
from rayqueue_sdk.manifests.scaling import policy_name
from rayqueue_sdk.queues.reads import InHand, QueueReads, overview_of, read_queues
from rayqueue_sdk.scaling.agent import parse_time

__all__ = [
    "EstimateReads",
    "HolderFacts",
    "admission_eta",
    "estimate_around",
    "estimate_for_workload",
    "estimate_from_reads",
    "estimates_for",
    "estimates_from",
    "holds_of",
    "read_around",
    "read_holders",
    "reads_from",
    "releases_of",
]

log = logging.getLogger(__name__)

_DONE = ("Complete", "Failed")
#: What a release takes after the policy acts, beyond its polling interval: the Workload's eviction,
#: its pods' removal and Kueue's next admission cycle.
_KUEUE_SECONDS = 10.0


def _list(
    session: KubeSession, kind: Kind, namespace: str, *, field_selector: str | None = None
) -> list[dict[str, Any]] | None:
    try:
        return list_or_none(session, kind, namespace=namespace, field_selector=field_selector)
    except ApiError as err:  # a failed read leaves the release unknown, never the wait failing
        log.debug("cannot list %s in %s: %s", kind.plural, namespace, err)
        return None


def _utc(ts: float | None) -> datetime | None:
    return None if ts is None else datetime.fromtimestamp(ts, tz=UTC)


def _owner(workload: Mapping[str, Any]) -> tuple[str | None, str | None]:
    refs = meta_of(workload).get("ownerReferences") or []
    ref = next((o for o in refs if o.get("controller")), next(iter(refs), None))
    return (ref.get("kind"), ref.get("name")) if ref else (None, None)


def releases_of(
    workloads: list[dict[str, Any]],
    namespace: str,
    rayclusters: list[dict[str, Any]] | None,
    rayjobs: list[dict[str, Any]] | None,
    scaled_objects: list[dict[str, Any]] | None,
    now: datetime,
) -> list[Release]:
    """One :class:`~rayqueue_sdk.admission.estimate.Release` per admitted Workload the reader can see,
    from the objects read (pure).

    Example:
        >>> from datetime import datetime, timezone
        >>> wl = {"metadata": {"name": "w", "namespace": "ds", "ownerReferences": [{"kind": "RayCluster",
        ...     "name": "ws", "controller": True}]}, "status": {"admission": {"podSetAssignments": [
        ...     {"flavors": {"cpu": "f"}, "resourceUsage": {"cpu": "2"}}]}}}
        >>> [r.why for r in releases_of([wl], "ds", [], [], [], datetime.now(timezone.utc))]
        ['nothing bounds when ds/ws releases its quota (no idle policy or deadline)']
    """
    clusters = {name_of(o): o for o in rayclusters or []}
    jobs = {name_of(o): o for o in rayjobs or []}
    sos = {name_of(o): o for o in scaled_objects or []}
    out: list[Release] = []
    for wl in workloads:
        meta = meta_of(wl)
        usage = admitted_usage(wl)
        if not usage or (wl.get("spec") or {}).get("active") is False:
            continue
        ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        kind, owner = _owner(wl)
        label = f"{ns}/{owner or name}"
        if ns != namespace:
            out.append(unbounded_release(ns, name, label, usage))
            continue
        finished = condition_of(wl, "Finished")
        if finished is not None and finished.get("status") == "True":
            out.append(finished_release(ns, name, label, usage, now=now))
            continue
        if kind == "RayJob" and owner in jobs:
            job = jobs[owner]
            status = job.get("status") or {}
            deadline = (job.get("spec") or {}).get("activeDeadlineSeconds")
            if status.get("jobDeploymentStatus") in _DONE:
                out.append(finished_release(ns, name, label, usage, now=now))
            elif deadline:
                started = _utc(parse_time(status.get("startTime")))
                out.append(
                    deadline_release(
                        ns, name, label, usage, started=started, deadline_seconds=float(deadline), now=now
                    )
                )
            else:
                out.append(unbounded_release(ns, name, label, usage))
            continue
        rc = clusters.get(owner or "") if kind == "RayCluster" else None
        policy = policy_of(rc) if rc is not None else None
        if policy is None or policy.mechanism is not StopMechanism.WORKLOAD:
            out.append(unbounded_release(ns, name, label, usage))
            continue
        so = sos.get(policy_name(str(owner))) if policy.mode is IdleMode.KEDA else None
        out.append(_idle_release(ns, name, label, usage, idle_from(rc, wl, so), now))
    return out


def _idle_release(
    ns: str,
    name: str,
    label: str,
    usage: Mapping[tuple[str, str], Decimal],
    idle: IdleStatus | None,
    now: datetime,
) -> Release:
    """The release of a holder under an idle policy, from its typed :class:`IdleStatus`: the controller
    acts at :attr:`~IdleStatus.releases_at` at the earliest, and by one polling interval later
    (:attr:`~IdleStatus.acts_by`) plus Kueue's eviction and next cycle; an interval not said: the
    default slack. No clock running (busy, not read): a whole period from now, nothing bounds when."""
    if idle is None:
        return unbounded_release(ns, name, label, usage)
    at, by = idle.releases_at, idle.acts_by
    slack = DEFAULT_SLACK_SECONDS if at is None or by is None else by - at + _KUEUE_SECONDS
    period = idle.idle_minutes * 60 if idle.period_seconds is None else idle.period_seconds
    return idle_release(
        ns,
        name,
        label,
        usage,
        idle_since=_utc(idle.idle_since),
        idle_seconds=period,
        now=now,
        cooldown_until=_utc(idle.cooldown_until),
        slack_seconds=slack,
    )


@dataclass(frozen=True)
class HolderFacts:
    """The release facts one call read in the reader's namespace: its RayClusters (their idle policies),
    RayJobs (deadlines, start, finished) and KEDA ScaledObjects (``lastActiveTime``); each ``None`` where
    it could not be read, ``[]`` where it was not needed.

    Example:
        >>> HolderFacts().rayclusters
        []
    """

    rayclusters: list[dict[str, Any]] | None = field(default_factory=list)
    rayjobs: list[dict[str, Any]] | None = field(default_factory=list)
    scaled_objects: list[dict[str, Any]] | None = field(default_factory=list)


def read_holders(
    session: KubeSession,
    reads: QueueReads,
    overview: QueueOverview,
    *,
    rayclusters: list[dict[str, Any]] | None = None,
    rayclusters_in_hand: InHand | None = None,
    rayjobs_in_hand: InHand | None = None,
    every: bool = False,
) -> HolderFacts:
    """The fetch step of the release facts (up to three LISTs in the reader's namespace, see the module
    docstring): RayClusters only where a workload of the namespace waits behind a holder (``every``: the
    timeline's holders need them anyway), RayJobs where one of its Workloads is a RayJob's, ScaledObjects
    where a cluster has a KEDA policy. ``rayclusters``: the namespace's RayClusters as the caller holds
    them (not listed); ``rayclusters_in_hand``, ``rayjobs_in_hand``: those it has read, left out of the
    LISTs and added.

    Example:
        >>> reads = read_queues(session, namespace="default")
        >>> read_holders(session, reads, overview_of(reads))   # nothing waits: nothing listed
        HolderFacts(rayclusters=[], rayjobs=[], scaled_objects=[])
    """
    ns = reads.namespace
    waiting = any(w.namespace == ns for q in overview.queues for w in q.pending)
    holding = every or (waiting and any(q.holding for q in overview.queues))
    if not holding:
        return HolderFacts()
    rcs = rayclusters
    if rcs is None:
        hand = rayclusters_in_hand or InHand()
        listed = _list(session, RAYCLUSTERS, ns, field_selector=hand.field_selector)
        rcs = None if listed is None else hand.merged(listed)
    by_job = any(_owner(w)[0] == "RayJob" for w in reads.workloads if meta_of(w).get("namespace") == ns)
    jobs: list[dict[str, Any]] | None = []
    if by_job:
        jobs_hand = rayjobs_in_hand or InHand()
        listed_jobs = _list(session, RAYJOBS, ns, field_selector=jobs_hand.field_selector)
        jobs = None if listed_jobs is None else jobs_hand.merged(listed_jobs)
    sos = _list(session, SCALEDOBJECTS, ns) if rcs and _any_keda(rcs) else []
    return HolderFacts(rcs, jobs, sos)


def estimates_from(
    reads: QueueReads, overview: QueueOverview, holders: HolderFacts, *, now: datetime | None = None
) -> dict[tuple[str, str], AdmissionEstimate]:
    """Every pending workload's estimate in ``overview`` from what was read (pure).

    Example:
        >>> reads = QueueReads("ds", [], [], [], [], [], True)
        >>> estimates_from(reads, overview_of(reads), HolderFacts())
        {}
    """
    now = now or datetime.now(UTC)
    ns = reads.namespace
    rcs, jobs = holders.rayclusters, holders.rayjobs
    releases = releases_of(reads.workloads, ns, rcs, jobs, holders.scaled_objects, now)
    requests: dict[tuple[str, str], dict[str, Decimal]] = {}
    for wl in reads.workloads:
        meta = meta_of(wl)
        requests[(str(meta.get("namespace") or ""), str(meta.get("name") or ""))] = workload_object_requests(
            wl
        )
    hidden: list[str] = []
    if rcs is None:
        hidden.append("your RayClusters cannot be listed, so idle policies are not known")
    if any("not visible" in n for n in reads.notes):
        hidden.append("quota held from other namespaces has no known release")
    holds = holds_of(reads.workloads, ns, rcs, jobs)
    return estimate_admissions(overview, requests, releases, now=now, hidden=hidden, holds=holds)


def estimates_for(
    session: KubeSession,
    reads: QueueReads,
    overview: QueueOverview,
    *,
    now: datetime | None = None,
    rayclusters: list[dict[str, Any]] | None = None,
) -> dict[tuple[str, str], AdmissionEstimate]:
    """Every pending workload's estimate in ``overview``: :func:`read_holders` then the pure
    :func:`estimates_from` (``rayclusters``: the namespace's RayClusters as the caller already holds
    them, not listed again).

    Example:
        >>> reads = read_queues(session, namespace="default")
        >>> estimates_for(session, reads, overview_of(reads))   # nothing pending in the namespace
        {}
    """
    holders = read_holders(session, reads, overview, rayclusters=rayclusters)
    return estimates_from(reads, overview, holders, now=now)


@dataclass(frozen=True)
class EstimateReads:
    """What one call read for the estimate, handed down so that nothing is read again: the overview's
    reads (:class:`~rayqueue_sdk.queues.reads.QueueReads`), their overview and the holders'
    :class:`HolderFacts`.

    Example:
        >>> reads = QueueReads("ds", [], [], [], [], [], True)
        >>> EstimateReads(reads, overview_of(reads), HolderFacts()).estimate("w") is None   # not pending
        True
    """

    queues: QueueReads
    overview: QueueOverview
    holders: HolderFacts

    def estimate(self, workload: str, *, now: datetime | None = None) -> AdmissionEstimate | None:
        """The estimate of the namespace's Workload ``workload`` (pure; ``None``: not pending)."""
        ns = self.queues.namespace
        if not any(w.namespace == ns and w.name == workload for q in self.overview.queues for w in q.pending):
            return None
        return estimates_from(self.queues, self.overview, self.holders, now=now).get((ns, workload))


def reads_from(
    session: KubeSession,
    *,
    namespace: str,
    workloads: list[dict[str, Any]],
    rayclusters: list[dict[str, Any]],
    local_queues: list[dict[str, Any]],
    cluster_queues: list[dict[str, Any]] | None,
) -> EstimateReads:
    """The :class:`EstimateReads` of what a caller holds (a wait's or a card's shared watches: the
    namespace's Workloads and RayClusters; its LocalQueues and the ClusterQueues, ``None``: not
    readable): only the release facts no watch carries are listed, where they matter.

    Example:
        >>> reads_from(session, namespace="ds", workloads=[], rayclusters=[], local_queues=[],
        ...            cluster_queues=[]).estimate("w") is None
        True
    """
    notes = [] if cluster_queues is not None else ["ClusterQueues cannot be read: quotas are not shown"]
    if session.cache.get("overview_workloads_namespaced_only"):
        notes.append("workloads of other namespaces are not visible to you")
    reads = QueueReads(
        namespace, local_queues, [], cluster_queues or [], workloads, notes, cluster_queues is not None
    )
    overview = overview_of(reads)
    return EstimateReads(reads, overview, read_holders(session, reads, overview, rayclusters=rayclusters))


def read_around(
    session: KubeSession,
    owner: Mapping[str, Any],
    workloads: list[dict[str, Any]],
    *,
    kind: Kind = RAYCLUSTERS,
) -> EstimateReads:
    """The estimate's reads around a queued RayCluster (or RayJob: ``kind``) and its Workloads already in
    hand (``status()``): the overview's three LISTs and the holders' facts, the owner and its Workloads
    left out of their LISTs (by name, by ``job-uid`` label) and added, so that neither is read twice.

    Example:
        >>> rc = {"metadata": {"name": "doc-around", "namespace": "default", "uid": "u-around"}}
        >>> read_around(session, rc, []).estimate("raycluster-doc-around") is None
        True
    """
    meta = meta_of(owner)
    ns = str(meta.get("namespace") or session.namespace)
    mine = InHand(tuple(workloads), label_selector=f"{JOB_UID_LABEL}!={meta.get('uid') or ''}")
    reads = read_queues(session, namespace=ns, workloads_in_hand=mine)
    overview = overview_of(reads)
    hand = InHand((dict(owner),), field_selector=f"metadata.name!={meta.get('name') or ''}")
    holders = (
        read_holders(session, reads, overview, rayjobs_in_hand=hand)
        if kind == RAYJOBS
        else read_holders(session, reads, overview, rayclusters_in_hand=hand)
    )
    return EstimateReads(reads, overview, holders)


def estimate_around(
    session: KubeSession,
    owner: Mapping[str, Any],
    workloads: list[dict[str, Any]],
    *,
    workload: str,
    kind: Kind = RAYCLUSTERS,
) -> AdmissionEstimate | None:
    """:func:`admission_eta` of ``workload`` from :func:`read_around` (its owner and Workloads in hand, not
    read again); ``None`` where the queues cannot be read at all (said in the log, never an error).

    Example:
        >>> rc = {"metadata": {"name": "doc-around", "namespace": "default", "uid": "u-around"}}
        >>> estimate_around(session, rc, [], workload="raycluster-doc-around") is None
        True
    """
    try:
        return read_around(session, owner, workloads, kind=kind).estimate(workload)
    except RayQueueError as err:
        log.debug("no admission estimate for %s: %s", workload, err)
        return None


def estimate_from_reads(
    session: KubeSession,
    *,
    namespace: str,
    workload: str,
    workloads: list[dict[str, Any]],
    rayclusters: list[dict[str, Any]],
    local_queues: list[dict[str, Any]],
    cluster_queues: list[dict[str, Any]] | None,
    now: datetime | None = None,
) -> AdmissionEstimate | None:
    """The estimate of one pending Workload from what a wait already holds (:func:`reads_from`): the
    namespace's Workloads and RayClusters (its shared watches), its LocalQueues and the ClusterQueues
    (``None``: not readable), read with the queue position. ``None``: not pending.

    Example:
        >>> estimate_from_reads(session, namespace="ds", workload="w", workloads=[], rayclusters=[],
        ...                     local_queues=[], cluster_queues=[]) is None
        True
    """
    found = reads_from(
        session,
        namespace=namespace,
        workloads=workloads,
        rayclusters=rayclusters,
        local_queues=local_queues,
        cluster_queues=cluster_queues,
    )
    return found.estimate(workload, now=now)


def holds_of(
    workloads: list[dict[str, Any]],
    namespace: str,
    rayclusters: list[dict[str, Any]] | None,
    rayjobs: list[dict[str, Any]] | None,
) -> dict[tuple[str, str], Hold]:
    """How long each pending Workload of ``namespace`` will hold its quota once admitted: a cluster with an
    idle policy at least its idle period (its initial cooldown if longer), a RayJob at most its deadline
    (pure).

    Example:
        >>> wl = {"metadata": {"name": "w", "namespace": "ds", "ownerReferences": [{"kind": "RayJob",
        ...     "name": "train"}]}}
        >>> job = {"metadata": {"name": "train"}, "spec": {"activeDeadlineSeconds": 60}}
        >>> holds_of([wl], "ds", [], [job])[("ds", "w")].latest
        90.0
    """
    clusters = {name_of(o): o for o in rayclusters or []}
    jobs = {name_of(o): o for o in rayjobs or []}
    out: dict[tuple[str, str], Hold] = {}
    for wl in workloads:
        meta = meta_of(wl)
        if meta.get("namespace") != namespace or admitted_usage(wl):
            continue
        key = (namespace, str(meta.get("name") or ""))
        kind, owner = _owner(wl)
        if kind == "RayJob" and owner in jobs:
            deadline = ((jobs[owner].get("spec") or {}).get("activeDeadlineSeconds")) or None
            if deadline:
                out[key] = Hold.for_deadline(float(deadline))
        elif kind == "RayCluster" and owner in clusters:
            # either mode acts no sooner than its idle period and its initial cooldown after the
            # admission (KEDA: the query reads a new cluster busy for the cooldown, then cooldownPeriod)
            policy = policy_of(clusters[owner])
            if policy is not None and policy.mechanism is StopMechanism.WORKLOAD:
                idle = policy.idle_minutes * 60
                cooldown = policy.initial_cooldown_minutes * 60
                out[key] = Hold.for_idle(max(idle, cooldown))
    return out


def _any_keda(rcs: list[dict[str, Any]]) -> bool:
    return any((p := policy_of(rc)) is not None and p.mode is IdleMode.KEDA for rc in rcs)


def estimate_for_workload(
    session: KubeSession, *, namespace: str, workload: str, now: datetime | None = None
) -> AdmissionEstimate | None:
    """The estimate of one Workload (``None`` once admitted or not found): the overview's three LISTs and
    the holders' (see :func:`estimates_for`).

    Example:
        >>> estimate_for_workload(session, namespace="default", workload="raycluster-ws-1a2b3") is None
        True
    """
    reads = read_queues(session, namespace=namespace)
    overview = overview_of(reads)
    key = (namespace, workload)
    if not any(w.namespace == namespace and w.name == workload for q in overview.queues for w in q.pending):
        return None
    return estimates_for(session, reads, overview, now=now).get(key)


def admission_eta(
    session: KubeSession, *, workload: str, namespace: str | None = None
) -> AdmissionEstimate | None:
    """The admission estimate of a pending Workload (:mod:`rayqueue_sdk.queues.eta`); ``None`` where the
    queues cannot be read at all (said in the log, never an error: the status stands without it).

    Example:
        >>> admission_eta(session, workload="raycluster-not-there") is None   # the queues say nothing of it
        True
    """
    namespace = namespace or session.namespace
    try:
        return estimate_for_workload(session, namespace=namespace, workload=workload)
    except RayQueueError as err:
        log.debug("no admission estimate for %s/%s: %s", namespace, workload, err)
        return None
