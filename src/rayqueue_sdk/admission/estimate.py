"""When will it be admitted? An estimate from the queue and the release times of what holds the quota, pure.

No I/O: :func:`estimate_admissions` takes the :class:`~rayqueue_sdk.admission.overview.QueueOverview` (Kueue's
queue order and the ClusterQueues' quotas and usage), what each pending workload asks for, and one
:class:`Release` per workload that holds quota, saying when it gives its quota back:

- an idle policy releases at the end of its idle period (its clock from the reaper's state annotation or
  KEDA's ``lastActiveTime``): ``earliest = latest = idleSince + idle period`` (plus one polling interval
  for ``latest``) *if it stays idle*; a cluster that is busy now releases no sooner than one whole idle
  period from now, and nothing bounds when (:func:`idle_release`);
- a RayJob with ``activeDeadlineSeconds`` ends by its start plus the deadline; it may end any time before
  (:func:`deadline_release`);
- a finished workload that still exists releases now (:func:`finished_release`);
- anything else: nothing bounds its release (:func:`unbounded_release`); the estimate then has no
  ``latest`` and says so.

The simulation replays Kueue's own rules on copies of the ClusterQueue summaries, reusing
:func:`~rayqueue_sdk.admission.fit.fit_requests` (cohort borrowing and lending limits included): releases in
time order, after each the pending workloads in queue order are admitted where they fit (``BestEffortFIFO``:
any that fits; ``StrictFIFO``: the head blocks the rest). It runs twice: every release at its ``earliest``
(the soonest the workload can start) and at its ``latest`` (``None``: never; then the estimate has no
``latest``). A ClusterQueue that preempts lower priorities (``withinClusterQueue``) lets a workload count
their quota as free. What the reader cannot see (ClusterQueues forbidden, other namespaces' workloads) is
named in ``basis``, not guessed.

Example:
    >>> from datetime import datetime, timedelta, timezone
    >>> from decimal import Decimal
    >>> from rayqueue_sdk.admission.overview import build_overview
    >>> t0 = datetime(2026, 1, 1, 14, 0, tzinfo=timezone.utc)
    >>> cq = {"metadata": {"name": "cq-team-a"}, "spec": {"resourceGroups": [{"coveredResources":
    ...       ["nvidia.com/gpu"], "flavors": [{"name": "gpu", "resources": [{"name": "nvidia.com/gpu",
    ...       "nominalQuota": 2}]}]}]}, "status": {"flavorsUsage": [{"name": "gpu", "resources": [
    ...       {"name": "nvidia.com/gpu", "total": "2"}]}]}}
    >>> lq = {"metadata": {"name": "q", "namespace": "ds"}, "spec": {"clusterQueue": "cq-team-a"}}
    >>> wl = {"metadata": {"name": "wl-b", "namespace": "ds", "creationTimestamp": "2026-01-01T13:59:00Z",
    ...       "ownerReferences": [{"kind": "RayCluster", "name": "second"}]}, "spec": {"queueName": "q"}}
    >>> held = {"metadata": {"name": "wl-a", "namespace": "ds"}, "spec": {"queueName": "q"}, "status": {
    ...     "admission": {"clusterQueue": "cq-team-a"}, "conditions": [{"type": "QuotaReserved",
    ...     "status": "True"}, {"type": "Admitted", "status": "True"}]}}
    >>> ov = build_overview("ds", [lq], [cq], [wl, held])
    >>> idle = idle_release("ds", "wl-a", "ds/first-raycluster", {("gpu", "nvidia.com/gpu"): Decimal(2)},
    ...                     idle_since=t0 - timedelta(minutes=3), idle_seconds=300, now=t0)
    >>> eta = estimate_admissions(ov, {("ds", "wl-b"): {"nvidia.com/gpu": Decimal(2)}}, [idle], now=t0)
    >>> e = eta[("ds", "wl-b")]
    >>> e.earliest.strftime("%H:%M"), e.latest.strftime("%H:%M:%S")
    ('14:02', '14:02:30')
    >>> print(e.basis)  # doctest: +NORMALIZE_WHITESPACE
    ds/first-raycluster's idle policy releases 2 nvidia.com/gpu at 14:02 UTC if it stays idle; you are next
    in cq-team-a; it can move if ds/first-raycluster becomes busy again or a higher-priority workload arrives
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from rayqueue_sdk.admission.eta import AdmissionEstimate
from rayqueue_sdk.admission.fit import fit_requests, pod_requests
from rayqueue_sdk.admission.overview import (
    ClusterQueueSummary,
    QueueOverview,
    WorkloadEntry,
    format_amount,
)
from rayqueue_sdk.manifests.quantities import quantity_or_zero

__all__ = [
    "Key",
    "Usage",
    "CLUSTERQUEUE_PERMISSION",
    "DEFAULT_SLACK_SECONDS",
    "AdmissionEstimate",
    "Hold",
    "Release",
    "admitted_usage",
    "deadline_release",
    "estimate_admissions",
    "finished_release",
    "idle_release",
    "unbounded_release",
    "workload_object_requests",
]

#: The permission that shows quotas to a namespace-limited user (Kueue ships it as the ClusterRole
#: ``kueue-clusterqueue-viewer-role``).
CLUSTERQUEUE_PERMISSION = "list/get on clusterqueues.kueue.x-k8s.io (Kueue's kueue-clusterqueue-viewer-role)"

#: What ``latest`` adds to a release time: the controller's polling interval and Kueue's next cycle.
DEFAULT_SLACK_SECONDS = 30.0

#: A (flavor, resource) pair: where quota is counted.
Key = tuple[str, str]
#: Quantities by (flavor, resource).
Usage = Mapping[tuple[str, str], Decimal]
_ZERO = Decimal(0)


@dataclass(frozen=True)
class Release:
    """When one workload that holds quota gives it back.

    ``usage`` is what it holds per ``(flavor, resource)``; ``earliest``/``latest`` bound the release
    (``latest=None``: nothing bounds it; ``earliest=None``: not foreseeable); ``why`` says it for ``basis``
    and ``moves`` what could make it later (e.g. "becomes busy again"; empty: nothing).

    Example:
        >>> from datetime import datetime, timezone
        >>> now = datetime(2026, 1, 1, tzinfo=timezone.utc)
        >>> finished_release("ds", "w", "ds/done", {}, now=now).why
        'ds/done has finished and releases its quota now'
    """

    namespace: str
    name: str
    label: str
    usage: Usage
    earliest: datetime | None
    latest: datetime | None
    why: str
    moves: str = ""


def _slack(seconds: float) -> timedelta:
    return timedelta(seconds=seconds)


def _hhmm(t: datetime) -> str:
    return t.strftime("%H:%M UTC" if t.second == 0 else "%H:%M:%S UTC")


def _what(usage: Usage) -> str:
    parts = [f"{format_amount(r, a)} {r}" for (_f, r), a in sorted(usage.items()) if a > 0 and r != "pods"]
    gpu = [p for p in parts if "gpu" in p]
    return ", ".join(gpu or parts[:2]) or "its quota"


def idle_release(
    namespace: str,
    name: str,
    label: str,
    usage: Usage,
    *,
    idle_since: datetime | None,
    idle_seconds: float,
    now: datetime,
    cooldown_until: datetime | None = None,
    slack_seconds: float = DEFAULT_SLACK_SECONDS,
) -> Release:
    """The release of a cluster with an idle policy: at the end of its idle period if it stays idle
    (``idle_since`` from its state); busy now (``idle_since=None``): no sooner than a whole period from
    now, and nothing bounds when.

    Example:
        >>> from datetime import datetime, timezone
        >>> now = datetime(2026, 1, 1, 14, 0, tzinfo=timezone.utc)
        >>> r = idle_release("ds", "w", "ds/ws", {}, idle_since=None, idle_seconds=600, now=now)
        >>> r.earliest.strftime("%H:%M"), r.latest
        ('14:10', None)
    """
    period = timedelta(seconds=idle_seconds)
    if idle_since is None:
        at = max(now + period, cooldown_until or now)
        why = (
            f"{label} is busy; its idle policy releases {_what(usage)} no sooner than {_hhmm(at)} "
            f"and nothing bounds when"
        )
        return Release(namespace, name, label, usage, at, None, why, f"{label} stays busy")
    at = max(idle_since + period, cooldown_until or now, now)
    why = f"{label}'s idle policy releases {_what(usage)} at {_hhmm(at)} if it stays idle"
    return Release(
        namespace, name, label, usage, at, at + _slack(slack_seconds), why, f"{label} becomes busy again"
    )


def deadline_release(
    namespace: str,
    name: str,
    label: str,
    usage: Usage,
    *,
    started: datetime | None,
    deadline_seconds: float,
    now: datetime,
    slack_seconds: float = DEFAULT_SLACK_SECONDS,
) -> Release:
    """The release of a RayJob's cluster with ``activeDeadlineSeconds``: it may end any time, and ends by
    its start plus the deadline (not started: from now).

    Example:
        >>> from datetime import datetime, timezone
        >>> now = datetime(2026, 1, 1, 14, 0, tzinfo=timezone.utc)
        >>> r = deadline_release("ds", "w", "ds/job", {}, started=now, deadline_seconds=600, now=now)
        >>> r.earliest == now, r.latest.strftime("%H:%M:%S")
        (True, '14:10:30')
    """
    end = max((started or now) + timedelta(seconds=deadline_seconds), now)
    why = (
        f"{label}'s deadline (activeDeadlineSeconds {deadline_seconds:g}) releases {_what(usage)} "
        f"by {_hhmm(end)}"
    )
    return Release(namespace, name, label, usage, now, end + _slack(slack_seconds), why)


def finished_release(
    namespace: str,
    name: str,
    label: str,
    usage: Usage,
    *,
    now: datetime,
    slack_seconds: float = DEFAULT_SLACK_SECONDS,
) -> Release:
    """The release of a finished workload that still exists: now.

    Example:
        >>> from datetime import datetime, timezone
        >>> now = datetime(2026, 1, 1, tzinfo=timezone.utc)
        >>> finished_release("ds", "w", "ds/done", {}, now=now).earliest == now
        True
    """
    why = f"{label} has finished and releases its quota now"
    return Release(namespace, name, label, usage, now, now + _slack(slack_seconds), why)


def unbounded_release(namespace: str, name: str, label: str, usage: Usage) -> Release:
    """A holder whose release nothing bounds (no idle policy, no deadline): never in either scenario.

    Example:
        >>> unbounded_release("ds", "w", "ds/ws", {}).why
        'nothing bounds when ds/ws releases its quota (no idle policy or deadline)'
    """
    why = f"nothing bounds when {label} releases its quota (no idle policy or deadline)"
    return Release(namespace, name, label, usage, None, None, why)


def admitted_usage(workload: Mapping[str, Any]) -> dict[tuple[str, str], Decimal]:
    """What an admitted Workload holds per ``(flavor, resource)``, from ``status.admission``.

    Example:
        >>> admitted_usage({"status": {"admission": {"podSetAssignments": [{"name": "head",
        ...     "flavors": {"cpu": "f"}, "resourceUsage": {"cpu": "2"}, "count": 1}]}}})
        {('f', 'cpu'): Decimal('2')}
    """
    out: dict[tuple[str, str], Decimal] = {}
    admission = (workload.get("status") or {}).get("admission") or {}
    for psa in admission.get("podSetAssignments") or []:
        flavors = psa.get("flavors") or {}
        for resource, amount in (psa.get("resourceUsage") or {}).items():
            flavor = flavors.get(resource)
            if flavor is None:
                continue
            key = (str(flavor), str(resource))
            out[key] = out.get(key, _ZERO) + quantity_or_zero(amount)
    return out


def workload_object_requests(workload: Mapping[str, Any]) -> dict[str, Decimal]:
    """What a Workload asks for: its pod sets' requests times their counts, plus ``pods``.

    Example:
        >>> pod = {"spec": {"containers": [{"resources": {"requests": {"nvidia.com/gpu": 1}}}]}}
        >>> workload_object_requests({"spec": {"podSets": [{"name": "head", "count": 1, "template": pod},
        ...                                                {"name": "w", "count": 2, "template": pod}]}})
        {'nvidia.com/gpu': Decimal('3'), 'pods': Decimal('3')}
    """
    total: dict[str, Decimal] = {}
    pods = 0
    for ps in (workload.get("spec") or {}).get("podSets") or []:
        count = int(ps.get("count") or 0)
        pods += count
        for resource, amount in pod_requests((ps.get("template") or {}).get("spec") or {}).items():
            total[resource] = total.get(resource, _ZERO) + amount * count
    total["pods"] = Decimal(pods)
    return {k: v for k, v in sorted(total.items()) if v > 0}


# -- the simulation ---------------------------------------------------------------------------------------


class _Queues:
    """Mutable copies of the ClusterQueue summaries: take and give usage, ask whether requests fit."""

    def __init__(self, overview: QueueOverview) -> None:
        self.overview = overview
        self.cqs: dict[str, ClusterQueueSummary] = {c.name: c for c in overview.cluster_queues}
        self.version = 0
        self._fits: dict[
            tuple[str, int, tuple[tuple[str, Decimal], ...]], tuple[bool, Mapping[str, str]]
        ] = {}

    def members(self, cq: ClusterQueueSummary) -> list[ClusterQueueSummary]:
        if not cq.cohort:
            return [cq]
        return [c for c in self.cqs.values() if c.cohort == cq.cohort]

    def change(self, cq_name: str, usage: Usage, sign: int) -> None:
        cq = self.cqs.get(cq_name)
        if cq is None or not usage:
            return
        quotas = tuple(
            dataclasses.replace(q, used=max(_ZERO, q.used + sign * usage.get((q.flavor, q.resource), _ZERO)))
            for q in cq.quotas
        )
        self.cqs[cq_name] = dataclasses.replace(cq, quotas=quotas)
        self.version += 1

    def fit(self, cq_name: str, requests: Mapping[str, Decimal]) -> tuple[bool, Mapping[str, str]]:
        """Whether ``requests`` fit now, and the flavor per resource (memoised per state: equal shapes
        ask once)."""
        key = (cq_name, self.version, tuple(sorted(requests.items())))
        hit = self._fits.get(key)
        if hit is None:
            cq = self.cqs[cq_name]
            answer = fit_requests(requests, cq, self.members(cq))
            hit = (answer.fits is True, dict(answer.flavors))
            self._fits[key] = hit
        return hit


def _usage_of(requests: Mapping[str, Decimal], flavors: Mapping[str, str]) -> dict[tuple[str, str], Decimal]:
    return {(flavors[r], r): a for r, a in requests.items() if r in flavors}


def _simulate(
    overview: QueueOverview,
    pending: Mapping[str, Sequence[WorkloadEntry]],
    requests: Mapping[Key, Mapping[str, Decimal]],
    releases: Sequence[tuple[Release, str]],
    now: datetime,
    holds: Mapping[Key, Hold] | None = None,
    late: bool = False,
) -> dict[Key, tuple[datetime, Release | None]]:
    """Admission time (and the release that made room) of each pending workload, each release (with the
    ClusterQueue it frees quota in) happening at its earliest (``late``: its latest) time, if bounded; a
    workload admitted on the way releases in turn where its ``holds`` entry bounds it, at the same end;
    workloads never admitted are absent."""
    queues = _Queues(overview)
    waiting = {cq: list(ws) for cq, ws in pending.items() if cq in queues.cqs}
    admitted: dict[Key, tuple[datetime, Release | None]] = {}
    events: list[tuple[datetime, int, Release, str]] = []
    for rel, cq in releases:
        at = rel.latest if late else rel.earliest
        if at is not None:
            events.append((at, len(events), rel, cq))
    heapq.heapify(events)
    counter = len(events)

    def admit(at: datetime, because: Release | None) -> None:
        nonlocal counter
        progress = True
        while progress:
            progress = False
            for cq_name, ws in waiting.items():
                strict = queues.cqs[cq_name].strategy == "StrictFIFO"
                for w in list(ws):
                    key = (w.namespace, w.name)
                    req = requests.get(key)
                    if req is None:  # unknown shape: it blocks nothing, admits nothing
                        ws.remove(w)
                        continue
                    fits, flavors = queues.fit(cq_name, req)
                    if fits:
                        used = _usage_of(req, flavors)
                        queues.change(cq_name, used, +1)
                        admitted[key] = (at, because)
                        ws.remove(w)
                        progress = True
                        hold = (holds or {}).get(key)
                        offset = None if hold is None else (hold.latest if late else hold.earliest)
                        if hold is not None and offset is not None:
                            end = at + timedelta(seconds=offset)
                            rel = Release(
                                w.namespace,
                                w.name,
                                w.label,
                                used,
                                end,
                                end,
                                hold.why.format(label=w.label, at=_hhmm(end)),
                                hold.moves.format(label=w.label),
                            )
                            counter += 1
                            heapq.heappush(events, (end, counter, rel, cq_name))
                    elif strict:
                        break

    admit(now, None)
    while events and any(waiting.values()):
        at, _, rel, cq_name = heapq.heappop(events)
        queues.change(cq_name, rel.usage, -1)
        admit(max(at, now), rel)
    return admitted


@dataclass(frozen=True)
class Hold:
    """How long a *pending* workload will hold its quota once admitted, in seconds from its admission
    (``None``: nothing bounds it): a cluster with an idle policy releases no sooner than its idle period
    (``earliest``) and nothing bounds when (it may be used); a RayJob with a deadline may end at once and
    ends by its deadline. ``why``/``moves`` are templates with ``{label}`` and ``{at}``.

    Example:
        >>> Hold.for_idle(600).earliest, Hold.for_deadline(900).latest
        (600.0, 930.0)
    """

    earliest: float | None
    latest: float | None
    why: str
    moves: str = ""

    @classmethod
    def for_idle(cls, idle_seconds: float) -> Hold:
        """A cluster with an idle policy of ``idle_seconds`` (its initial cooldown included)."""
        return cls(
            float(idle_seconds),
            None,
            "{label}, once admitted, releases its quota at {at} at the earliest (its idle policy)",
            "{label} is used once admitted",
        )

    @classmethod
    def for_deadline(cls, deadline_seconds: float, slack_seconds: float = DEFAULT_SLACK_SECONDS) -> Hold:
        """A RayJob with ``activeDeadlineSeconds``."""
        return cls(
            0.0,
            float(deadline_seconds) + slack_seconds,
            "{label}, once admitted, ends by its deadline ({at})",
        )


def _preemptible(cq: ClusterQueueSummary, target: WorkloadEntry, holder: WorkloadEntry) -> bool:
    policy = cq.preemption_within
    if policy in ("LowerPriority", "LowerOrNewerEqualPriority") and holder.priority < target.priority:
        return True
    return policy == "LowerOrNewerEqualPriority" and (
        holder.priority == target.priority and holder.order_time > target.order_time
    )


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def estimate_admissions(
    overview: QueueOverview,
    requests: Mapping[Key, Mapping[str, Decimal]],
    releases: Iterable[Release],
    *,
    now: datetime,
    hidden: Sequence[str] = (),
    holds: Mapping[Key, Hold] | None = None,
) -> dict[Key, AdmissionEstimate]:
    """An :class:`AdmissionEstimate` for every pending workload of ``overview`` (keyed ``(namespace,
    name)``), from what each asks (``requests``; see :func:`workload_object_requests`) and when each holder
    releases (``releases``). ``hidden`` names what the reader could not read (said in every basis);
    ``holds`` how long pending workloads will hold their quota once admitted (:class:`Hold`), so that a
    workload further back can count on their release too.
    Workloads that are not pending get no entry: an admitted one has no estimate.

    Example:
        >>> from datetime import datetime, timezone
        >>> from rayqueue_sdk.admission.overview import build_overview
        >>> lq = {"metadata": {"name": "q", "namespace": "ds"}, "spec": {"clusterQueue": "cq"}}
        >>> wl = {"metadata": {"name": "w", "namespace": "ds"}, "spec": {"queueName": "q"}}
        >>> ov = build_overview("ds", [lq], [], [wl], cluster_queues_readable=False)
        >>> e = estimate_admissions(ov, {}, [], now=datetime(2026, 1, 1, tzinfo=timezone.utc))
        >>> e[("ds", "w")].earliest is None and "cannot be read" in e[("ds", "w")].basis
        True
    """
    rels = list(releases)
    holders: dict[Key, tuple[WorkloadEntry, str]] = {}
    pending: dict[str, list[WorkloadEntry]] = {}
    seen: set[Key] = set()
    for q in overview.queues:
        cq_name = q.cluster_queue_name or ""
        for h in q.holding:
            holders[(h.namespace, h.name)] = (h, h.cluster_queue or cq_name)
        if (q.cluster_queue_name or "") in pending:
            continue
        pending[cq_name] = []
        for w in q.pending:
            if (w.namespace, w.name) not in seen:
                seen.add((w.namespace, w.name))
                pending[cq_name].append(w)
    cq_of_release: list[tuple[Release, str]] = []
    for r in rels:
        held = holders.get((r.namespace, r.name))
        if held is not None:
            cq_of_release.append((r, held[1]))
    early = _simulate(overview, pending, requests, cq_of_release, now, holds)
    late = _simulate(overview, pending, requests, cq_of_release, now, holds, late=True)
    hidden_text = "; ".join(hidden)
    out: dict[Key, AdmissionEstimate] = {}
    for q in overview.queues:
        cq = overview.cluster_queue(q.cluster_queue_name)
        for w in q.pending:
            key = (w.namespace, w.name)
            if key in out:
                continue
            out[key] = _one(
                overview,
                q.cluster_queue_name,
                cq,
                w,
                q.hidden_pending,
                requests,
                holders,
                cq_of_release,
                early,
                late,
                now,
                hidden_text,
            )
    return out


def _one(
    overview: QueueOverview,
    cq_name: str | None,
    cq: ClusterQueueSummary | None,
    w: WorkloadEntry,
    hidden_pending: int,
    requests: Mapping[Key, Mapping[str, Decimal]],
    holders: Mapping[Key, tuple[WorkloadEntry, str]],
    releases: Sequence[tuple[Release, str]],
    early: Mapping[Key, tuple[datetime, Release | None]],
    late: Mapping[Key, tuple[datetime, Release | None]],
    now: datetime,
    hidden: str,
) -> AdmissionEstimate:
    key = (w.namespace, w.name)
    place = (
        f"you are next in {cq_name}"
        if not w.position
        else f"you are {_ordinal(w.position + 1)} in {cq_name} ({w.position} ahead)"
    )
    if hidden_pending:
        place += f", and {hidden_pending} more pending there from namespaces you cannot read may go first"
    tail = f"; {hidden}" if hidden else ""
    if cq is None:
        why = (
            f"ClusterQueue {cq_name} cannot be read (it needs {CLUSTERQUEUE_PERMISSION}), so its quota and "
            f"what holds it are hidden"
            if not overview.cluster_queues_readable
            else f"ClusterQueue {cq_name} does not exist"
        )
        return AdmissionEstimate(None, None, f"{why}; {place}{tail}")
    if cq.active is False or cq.stop_policy in ("Hold", "HoldAndDrain"):
        return AdmissionEstimate(None, None, f"ClusterQueue {cq_name} is stopped: nothing is admitted{tail}")
    uncertain: list[str] = []
    if cq.admission_checks:
        uncertain.append(f"admission check(s) {', '.join(cq.admission_checks)} must pass")
    req = requests.get(key)
    if req is None:
        return AdmissionEstimate(None, None, f"what {w.label} asks for cannot be read; {place}{tail}")
    # preemption: a higher-priority workload may take the quota of lower ones now
    victims = [h for h, h_cq in holders.values() if h_cq == cq.name and _preemptible(cq, w, h)]
    if w.position == 0 and victims and key not in early:
        freed = _Queues(overview)
        for v in victims:
            rel = next((r for r, _ in releases if (r.namespace, r.name) == (v.namespace, v.name)), None)
            if rel is not None:
                freed.change(cq.name, rel.usage, -1)
        if cq.name in freed.cqs and freed.fit(cq.name, req)[0]:
            names = ", ".join(v.label for v in victims[:2])
            return AdmissionEstimate(
                now,
                None,
                f"Kueue may preempt lower-priority {names} in {cq_name} to admit you now; {place}{tail}",
            )
    uncertain.append("a higher-priority workload arrives")
    first = early.get(key)
    last = late.get(key)
    if first is None:
        unbounded = [r for r, c in releases if c == cq.name and r.earliest is None]
        why = (
            unbounded[0].why
            if unbounded
            else "no release of quota that would make room is known (holders in other namespaces "
            "or with no bound)"
        )
        return AdmissionEstimate(None, None, f"{why}; {place}{tail}")
    earliest, because = first
    latest = last[0] if last is not None and not hidden_pending else None
    if latest is not None and latest < earliest:
        latest = earliest
    if because is None:
        lead = "it fits now; Kueue admits it at its next cycle"
        if latest is None:
            latest = earliest
    else:
        lead = because.why
        if because.moves:
            uncertain.insert(0, because.moves)
    if latest is None and last is None:
        open_ended = next((r for r, c in releases if c == cq.name and r.latest is None), None)
        if open_ended is not None and open_ended is not because:
            lead += f"; {open_ended.why}, so no latest time"
        elif not hidden_pending:
            lead += "; nothing bounds the release it waits for, so no latest time"
    basis = f"{lead}; {place}; it can move if {' or '.join(uncertain)}{tail}"
    return AdmissionEstimate(earliest, latest, basis)
