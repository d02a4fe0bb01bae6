"""The queue overview, pure: LocalQueues, ClusterQueues and Workloads (dicts, as read) in; per queue the quota
(nominal / used / borrowed per flavor and resource), fair sharing, admission checks and the pending workloads
in admission order out, with "who is ahead of me, and why".

No I/O: :func:`build_overview` takes what three LISTs returned
(:func:`rayqueue_sdk.queues.overview.queue_overview` makes them). The rules it applies are Kueue v0.19's:

- queue order in a ClusterQueue (``BestEffortFIFO`` and ``StrictFIFO`` alike): higher ``spec.priority``
  first, then the older queue-order timestamp (the ``creationTimestamp``, or the eviction time of a workload
  evicted for ``PodsReadyTimeout`` or by an admission check), as in Kueue's ``pkg/queue/cluster_queue.go``
  (``queueOrderingFunc``) and ``pkg/workload/workload.go`` (``Ordering.GetQueueOrderTimestamp``); Kueue
  breaks a last tie by UID, this by namespace and name. The visibility API reports the same order
  (``positionInClusterQueue``). Admission fair sharing, which reorders by LocalQueue usage, is not modelled;
- a workload is pending while it is active, not finished and holds no quota (condition ``QuotaReserved`` not
  ``True``); Kueue's reason and message are those of ``QuotaReserved`` (e.g. ``Pending`` / "couldn't assign
  flavors to pod set head: insufficient unused quota for cpu in flavor default-flavor, 2 more needed");
- usage is the ClusterQueue's ``status.flavorsReservation`` (the quota held, admission checks included),
  else ``status.flavorsUsage``, each ``{name, resources: [{name, total, borrowed}]}``;
- fair sharing: ``spec.fairSharing.weight`` (default 1) and ``status.fairSharing.weightedShare``;
  admission checks: ``spec.admissionChecksStrategy.admissionChecks[].name`` and, per Workload,
  ``status.admissionChecks[]`` ``{name, state, message, retryCount}`` (Kueue
  ``apis/kueue/v1beta2/clusterqueue_types.go``, ``workload_types.go``).

Example:
    >>> cq = {"metadata": {"name": "cq"}, "spec": {"resourceGroups": [{"coveredResources": ["cpu"],
    ...       "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": 4}]}]}]},
    ...       "status": {"flavorsReservation": [{"name": "f", "resources": [{"name": "cpu", "total": "4"}]}]}}
    >>> lq = {"metadata": {"name": "q", "namespace": "ds"}, "spec": {"clusterQueue": "cq"}}
    >>> def wl(name, prio, ts):
    ...     return {"metadata": {"name": name, "namespace": "ds", "creationTimestamp": ts},
    ...             "spec": {"queueName": "q", "priority": prio}}
    >>> ov = build_overview("ds", [lq], [cq], [wl("a", 100, "2026-01-01T00:00:02Z"),
    ...                                        wl("b", 1000, "2026-01-01T00:00:03Z")])
    >>> [p.name for p in ov.queue("q").pending]
    ['b', 'a']
    >>> ov.ahead_text(ov.queue("q").pending[1])
    '1 ahead: ds/b (priority 1000 > 100)'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from decimal import Decimal
from typing import Any

from rayqueue_sdk.admission.eta import AdmissionEstimate
from rayqueue_sdk.admission.records import record_dict
from rayqueue_sdk.errors import QueueNotFoundError
from rayqueue_sdk.manifests.labels import DEFAULT_QUEUE_ANNOTATION
from rayqueue_sdk.manifests.meta import condition_of, epoch_of, is_true, meta_of
from rayqueue_sdk.manifests.quantities import quantity_or_zero

__all__ = [
    "AdmissionCheckState",
    "Ahead",
    "ClusterQueueSummary",
    "QueueOverview",
    "QueueSummary",
    "ResourceQuota",
    "WorkloadEntry",
    "build_overview",
    "cluster_queue_summary",
    "format_amount",
    "queue_order_key",
    "workload_entry",
]

#: Evicted reasons after which Kueue queues a workload from its eviction time (``PodsReadyTimeout`` with the
#: default ``requeuingStrategy.timestamp: Eviction``, and ``AdmissionCheck``); any other eviction, preemption
#: included, keeps its creation time (Kueue ``pkg/workload/workload.go``: ``GetQueueOrderTimestamp``).
_REQUEUE_FROM_EVICTION = ("PodsReadyTimeout", "AdmissionCheck")

_GI = Decimal(2**30)
_MI = Decimal(2**20)


def format_amount(resource: str, amount: Decimal | None) -> str:
    """A short quantity: cores (``1500m`` below whole cores), bytes in ``Gi``/``Mi``, counts as numbers.

    Example:
        >>> format_amount("cpu", Decimal("1.5")), format_amount("memory", Decimal(16 * 2**30))
        ('1500m', '16Gi')
        >>> format_amount("nvidia.com/gpu", Decimal(2)), format_amount("cpu", None)
        ('2', '-')
    """
    if amount is None:
        return "-"
    if "memory" in resource or "storage" in resource:
        for unit, size in (("Gi", _GI), ("Mi", _MI)):
            if amount >= size and amount % size == 0:
                return f"{int(amount / size)}{unit}"
        if amount >= _GI:
            return f"{(amount / _GI).quantize(Decimal('0.1'))}Gi"
        if amount >= _MI:
            return f"{(amount / _MI).quantize(Decimal('0.1'))}Mi"
        return str(int(amount))
    if amount == amount.to_integral_value():
        return str(int(amount))
    if resource == "cpu":
        return f"{int(amount * 1000)}m"
    return str(amount.normalize())


def _optional_amount(value: Any) -> Decimal | None:
    return None if value is None else quantity_or_zero(value)


def _timestamp(text: Any) -> float:
    return epoch_of(text) or 0.0


@dataclass(frozen=True)
class ResourceQuota:
    """One resource of one flavor of a ClusterQueue: its quota and what is held.

    ``used`` is the quota held (``flavorsReservation``, else ``flavorsUsage``), ``borrowed`` the part of it
    above ``nominal`` taken from the cohort; ``borrowing_limit`` / ``lending_limit`` are ``None`` when the
    ClusterQueue sets none (borrowing then is limited only by what the cohort has free).

    Example:
        >>> r = ResourceQuota("f", "cpu", Decimal(4), Decimal(6), Decimal(2))
        >>> r.free, r.to_dict()["used"]
        (Decimal('0'), '6')
    """

    flavor: str
    resource: str
    nominal: Decimal
    used: Decimal = Decimal(0)
    borrowed: Decimal = Decimal(0)
    borrowing_limit: Decimal | None = None
    lending_limit: Decimal | None = None

    @property
    def free(self) -> Decimal:
        """Nominal quota not held (never negative)."""
        return max(Decimal(0), self.nominal - self.used)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict (amounts as short quantities)."""
        fmt = format_amount
        return {
            "flavor": self.flavor,
            "resource": self.resource,
            "nominal": fmt(self.resource, self.nominal),
            "used": fmt(self.resource, self.used),
            "borrowed": fmt(self.resource, self.borrowed),
            "borrowing_limit": None
            if self.borrowing_limit is None
            else fmt(self.resource, self.borrowing_limit),
            "lending_limit": None if self.lending_limit is None else fmt(self.resource, self.lending_limit),
        }


