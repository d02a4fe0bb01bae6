"""The queue overview, will-it-fit and the queue view: the I/O shell over the pure
:mod:`rayqueue_sdk.admission.overview` and :mod:`rayqueue_sdk.admission.fit`.

:func:`queue_overview` makes a constant number of requests whatever the number of queues: one LIST of
LocalQueues, one of ClusterQueues, one of Workloads (plus Kueue's version discovery, once per client).
LocalQueues and Workloads are listed across namespaces first, so that an admin sees who else waits in a
shared ClusterQueue; where that is forbidden (a data scientist) they are listed in the namespace, and the
refusal is remembered for the client so the next overview does not ask again. ClusterQueues that may not be
listed (403) leave the quotas out, with a note; nothing else fails.

Example:
    The functions' examples read a LocalQueue ``doc-overview-q`` (in namespace ``doc-overview``) whose
    ClusterQueue has 4 CPUs and 16Gi of quota, made here (on a local control plane; ``session`` is a
    KubeSession over it):

    >>> from rayqueue_sdk.kube.kinds import Kind
    >>> _ = session.apply(Kind("", "v1", "namespaces", namespaced=False),
    ...     {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doc-overview"}})
    >>> kueue = {"apiVersion": "kueue.x-k8s.io/v1beta2"}
    >>> quota = [{"name": "cpu", "nominalQuota": 4}, {"name": "memory", "nominalQuota": "16Gi"}]
    >>> _ = session.apply(Kind("kueue.x-k8s.io", "v1beta2", "resourceflavors", namespaced=False),
    ...     {**kueue, "kind": "ResourceFlavor", "metadata": {"name": "doc-overview-flavor"}})
    >>> _ = session.apply(Kind("kueue.x-k8s.io", "v1beta2", "clusterqueues", namespaced=False),
    ...     {**kueue, "kind": "ClusterQueue", "metadata": {"name": "doc-overview-cq"},
    ...      "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu", "memory"],
    ...               "flavors": [{"name": "doc-overview-flavor", "resources": quota}]}]}})
    >>> _ = session.apply(Kind("kueue.x-k8s.io", "v1beta2", "localqueues"),
    ...     {**kueue, "kind": "LocalQueue",
    ...      "metadata": {"name": "doc-overview-q", "namespace": "doc-overview"},
    ...      "spec": {"clusterQueue": "doc-overview-cq"}})

    Where others wait ahead of you (not run here: it needs their workloads)::

        ov = queue_overview("team-a")
        print(ov.ahead_text(ov.mine()[0]))
        # 2 ahead: team-a/train (priority 1000 > 100), team-a/big (earlier, same priority)
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from typing import Any

from rayqueue_sdk.admission.estimate import AdmissionEstimate
from rayqueue_sdk.admission.fit import FitAnswer, fit_requests, workload_requests
from rayqueue_sdk.admission.headroom import QueueHeadroom, headroom_of
from rayqueue_sdk.admission.overview import QueueOverview, WorkloadEntry
from rayqueue_sdk.config.models import ClusterConfiguration
from rayqueue_sdk.display.environment import is_notebook, is_terminal
from rayqueue_sdk.display.queues import QueueView, print_queues
from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.kube.session import KubeSession, SessionLike
from rayqueue_sdk.manifests.labels import QUEUE_LABEL
from rayqueue_sdk.manifests.meta import labels_of
from rayqueue_sdk.manifests.raycluster import build_raycluster
from rayqueue_sdk.manifests.rules import check_dns_label
from rayqueue_sdk.queues.eta import estimates_for
from rayqueue_sdk.queues.reads import overview_of, read_queues

__all__ = [
    "queue_headroom",
    "queue_overview",
    "view_queues",
    "will_it_fit",
    "with_estimates",
]

log = logging.getLogger(__name__)


def queue_overview(
    namespace: str | None = None,
    client: SessionLike = None,
    *,
    mine: Callable[[WorkloadEntry], bool] | None = None,
    with_eta: bool = True,
) -> QueueOverview:
    """Every LocalQueue of ``namespace`` (default: the credentials' one) with its ClusterQueue's quota and
    usage per flavor and resource, fair sharing, admission checks and the pending workloads in admission
    order, in one call (a constant number of requests; see the module docstring).

    ``mine`` picks the reader's own workloads (default: those of ``namespace``); the overview answers "who is
    ahead of me, and why" for them (:meth:`~rayqueue_sdk.admission.overview.QueueOverview.ahead_text`).
    ``with_eta`` gives every pending workload its admission estimate (``eta``, see
    :mod:`rayqueue_sdk.admission.estimate`), from the RayClusters', RayJobs' and ScaledObjects' LISTs of the
    namespace (three more requests).

    Raises:
        ForbiddenError: the identity may not list LocalQueues (or Workloads) in the namespace.
        NotFoundError: Kueue's API is not served.

    Example:
        >>> from rayqueue_sdk import queue_overview
        >>> ov = queue_overview("doc-overview", client=session)   # the module's example made its queue
        >>> [(q.name, q.cluster_queue_name, len(q.pending)) for q in ov.queues]
        [('doc-overview-q', 'doc-overview-cq', 0)]
    """
    session = KubeSession.of(client, namespace=namespace)
    reads = read_queues(session, namespace=session.namespace)
    overview = overview_of(reads, mine=mine)
    if with_eta:
        etas = estimates_for(session, reads, overview)
        overview = with_estimates(overview, etas)
    return overview


def queue_headroom(namespace: str | None = None, client: SessionLike = None) -> QueueHeadroom:
    """What each LocalQueue of ``namespace`` may still get now, per flavor and resource: nominal quota,
    what it could borrow, what the ClusterQueue and the queue itself hold, and what is free
    (:mod:`rayqueue_sdk.admission.headroom`). A reader who may not read ClusterQueues gets the queue's own
    usage and a note naming the permission that would show the rest. The overview's three LISTs.

    Raises:
        ForbiddenError: the identity may not list LocalQueues (or Workloads) in the namespace.

    Example:
        >>> from rayqueue_sdk import queue_headroom
        >>> room = queue_headroom("doc-overview", client=session)   # the module's example made its queue
        >>> [(r.local_queue, r.resource, str(r.nominal), str(r.free)) for r in room.rows]
        [('doc-overview-q', 'cpu', '4', '4'), ('doc-overview-q', 'memory', '17179869184', '17179869184')]

        As a table (not run here)::

            print(queue_headroom("team-a"))
            # LOCALQUEUE   CLUSTERQUEUE FLAVOR       RESOURCE        NOMINAL BORROWABLE   USED (QUEUE)   FREE
            # user-queue   cq-team-a    default-flav nvidia.com/gpu        2          0      2 (2)          0
    """
    session = KubeSession.of(client, namespace=namespace)
    reads = read_queues(session, namespace=session.namespace)
    return headroom_of(overview_of(reads), reads.own)


def with_estimates(overview: QueueOverview, etas: dict[tuple[str, str], AdmissionEstimate]) -> QueueOverview:
    """``overview`` with each pending row's ``eta`` set from ``etas`` (keyed ``(namespace, name)``).

    Example:
        >>> with_estimates(QueueOverview("ds"), {}).queues
        ()
    """
    queues = tuple(
        dataclasses.replace(
            q, pending=tuple(dataclasses.replace(w, eta=etas.get((w.namespace, w.name))) for w in q.pending)
        )
        for q in overview.queues
    )
    return dataclasses.replace(overview, queues=queues)


def will_it_fit(
    config: ClusterConfiguration | Mapping[str, Any],
    queue: str | None = None,
    *,
    namespace: str | None = None,
    client: SessionLike = None,
) -> FitAnswer:
    """Whether the cluster ``config`` describes would be admitted now by ``queue``'s ClusterQueue, from its
    quota and current usage (borrowing from the cohort included), before anything is applied; with the
    reason: which resource, how much short, and whether borrowing could help. ``config`` may also be a
    RayCluster or RayJob manifest (``job.to_dict()``). Requests are counted as Kueue counts them: the
    autoscaler sidecar of an autoscaling cluster and a RayJob's submitter included
    (:mod:`rayqueue_sdk.admission.podsets`).

    ``queue`` defaults to the config's ``local_queue`` (or queue-name label), then the namespace's default
    LocalQueue. The answer is about quota only (not node labels, taints or topology); workloads already
    pending may be admitted first, and the reason says how many there are.

    Raises:
        ConfigError: ``config`` is not a ClusterConfiguration, ``queue`` not a LocalQueue name, or no queue
            was given and the namespace has no default one.
        QueueNotFoundError: the LocalQueue does not exist (the error lists those that do).

    Example:
        >>> from rayqueue_sdk import ClusterConfiguration, will_it_fit
        >>> small = ClusterConfiguration(name="ws", namespace="doc-overview", num_workers=1)
        >>> will_it_fit(small, "doc-overview-q", client=session).fits   # doc-overview-q: the module's
        True
        >>> big = ClusterConfiguration(name="ws", namespace="doc-overview", num_workers=4,
        ...                            worker_cpu_requests=2)
        >>> answer = will_it_fit(big, "doc-overview-q", client=session)
        >>> answer.fits
        False
        >>> print(answer.reason)
        never fits: cpu 9 is more than flavor doc-overview-flavor can ever give (4; no cohort to borrow ...)
    """
    if isinstance(config, Mapping) and config.get("kind") in ("RayCluster", "RayJob"):
        manifest = dict(config)  # e.g. RayJob(...).to_dict(): the submitter counts as Kueue counts it
    elif isinstance(config, ClusterConfiguration):
        manifest = build_raycluster(config)
    else:
        raise ConfigError(
            "config", type(config).__name__, "a ClusterConfiguration or a RayCluster/RayJob manifest"
        )
    if queue is not None:
        check_dns_label(queue, "queue", "LocalQueue name")
    requests = workload_requests(manifest)
    labelled = labels_of(manifest).get(QUEUE_LABEL)
    session = KubeSession.of(client, namespace=namespace or (manifest.get("metadata") or {}).get("namespace"))
    ns = session.namespace
    overview = queue_overview(ns, session, with_eta=False)
    name = queue or labelled or next((q.name for q in overview.queues if q.default), None)
    if name is None:
        raise ConfigError(
            "queue",
            None,
            "a LocalQueue name",
            problem=f"namespace {ns!r} has no default LocalQueue; queues: "
            + (", ".join(q.name for q in overview.queues) or "none"),
        )
    summary = overview.queue(name)
    cq = summary.cluster_queue
    if cq is None and overview.cluster_queues_readable:
        why = f"does not fit: ClusterQueue {summary.cluster_queue_name} does not exist"
        return FitAnswer(False, why, queue=name, cluster_queue=summary.cluster_queue_name, requests=requests)
    if cq is None:
        why = f"cannot tell: ClusterQueue {summary.cluster_queue_name} cannot be read"
        return FitAnswer(None, why, queue=name, cluster_queue=summary.cluster_queue_name, requests=requests)
    answer = fit_requests(requests, cq, overview.cohort_members(cq))
    reason = answer.reason
    if answer.fits and summary.pending:
        reason += f"; {len(summary.pending)} workload(s) already pending there may be admitted first"
    return dataclasses.replace(answer, queue=name, reason=reason)


def view_queues(
    namespace: str | None = None,
    client: SessionLike = None,
    *,
    mine: Callable[[WorkloadEntry], bool] | None = None,
    show: bool | None = None,
) -> QueueView | QueueOverview:
    """The queue view: in a notebook a :class:`~rayqueue_sdk.display.queues.QueueView` (widget with Refresh,
    ``text/plain`` and ``text/html``), shown at once; elsewhere the :class:`QueueOverview`, printed as rich
    tables that fit 80 columns when stdout is a terminal (``show=True``: always, ``False``: never).

    Example:
        >>> from rayqueue_sdk import view_queues
        >>> type(view_queues("doc-overview", client=session, show=False)).__name__   # not in a notebook
        'QueueOverview'

        In a notebook or a terminal (not run here)::

            view_queues("team-a")
    """
    session = KubeSession.of(client, namespace=namespace)

    def load() -> QueueOverview:
        return queue_overview(session.namespace, session, mine=mine)

    if is_notebook() and show is not False:
        view = QueueView(load)
        view.live.show()
        return view
    overview = load()
    if show or (show is None and is_terminal()):
        print_queues(overview)
    return overview
