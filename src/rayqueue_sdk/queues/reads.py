"""The reads behind a queue overview: one LIST of LocalQueues, one of ClusterQueues, one of Workloads (raw
dicts), shared by :func:`rayqueue_sdk.queues.overview.queue_overview` and the admission estimate
(:mod:`rayqueue_sdk.queues.eta`), which needs the Workloads as read (what each holds, its reaper state).

LocalQueues and Workloads are listed across namespaces first, so that an admin sees who else waits in a
shared ClusterQueue; where that is forbidden (a data scientist) they are listed in the namespace, and the
refusal is remembered for the client. ClusterQueues that may not be listed (403) leave the quotas out, with
a note; nothing else fails.

Example:
    >>> reads = QueueReads("ds", [], [], [], [], [], True)
    >>> overview_of(reads).queues
    ()
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from rayqueue_sdk.admission.overview import QueueOverview, WorkloadEntry, build_overview
from rayqueue_sdk.errors import ForbiddenError, NotFoundError
from rayqueue_sdk.kube.session import KubeSession, Objects
from rayqueue_sdk.manifests.meta import namespace_of

__all__ = ["InHand", "QueueReads", "overview_of", "read_queues"]


@dataclasses.dataclass(frozen=True)
class InHand:
    """Objects one call has already read, and the selector that leaves them out of a LIST of their kind:
    the LIST answers the rest and the objects in hand are added, so that no object is read twice.

    Example:
        >>> InHand(({"metadata": {"name": "ws"}},), field_selector="metadata.name!=ws").merged([])
        [{'metadata': {'name': 'ws'}}]
    """

    objects: tuple[dict[str, Any], ...] = ()
    label_selector: str | None = None
    field_selector: str | None = None

    def merged(self, listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """What the LIST answered and the objects in hand."""
        return [*listed, *self.objects]


def _list_wide(
    session: KubeSession, plural: str, *, namespace: str, in_hand: InHand | None = None
) -> list[dict[str, Any]]:
    """LIST ``plural`` across namespaces, else (403, remembered per client) in ``namespace``; with
    ``in_hand``, the objects in hand are left out of the LIST and added."""
    kind = session.kueue_kind(plural)
    cache = session.cache
    key = f"overview_{plural}_namespaced_only"
    hand = in_hand or InHand()
    labels, fields = hand.label_selector, hand.field_selector
    if not cache.get(key):
        try:
            wide = session.list(kind, all_namespaces=True, label_selector=labels, field_selector=fields)
            return hand.merged(list(wide))
        except ForbiddenError:
            cache[key] = True
    return hand.merged(
        list(session.list(kind, namespace=namespace, label_selector=labels, field_selector=fields))
    )


@dataclasses.dataclass(frozen=True)
class QueueReads:
    """What one overview read: the LocalQueues (the namespace's and others'), the ClusterQueues, the Workloads
    (raw dicts), the notes and whether ClusterQueues were readable.

    Example:
        >>> QueueReads("ds", [], [], [], [], [], False).readable
        False
    """

    namespace: str
    own: list[dict[str, Any]]
    others: list[dict[str, Any]]
    cluster_queues: list[dict[str, Any]]
    workloads: list[dict[str, Any]]
    notes: list[str]
    readable: bool


def read_queues(
    session: KubeSession, *, namespace: str | None = None, workloads_in_hand: InHand | None = None
) -> QueueReads:
    """The three LISTs of an overview in ``namespace`` (the session's by default; see the module
    docstring). ``workloads_in_hand``: Workloads the caller has just read (a cluster's, by its
    ``job-uid`` label), left out of the Workloads' LIST by its selector and added, not read again.

    Example:
        >>> reads = read_queues(session, namespace="default")
        >>> reads.namespace, reads.readable
        ('default', True)
    """
    ns = namespace or session.namespace
    try:
        all_lqs = _list_wide(session, "localqueues", namespace=ns)
    except NotFoundError as err:
        raise NotFoundError(
            404,
            "NotFound",
            f"this cluster does not serve Kueue's LocalQueue API (is Kueue installed?): {err.message}",
        ) from None
    notes: list[str] = []
    readable = True
    try:
        cqs: Objects = session.list(session.kueue_kind("clusterqueues", namespaced=False))
    except (ForbiddenError, NotFoundError) as err:
        notes.append(f"ClusterQueues cannot be read ({err.status} {err.reason}): quotas are not shown")
        cqs, readable = [], False
    workloads = _list_wide(session, "workloads", namespace=ns, in_hand=workloads_in_hand)
    if all((namespace_of(w) == ns) for w in workloads) and session.cache.get(
        "overview_workloads_namespaced_only"
    ):
        notes.append("workloads of other namespaces are not visible to you")
    own = [lq for lq in all_lqs if namespace_of(lq) == ns]
    others = [lq for lq in all_lqs if namespace_of(lq) != ns]
    return QueueReads(ns, own, others, cqs, workloads, notes, readable)


def overview_of(reads: QueueReads, *, mine: Callable[[WorkloadEntry], bool] | None = None) -> QueueOverview:
    """The pure overview of what :func:`read_queues` read.

    Example:
        >>> overview_of(QueueReads("ds", [], [], [], [], [], True)).namespace
        'ds'
    """
    return build_overview(
        reads.namespace,
        reads.own,
        reads.cluster_queues,
        reads.workloads,
        mine=mine,
        notes=reads.notes,
        other_local_queues=reads.others,
        cluster_queues_readable=reads.readable,
    )