@dataclass(frozen=True)
class AdmissionCheckState:
    """One entry of a Workload's ``status.admissionChecks``: the check, its state and what it says.

    Example:
        >>> AdmissionCheckState("prov", "Pending", "waiting for capacity", 1).to_dict()["retry_count"]
        1
    """

    name: str
    state: str
    message: str = ""
    retry_count: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        return asdict(self)


@dataclass(frozen=True)
class WorkloadEntry:
    """A Workload in a queue, as the overview shows it.

    ``state`` is ``"pending"`` (waiting for quota), ``"reserved"`` (quota held, admission checks not all
    ready) or ``"admitted"``. ``owner_kind``/``owner_name`` name the RayCluster or RayJob that owns it;
    ``reason``/``message`` are Kueue's (``QuotaReserved`` while pending); ``position`` is its 0-based place
    among the pending workloads of its ClusterQueue that the reader can see; ``mine`` marks the reader's own;
    ``eta`` is its :class:`~rayqueue_sdk.admission.eta.AdmissionEstimate` while pending, when computed.

    Example:
        >>> w = workload_entry({"metadata": {"name": "raycluster-ws-1", "namespace": "ds",
        ...     "ownerReferences": [{"kind": "RayCluster", "name": "ws"}]}, "spec": {"queueName": "q"}})
        >>> w.owner, w.state
        ('RayCluster ds/ws', 'pending')
    """

    name: str
    namespace: str
    local_queue: str
    state: str
    priority: int = 0
    priority_class: str | None = None
    owner_kind: str | None = None
    owner_name: str | None = None
    created: str | None = None
    reason: str | None = None
    message: str | None = None
    cluster_queue: str | None = None
    position: int | None = None
    mine: bool = False
    admission_checks: tuple[AdmissionCheckState, ...] = ()
    order_time: float = 0.0
    eta: AdmissionEstimate | None = None

    @property
    def owner(self) -> str:
        """``"<Kind> <namespace>/<name>"`` of the owner, else the Workload's own ``namespace/name``."""
        if self.owner_kind and self.owner_name:
            return f"{self.owner_kind} {self.namespace}/{self.owner_name}"
        return f"{self.namespace}/{self.name}"

    @property
    def label(self) -> str:
        """``namespace/<owner name or workload name>``: how an explanation names it."""
        return f"{self.namespace}/{self.owner_name or self.name}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        return record_dict(
            self,
            drop=("order_time",),
            admission_checks=[c.to_dict() for c in self.admission_checks],
            eta=None if self.eta is None else self.eta.to_dict(),
        )


