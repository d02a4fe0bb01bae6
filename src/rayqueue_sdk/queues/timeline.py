"""``queue_timeline_rows()``: a LocalQueue's workloads as :class:`~rayqueue_sdk.display.charts.TimelineRow`
rows for :func:`~rayqueue_sdk.display.charts.queue_timeline`: admitted ones from their admission to their
expected release (an idle policy's deadline if the cluster stays idle, a RayJob's deadline, now for a
finished one; none where nothing bounds it), pending ones since their creation with their admission
estimate's window (``eta``, :mod:`rayqueue_sdk.queues.eta`).

The reads are the queue overview's plus the release facts of the holders in the reader's namespace
(:func:`rayqueue_sdk.queues.eta.read_holders`: RayClusters, and RayJobs or ScaledObjects where one is
involved), read once for both the pending rows' estimates and the admitted rows' releases
(:func:`rayqueue_sdk.queues.eta.releases_of`); the conversion, :func:`timeline_rows`, is pure.

Example:
    >>> from rayqueue_sdk.admission.overview import build_overview
    >>> lq = {"metadata": {"name": "q", "namespace": "ds"}, "spec": {"clusterQueue": "cq"}}
    >>> wl = {"metadata": {"name": "w", "namespace": "ds", "creationTimestamp": "2026-01-01T14:00:00Z"},
    ...       "spec": {"queueName": "q"}}
    >>> rows = timeline_rows(build_overview("ds", [lq], [], [wl]).queue("q"), {}, [])
    >>> [(r.name, r.kind, r.window) for r in rows]
    [('ds/w', 'pending', None)]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

from rayqueue_sdk.admission.estimate import Release
from rayqueue_sdk.admission.overview import QueueSummary, WorkloadEntry
from rayqueue_sdk.display.charts import TimelineRow
from rayqueue_sdk.kube.session import KubeSession, SessionLike
from rayqueue_sdk.manifests.meta import meta_of, namespace_of, parse_time
from rayqueue_sdk.queues.eta import estimates_from, read_holders, releases_of
from rayqueue_sdk.queues.overview import with_estimates
from rayqueue_sdk.queues.reads import overview_of, read_queues

__all__ = ["queue_timeline_rows", "timeline_rows"]


def _label(entry: WorkloadEntry) -> str:
    return entry.label


def timeline_rows(
    queue: QueueSummary,
    admitted_at: Mapping[tuple[str, str], datetime],
    releases: Iterable[Release],
) -> list[TimelineRow]:
    """The rows of one queue (pure): holders first (by admission), then the pending ones in queue order.

    ``admitted_at`` maps a Workload ``(namespace, name)`` to its ``Admitted`` time; ``releases`` are the
    holders' :class:`~rayqueue_sdk.admission.estimate.Release` s (the expected release is the latest bound,
    else the earliest: an idle policy's deadline if the cluster stays idle).
    """
    by_key = {(r.namespace, r.name): r for r in releases}
    rows: list[TimelineRow] = []
    holders = sorted(
        queue.holding,
        key=lambda h: (
            admitted_at.get((h.namespace, h.name))
            or parse_time(h.created)
            or datetime.min.replace(tzinfo=UTC)
        ),
    )
    for h in holders:
        start = admitted_at.get((h.namespace, h.name)) or parse_time(h.created)
        if start is None:
            continue
        rel = by_key.get((h.namespace, h.name))
        end = (rel.latest or rel.earliest) if rel is not None else None
        rows.append(TimelineRow(_label(h), start, end, "admitted", note=rel.why if rel is not None else ""))
    for p in queue.pending:
        start = parse_time(p.created)
        if start is None:
            continue
        window = None if p.eta is None else (p.eta.earliest, p.eta.latest)
        if window == (None, None):
            window = None
        rows.append(TimelineRow(_label(p), start, None, "pending", window))
    return rows


def queue_timeline_rows(
    queue: str,
    namespace: str | None = None,
    client: SessionLike = None,
    *,
    now: datetime | None = None,
) -> list[TimelineRow]:
    """The timeline rows of LocalQueue ``queue`` in ``namespace`` (default: the credentials' one); draw them
    with :func:`~rayqueue_sdk.display.charts.queue_timeline`.

    Raises:
        QueueNotFoundError: no such LocalQueue (the overview's error, listing those that exist).

    Example:
        >>> queue_timeline_rows("doc-timeline-q", "default", client=session)
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.QueueNotFoundError: 404 NotFound: LocalQueue 'doc-timeline-q' does not exist ...

        As a chart, on a queue that exists (not run here)::

            from rayqueue_sdk.display.charts import queue_timeline
            queue_timeline(queue_timeline_rows("user-queue", "team-a"))
    """
    session = KubeSession.of(client, namespace=namespace)
    ns = session.namespace
    reads = read_queues(session, namespace=ns)  # the overview's three LISTs, its Workloads used again below
    overview = overview_of(reads)
    # the holders' facts are read once, for the pending rows' estimates and the admitted rows' releases
    holders = read_holders(session, reads, overview, every=True)
    now = now or datetime.now(UTC)
    summary = with_estimates(overview, estimates_from(reads, overview, holders, now=now)).queue(queue)
    workloads = [w for w in reads.workloads if namespace_of(w) == ns]
    admitted_at: dict[tuple[str, str], datetime] = {}
    for wl in workloads:
        meta = meta_of(wl)
        for cond in (wl.get("status") or {}).get("conditions") or []:
            if cond.get("type") == "Admitted" and cond.get("status") == "True":
                at = parse_time(cond.get("lastTransitionTime"))
                if at is not None:
                    admitted_at[(str(meta.get("namespace") or ""), str(meta.get("name") or ""))] = at
    releases = releases_of(workloads, ns, holders.rayclusters, holders.rayjobs, holders.scaled_objects, now)
    return timeline_rows(summary, admitted_at, releases)
