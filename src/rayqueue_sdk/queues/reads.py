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

__all__ = ["QueueReads", "overview_of", "read_queues"]


def _list_wide(session: KubeSession, plural: str, *, namespace: str) -> Objects:
    """LIST ``plural`` across namespaces, else (403, remembered per client) in ``namespace``."""
    kind = session.kueue_kind(plural)
    cache = session.cache
    key = f"overview_{plural}_namespaced_only"
    if not cache.get(key):
        try:
            return session.list(kind, all_namespaces=True)
        except ForbiddenError:
            cache[key] = True
    return session.list(kind, namespace=namespace)


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


def read_queues(session: KubeSession, *, namespace: str | None = None) -> QueueReads:
    """The three LISTs of an overview in ``namespace`` (the session's by default; see the module
    docstring).

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
    workloads = _list_wide(session, "workloads", namespace=ns)
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