def workload_entry(
    obj: Mapping[str, Any], cluster_queue: str | None = None, *, mine: bool = False
) -> WorkloadEntry:
    """The :class:`WorkloadEntry` of a Workload dict (``v1beta2`` field names; pure).

    Example:
        >>> w = workload_entry({"metadata": {"name": "w", "namespace": "ds"}, "spec": {"queueName": "q"},
        ...     "status": {"conditions": [{"type": "QuotaReserved", "status": "False", "reason": "Pending",
        ...                                "message": "insufficient unused quota for cpu"}]}})
        >>> w.state, w.reason
        ('pending', 'Pending')
    """
    meta = meta_of(obj)
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    owner = next(
        (o for o in meta.get("ownerReferences") or [] if o.get("controller")),
        next(iter(meta.get("ownerReferences") or []), None),
    )
    reserved = is_true(condition_of(obj, "QuotaReserved")) and bool(status.get("admission"))
    admitted = is_true(condition_of(obj, "Admitted"))
    state = "admitted" if admitted else "reserved" if reserved else "pending"
    cond = condition_of(obj, "QuotaReserved" if state == "pending" else "Admitted")
    checks = tuple(
        AdmissionCheckState(
            str(c.get("name") or ""),
            str(c.get("state") or ""),
            str(c.get("message") or ""),
            None if c.get("retryCount") is None else int(c["retryCount"]),
        )
        for c in status.get("admissionChecks") or []
    )
    ref = spec.get("priorityClassRef") or {}
    order_time = _timestamp(meta.get("creationTimestamp"))
    evicted = condition_of(obj, "Evicted")
    if (
        evicted is not None
        and evicted.get("status") == "True"
        and evicted.get("reason") in _REQUEUE_FROM_EVICTION
    ):
        order_time = _timestamp(evicted.get("lastTransitionTime")) or order_time
    return WorkloadEntry(
        name=str(meta.get("name") or ""),
        namespace=str(meta.get("namespace") or ""),
        local_queue=str(spec.get("queueName") or ""),
        state=state,
        priority=int(spec.get("priority") or 0),
        priority_class=ref.get("name"),
        owner_kind=owner.get("kind") if owner else None,
        owner_name=owner.get("name") if owner else None,
        created=meta.get("creationTimestamp"),
        reason=(cond or {}).get("reason"),
        message=(cond or {}).get("message"),
        cluster_queue=(status.get("admission") or {}).get("clusterQueue") or cluster_queue,
        mine=mine,
        admission_checks=checks,
        order_time=order_time,
    )


def queue_order_key(w: WorkloadEntry) -> tuple[int, float, str, str]:
    """Kueue's queue order: higher priority first, then the older queue-order timestamp (then the name).

    Example:
        >>> a = WorkloadEntry("a", "ds", "q", "pending", priority=100, order_time=1.0)
        >>> b = WorkloadEntry("b", "ds", "q", "pending", priority=1000, order_time=2.0)
        >>> [w.name for w in sorted([a, b], key=queue_order_key)]
        ['b', 'a']
    """
    return (-w.priority, w.order_time, w.namespace, w.name)


@dataclass(frozen=True)
class ClusterQueueSummary:
    """A ClusterQueue as the overview shows it.

    ``resource_groups`` are ``(covered resources, flavors in order)``; ``quotas`` one
    :class:`ResourceQuota` per flavor and resource; ``fair_weight`` is ``spec.fairSharing.weight`` (``None``:
    not set, Kueue's default 1) and ``weighted_share`` ``status.fairSharing.weightedShare`` (``None`` when
    fair sharing is off); ``admission_checks`` the checks every Workload of the queue must pass;
    ``preemption_within`` is ``spec.preemption.withinClusterQueue`` (``None``: not set, Kueue's default
    ``Never``).

    Example:
        >>> cq = cluster_queue_summary({"metadata": {"name": "cq"}, "spec": {"cohortName": "ab",
        ...     "fairSharing": {"weight": "2"}}, "status": {"fairSharing": {"weightedShare": 250}}})
        >>> cq.cohort, cq.fair_weight, cq.weighted_share
        ('ab', '2', 250)
    """

    name: str
    cohort: str | None = None
    strategy: str = "BestEffortFIFO"
    resource_groups: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()
    quotas: tuple[ResourceQuota, ...] = ()
    fair_weight: str | None = None
    weighted_share: int | None = None
    admission_checks: tuple[str, ...] = ()
    pending: int = 0
    reserving: int = 0
    admitted: int = 0
    active: bool | None = None
    stop_policy: str | None = None
    preemption_within: str | None = None

    def quota(self, flavor: str, resource: str) -> ResourceQuota | None:
        """The quota of ``resource`` in ``flavor``; ``None`` when the queue has none."""
        for q in self.quotas:
            if q.flavor == flavor and q.resource == resource:
                return q
        return None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        return {
            "name": self.name,
            "cohort": self.cohort,
            "strategy": self.strategy,
            "resource_groups": [{"covered": list(c), "flavors": list(f)} for c, f in self.resource_groups],
            "quotas": [q.to_dict() for q in self.quotas],
            "fair_sharing": {"weight": self.fair_weight, "weighted_share": self.weighted_share},
            "admission_checks": list(self.admission_checks),
            "pending": self.pending,
            "reserving": self.reserving,
            "admitted": self.admitted,
            "active": self.active,
            "stop_policy": self.stop_policy,
            "preemption_within": self.preemption_within,
        }


def cluster_queue_summary(obj: Mapping[str, Any]) -> ClusterQueueSummary:
    """The :class:`ClusterQueueSummary` of a ClusterQueue dict in ``v1beta2`` names (the kube layer's
    :func:`~rayqueue_sdk.kube.normalize.normalize_kueue` renames what it reads at ``v1beta1``).

    Example:
        >>> cq = cluster_queue_summary({"metadata": {"name": "cq"}, "spec": {"resourceGroups": [
        ...     {"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [
        ...         {"name": "cpu", "nominalQuota": "6", "borrowingLimit": "2"}]}]}]},
        ...     "status": {"flavorsUsage": [{"name": "f", "resources": [
        ...         {"name": "cpu", "total": "7", "borrowed": "1"}]}]}})
        >>> q = cq.quota("f", "cpu"); q.nominal, q.used, q.borrowed, q.borrowing_limit
        (Decimal('6'), Decimal('7'), Decimal('1'), Decimal('2'))
    """
    meta = meta_of(obj)
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    held: dict[tuple[str, str], tuple[Decimal, Decimal]] = {}
    usage = status.get("flavorsReservation") or status.get("flavorsUsage") or []
    for flavor in usage:
        for res in flavor.get("resources") or []:
            held[(str(flavor.get("name")), str(res.get("name")))] = (
                quantity_or_zero(res.get("total")),
                quantity_or_zero(res.get("borrowed")),
            )
    groups = []
    quotas = []
    for group in spec.get("resourceGroups") or []:
        flavors = tuple(str(f.get("name")) for f in group.get("flavors") or [])
        groups.append((tuple(str(r) for r in group.get("coveredResources") or []), flavors))
        for flavor in group.get("flavors") or []:
            for res in flavor.get("resources") or []:
                key = (str(flavor.get("name")), str(res.get("name")))
                used, borrowed = held.get(key, (Decimal(0), Decimal(0)))
                quotas.append(
                    ResourceQuota(
                        key[0],
                        key[1],
                        quantity_or_zero(res.get("nominalQuota")),
                        used,
                        borrowed,
                        _optional_amount(res.get("borrowingLimit")),
                        _optional_amount(res.get("lendingLimit")),
                    )
                )
    strategy = spec.get("admissionChecksStrategy") or {}
    checks = [str(c.get("name")) for c in strategy.get("admissionChecks") or [] if c.get("name")]
    weight = (spec.get("fairSharing") or {}).get("weight")
    share = (status.get("fairSharing") or {}).get("weightedShare")
    active_cond = condition_of(obj, "Active")
    return ClusterQueueSummary(
        name=str(meta.get("name") or ""),
        cohort=spec.get("cohortName"),
        strategy=str(spec.get("queueingStrategy") or "BestEffortFIFO"),
        resource_groups=tuple(groups),
        quotas=tuple(quotas),
        fair_weight=None if weight is None else str(weight),
        weighted_share=None if share is None else int(share),
        admission_checks=tuple(checks),
        pending=int(status.get("pendingWorkloads") or 0),
        reserving=int(status.get("reservingWorkloads") or 0),
        admitted=int(status.get("admittedWorkloads") or 0),
        active=None if active_cond is None else active_cond.get("status") == "True",
        stop_policy=spec.get("stopPolicy"),
        preemption_within=(spec.get("preemption") or {}).get("withinClusterQueue"),
    )


@dataclass(frozen=True)
class Ahead:
    """A workload ahead of another in its ClusterQueue, and why: ``"priority 1000 > 100"`` or
    ``"earlier, same priority"``.

    Example:
        >>> w = WorkloadEntry("w", "team-b", "q", "pending", priority=1000, owner_name="train")
        >>> Ahead(w, "priority 1000 > 100").text
        'team-b/train (priority 1000 > 100)'
    """

    workload: WorkloadEntry
    why: str

    @property
    def text(self) -> str:
        """``namespace/name (why)``."""
        return f"{self.workload.label} ({self.why})"


@dataclass(frozen=True)
class QueueSummary:
    """A LocalQueue of the reader's namespace with its ClusterQueue and its workloads.

    ``cluster_queue`` is the ClusterQueue's :class:`ClusterQueueSummary` (``None`` when it cannot be read);
    ``pending`` are the pending workloads of that ClusterQueue the reader can see, in admission order (the
    queue's own and those of other LocalQueues feeding the same ClusterQueue); ``holding`` the admitted or
    quota-reserving ones.

    Example:
        >>> QueueSummary("q", "ds", "cq").to_dict()["cluster_queue_name"]
        'cq'
    """

    name: str
    namespace: str
    cluster_queue_name: str | None
    default: bool = False
    cluster_queue: ClusterQueueSummary | None = None
    pending: tuple[WorkloadEntry, ...] = ()
    holding: tuple[WorkloadEntry, ...] = ()
    pending_count: int = 0
    admitted_count: int = 0

    @property
    def hidden_pending(self) -> int:
        """Pending workloads the ClusterQueue counts that the reader cannot see (other namespaces)."""
        if self.cluster_queue is None:
            return 0
        return max(0, self.cluster_queue.pending - len(self.pending))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        return record_dict(
            self,
            cluster_queue=None if self.cluster_queue is None else self.cluster_queue.to_dict(),
            pending=[w.to_dict() for w in self.pending],
            holding=[w.to_dict() for w in self.holding],
            hidden_pending=self.hidden_pending,
        )


@dataclass(frozen=True)
class QueueOverview:
    """Every LocalQueue of a namespace with its ClusterQueue's quota and pending workloads.

    ``cluster_queues`` are all the ClusterQueues the reader may read (for cohorts and borrowing;
    ``cluster_queues_readable`` is ``False`` when they could not be listed); ``notes`` say what could not be
    read (e.g. ClusterQueues forbidden: no quotas shown).

    Example:
        >>> ov = build_overview("ds", [{"metadata": {"name": "q", "namespace": "ds"},
        ...                             "spec": {"clusterQueue": "cq"}}], [], [])
        >>> [q.name for q in ov.queues], ov.queue("q").cluster_queue is None
        (['q'], True)
    """

    namespace: str
    queues: tuple[QueueSummary, ...] = ()
    cluster_queues: tuple[ClusterQueueSummary, ...] = ()
    notes: tuple[str, ...] = field(default=())
    cluster_queues_readable: bool = True

    def queue(self, name: str) -> QueueSummary:
        """The LocalQueue ``name``; a :class:`~rayqueue_sdk.errors.QueueNotFoundError` listing the others.

        Example:
            >>> QueueOverview("ds").queue("gpu")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            rayqueue_sdk.errors.QueueNotFoundError: 404 NotFound: LocalQueue 'gpu' does not exist in ...
        """
        for q in self.queues:
            if q.name == name:
                return q
        raise QueueNotFoundError(name, [q.name for q in self.queues], namespace=self.namespace)

    def cluster_queue(self, name: str | None) -> ClusterQueueSummary | None:
        """The ClusterQueue ``name`` when the reader could read it."""
        return next((c for c in self.cluster_queues if c.name == name), None)

    def cohort_members(self, cq: ClusterQueueSummary) -> list[ClusterQueueSummary]:
        """The ClusterQueues of ``cq``'s cohort (``cq`` included; just ``cq`` when it has no cohort)."""
        if not cq.cohort:
            return [cq]
        return [c for c in self.cluster_queues if c.cohort == cq.cohort]

    def cohort_text(self, cq: ClusterQueueSummary) -> str | None:
        """Who else in ``cq``'s cohort is borrowing (holding quota beyond its own nominal): the quota a
        pending workload may be waiting for; ``None`` when no other member borrows.

        Example:
            >>> a = ClusterQueueSummary("a", cohort="ab")
            >>> b = ClusterQueueSummary("b", cohort="ab", quotas=(
            ...     ResourceQuota("f", "cpu", Decimal(0), Decimal(4), Decimal(4)),))
            >>> QueueOverview("ds", cluster_queues=(a, b)).cohort_text(a)
            'cohort ab: b borrows cpu 4 (flavor f)'
        """
        parts = [
            f"{m.name} borrows {r.resource} {format_amount(r.resource, r.borrowed)} (flavor {r.flavor})"
            for m in self.cohort_members(cq)
            if m.name != cq.name
            for r in m.quotas
            if r.borrowed > 0
        ]
        return f"cohort {cq.cohort}: {'; '.join(parts)}" if parts else None

    def mine(self) -> list[WorkloadEntry]:
        """The reader's own pending workloads, in admission order per queue."""
        seen: dict[str, WorkloadEntry] = {}
        for q in self.queues:
            for w in q.pending:
                if w.mine:
                    seen.setdefault(f"{w.namespace}/{w.name}", w)
        return list(seen.values())

    def ahead_of(self, workload: WorkloadEntry) -> list[Ahead]:
        """The pending workloads ahead of ``workload`` in its ClusterQueue (those the reader can see), each
        with why: a higher priority, or the same priority and queued earlier.

        Example:
            >>> ov = build_overview("ds", [], [], [])
            >>> ov.ahead_of(WorkloadEntry("w", "ds", "q", "pending"))
            []
        """
        for q in self.queues:
            names = [(w.namespace, w.name) for w in q.pending]
            if (workload.namespace, workload.name) not in names:
                continue
            out = []
            for other in q.pending[: names.index((workload.namespace, workload.name))]:
                if other.priority > workload.priority:
                    why = f"priority {other.priority} > {workload.priority}"
                else:
                    why = "earlier, same priority" if other.priority == workload.priority else "earlier"
                out.append(Ahead(other, why))
            return out
        return []

    def ahead_text(self, workload: WorkloadEntry, *, limit: int = 3) -> str:
        """ "Who is ahead of me, and why" in one line, e.g. ``"2 ahead: team-b/train (priority 1000 > 100),
        ds/big (earlier, same priority)"``; the first ``limit`` named, then how many more.

        Example:
            >>> build_overview("ds", [], [], []).ahead_text(WorkloadEntry("w", "ds", "q", "pending"))
            'next in line'
        """
        ahead = self.ahead_of(workload)
        hidden = next((q.hidden_pending for q in self.queues if workload in q.pending), 0)
        if not ahead:
            text = "next in line"
        else:
            named = ", ".join(a.text for a in ahead[:limit])
            more = f", and {len(ahead) - limit} more" if len(ahead) > limit else ""
            text = f"{len(ahead)} ahead: {named}{more}"
        if hidden:
            text += f" ({hidden} more pending in the ClusterQueue from namespaces you cannot read)"
        return text

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict: the queues, the readable ClusterQueues and the notes."""
        return {
            "namespace": self.namespace,
            "queues": [q.to_dict() for q in self.queues],
            "cluster_queues": [c.to_dict() for c in self.cluster_queues],
            "notes": list(self.notes),
            "cluster_queues_readable": self.cluster_queues_readable,
        }


def build_overview(
    namespace: str,
    local_queues: Iterable[Mapping[str, Any]],
    cluster_queues: Iterable[Mapping[str, Any]],
    workloads: Iterable[Mapping[str, Any]],
    *,
    mine: Callable[[WorkloadEntry], bool] | None = None,
    notes: Sequence[str] = (),
    other_local_queues: Iterable[Mapping[str, Any]] = (),
    cluster_queues_readable: bool = True,
) -> QueueOverview:
    """The :class:`QueueOverview` of ``namespace`` from the objects read (pure; see the module docstring).

    ``workloads`` may span namespaces (an admin's view); a Workload is placed in the ClusterQueue of its
    LocalQueue (known from ``local_queues`` and ``other_local_queues``) or of its admission. ``mine``
    decides which workloads are the reader's (default: those of ``namespace``).

    Example:
        >>> build_overview("ds", [], [], []).queues
        ()
    """
    lqs = [dict(o) for o in local_queues]
    cq_of: dict[tuple[str, str], str] = {}
    for lq in [*lqs, *other_local_queues]:
        meta = meta_of(lq)
        cq_of[(str(meta.get("namespace") or ""), str(meta.get("name") or ""))] = str(
            (lq.get("spec") or {}).get("clusterQueue") or ""
        )
    is_mine = mine or (lambda w: w.namespace == namespace)
    pending: dict[str, list[WorkloadEntry]] = {}
    holding: dict[str, list[WorkloadEntry]] = {}
    for obj in workloads:
        meta = meta_of(obj)
        spec = obj.get("spec") or {}
        if (
            meta.get("deletionTimestamp")
            or is_true(condition_of(obj, "Finished"))
            or spec.get("active") is False
        ):
            continue
        entry = workload_entry(obj, cq_of.get((str(meta.get("namespace") or ""), str(spec.get("queueName")))))
        cq = entry.cluster_queue
        if not cq:
            continue
        entry = replace(entry, mine=bool(is_mine(entry)))
        target = pending if entry.state == "pending" else holding
        target.setdefault(cq, []).append(entry)
    ordered: dict[str, tuple[WorkloadEntry, ...]] = {}
    for cq_name, entries in pending.items():
        entries.sort(key=queue_order_key)
        ordered[cq_name] = tuple(replace(w, position=i) for i, w in enumerate(entries))
    cqs = tuple(sorted((cluster_queue_summary(o) for o in cluster_queues), key=lambda c: c.name))
    by_name = {c.name: c for c in cqs}
    queues = []
    for lq in lqs:
        meta = meta_of(lq)
        status = lq.get("status") or {}
        target_cq = (lq.get("spec") or {}).get("clusterQueue")
        annotations = meta.get("annotations") or {}
        queues.append(
            QueueSummary(
                name=str(meta.get("name") or ""),
                namespace=str(meta.get("namespace") or namespace),
                cluster_queue_name=target_cq,
                default=meta.get("name") == "default"
                or str(annotations.get(DEFAULT_QUEUE_ANNOTATION)).lower() == "true",
                cluster_queue=by_name.get(str(target_cq)),
                pending=ordered.get(str(target_cq), ()),
                holding=tuple(sorted(holding.get(str(target_cq), ()), key=queue_order_key)),
                pending_count=int(status.get("pendingWorkloads") or 0),
                admitted_count=int(status.get("admittedWorkloads") or 0),
            )
        )
    queues.sort(key=lambda q: (not q.default, q.name))
    return QueueOverview(namespace, tuple(queues), cqs, tuple(notes), cluster_queues_readable)
