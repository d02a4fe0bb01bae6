"""The SDK's one read path for clusters: status with reachable addresses, details, and listings.

:func:`observe_one` (``Cluster.status()``, ``details()``, a job's "was my cluster lost?") and
:func:`observe_many` (``list_clusters``, the widgets) share one core: RayCluster and Workload pairs (joined
on ``kueue.x-k8s.io/job-uid``) go through the admission machine and ``status_from``, with one visibility
read per LocalQueue for positions, and the dashboard and ``ray://`` addresses found by
:mod:`rayqueue_sdk.cluster.dashboard`. :mod:`rayqueue_sdk.cluster.wait` watches instead of reading once, but
feeds the same pure pieces. A listing costs a constant number of API calls: one LIST of RayClusters,
one LIST of Workloads, one read of pending workloads per LocalQueue with queued clusters, one LIST of
KEDA ScaledObjects where a cluster has a KEDA idle policy (its idle clock: the status's ``idle``), and the
LISTs of Routes/HTTPRoutes/Ingresses where those APIs are served.

Example:
    >>> rc = {"metadata": {"name": "ws", "namespace": "ds"},
    ...       "spec": {"headGroupSpec": {"rayStartParams": {"num-gpus": "0"}},
    ...                "workerGroupSpecs": [{"groupName": "gpu", "replicas": 2,
    ...                                      "rayStartParams": {"num-gpus": "1"}}]}}
    >>> summarize(rc).gpus
    2
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from rayqueue_sdk.admission.cluster import Assessment, ClusterPhase, assess_cluster
from rayqueue_sdk.admission.idle import policy_of
from rayqueue_sdk.cluster.dashboard import (
    client_from_status,
    dashboard_from_exposure,
    dashboard_from_status,
    exposures,
    in_kubernetes_pod,
)
from rayqueue_sdk.cluster.kueue_context import check_limits, fair_share_for, fair_share_in, waits_for_checks
from rayqueue_sdk.cluster.scaling_read import with_scaling
from rayqueue_sdk.cluster.status import ClusterStatus, status_from
from rayqueue_sdk.display import show_details
from rayqueue_sdk.errors import ForbiddenError, NotFoundError, RayQueueError
from rayqueue_sdk.kube.kinds import RAYCLUSTERS, Kind
from rayqueue_sdk.kube.lookups import fetch_raycluster, pick_workload
from rayqueue_sdk.kube.pods import head_pod
from rayqueue_sdk.kube.session import KubeSession, SessionLike
from rayqueue_sdk.manifests.idle import IdleMode
from rayqueue_sdk.manifests.labels import JOB_UID_LABEL
from rayqueue_sdk.manifests.meta import labels_of, meta_of, name_of, namespace_of, uid_of
from rayqueue_sdk.manifests.scaling import policy_name
from rayqueue_sdk.queues.eta import EstimateReads, read_around
from rayqueue_sdk.queues.local_queues import queue_positions

__all__ = [
    "ClusterDetails",
    "EstimateRead",
    "GroupSummary",
    "list_clusters",
    "observe_cluster",
    "observe_many",
    "observe_object",
    "observe_one",
    "observe_pair",
    "summarize",
]

log = logging.getLogger(__name__)

#: Page size of a listing's LISTs: one request each up to this many clusters (the API server's default
#: chunking, 500, would make the number of calls grow with the number of clusters).
_LIST_PAGE = 10_000

#: How a queued cluster's estimate is read: ``(session, RayCluster, its Workloads) -> EstimateReads``
#: (``None``: not read), from what the caller holds (see :func:`observe_object`).
EstimateRead = Callable[[KubeSession, dict[str, Any], list[dict[str, Any]]], EstimateReads | None]

#: KEDA's ScaledObjects: a KEDA idle policy's clock (``status.lastActiveTime``).
_SCALEDOBJECTS = Kind("keda.sh", "v1alpha1", "scaledobjects")


@dataclass(frozen=True)
class GroupSummary:
    """One worker group (or the head) as it is asked for.

    Example:
        >>> GroupSummary("gpu", 2, 0, 4, "2", "8G", 1).gpus
        1
    """

    name: str
    replicas: int
    min_replicas: int | None
    max_replicas: int | None
    cpu: str | None
    memory: str | None
    gpus: int
    accelerators: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ClusterDetails:
    """A cluster's status plus its shape: the head, every worker group and the GPUs asked for.

    Example:
        >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
        >>> st = ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready")
        >>> ClusterDetails(st, head=None, groups=(), gpus=0).to_dict()["status"]["phase"]
        'ready'
    """

    status: ClusterStatus
    head: GroupSummary | None
    groups: tuple[GroupSummary, ...]
    gpus: int
    image: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        out = asdict(self)
        out["status"] = self.status.to_dict()
        return out

    def _ipython_display_(self) -> None:
        """As a cell's value: the details view, once (``details()`` already showed it in this cell)."""
        show_details(self, show=True)


def _int(value: Any, default: int = 0) -> int:
    try:
        return int(float(str(value)))
    except (TypeError, ValueError):
        return default


def _group_summary(name: str, spec: Mapping[str, Any], replicas: int) -> GroupSummary:
    pod = (spec.get("template") or {}).get("spec") or {}
    containers = pod.get("containers") or [{}]
    resources = containers[0].get("resources") or {}
    requests = resources.get("requests") or {}
    limits = resources.get("limits") or {}
    merged = {**limits, **requests}
    accelerators = {k: v for k, v in merged.items() if k not in ("cpu", "memory", "ephemeral-storage")}
    params = spec.get("rayStartParams") or {}
    if "num-gpus" in params:
        gpus = _int(params["num-gpus"])
    else:
        gpus = sum(_int(v) for k, v in accelerators.items() if k.endswith("/gpu"))
    return GroupSummary(
        name=name,
        replicas=replicas,
        min_replicas=spec.get("minReplicas"),
        max_replicas=spec.get("maxReplicas"),
        cpu=str(merged["cpu"]) if "cpu" in merged else None,
        memory=str(merged["memory"]) if "memory" in merged else None,
        gpus=gpus,
        accelerators=accelerators,
    )


def summarize(cluster: Mapping[str, Any], status: ClusterStatus | None = None) -> ClusterDetails:
    """The :class:`ClusterDetails` of a RayCluster dict (pure; ``status`` computed when not given).

    Example:
        >>> summarize({"metadata": {"name": "ws", "namespace": "ds"}, "spec": {}}).status.phase.value
        'starting'
    """
    spec = cluster.get("spec") or {}
    head_spec = spec.get("headGroupSpec")
    head = _group_summary("head", head_spec, 1) if head_spec else None
    groups = tuple(
        _group_summary(str(g.get("groupName") or f"group-{i}"), g, _int(g.get("replicas"), 1))
        for i, g in enumerate(spec.get("workerGroupSpecs") or [])
    )
    gpus = (head.gpus if head else 0) + sum(g.gpus * g.replicas for g in groups)
    image = None
    if head_spec:
        containers = ((head_spec.get("template") or {}).get("spec") or {}).get("containers") or [{}]
        image = containers[0].get("image")
    return ClusterDetails(
        status=status or status_from(cluster, None), head=head, groups=groups, gpus=gpus, image=image
    )


def _status(
    cluster: Mapping[str, Any],
    workload: Mapping[str, Any] | None,
    position: int | None,
    why: str | None,
    exposed: str | None,
    limits: Mapping[str, int] | None = None,
    fair_share: str | None = None,
    head: Mapping[str, Any] | None = None,
    scaled_objects: Mapping[str, Mapping[str, Any]] | None = None,
    assessment: Assessment | None = None,
) -> ClusterStatus:
    st = status_from(
        cluster,
        workload,
        assessment=assessment,
        position=position,
        position_unavailable=why,
        check_limits=limits,
        fair_share=fair_share,
        head_pod=head,
        scaled_object=(scaled_objects or {}).get(policy_name(_name(cluster))),
        scaled_object_read=scaled_objects is not None,
    )
    if in_kubernetes_pod():  # status_from's defaults are the in-cluster Service names
        return replace(st, dashboard_url=exposed or st.dashboard_url)
    # Outside the cluster: what is exposed, else what KubeRay reports (None while queued or starting).
    return replace(
        st,
        dashboard_url=exposed or dashboard_from_status(cluster),
        cluster_uri=client_from_status(cluster),
    )


def _name(obj: Mapping[str, Any] | None) -> str:
    return name_of(obj)


def _uid(obj: Mapping[str, Any]) -> str:
    return uid_of(obj) or ""


def _positions(
    session: KubeSession, namespace: str, pairs: list[tuple[dict[str, Any], dict[str, Any] | None]]
) -> dict[str, tuple[int | None, str | None]]:
    """The queue positions of the pending Workloads among ``pairs``: one visibility read per LocalQueue."""
    pending: dict[str, list[str]] = {}
    for cluster, wl in pairs:
        reading = assess_cluster(cluster, wl)
        queue_name = reading.queue or ((wl or {}).get("spec") or {}).get("queueName")
        if reading.pending and wl is not None and queue_name:
            pending.setdefault(str(queue_name), []).append(_name(wl))
    positions: dict[str, tuple[int | None, str | None]] = {}
    for queue_name, names in sorted(pending.items()):
        positions.update(
            queue_positions(session, local_queue=queue_name, workload_names=names, namespace=namespace)
        )
    return positions


def _scaled_objects(
    session: KubeSession, namespace: str, clusters: list[dict[str, Any]]
) -> dict[str, dict[str, Any]] | None:
    """The ScaledObjects of the clusters with a KEDA idle policy, by name (one read: a GET for one
    cluster, else a LIST); ``{}`` when none has one, ``None`` when they cannot be read."""
    keda = [c for c in clusters if (p := policy_of(c)) is not None and p.mode is IdleMode.KEDA]
    if not keda:
        return {}
    try:
        if len(clusters) == 1:
            try:
                one = session.get(_SCALEDOBJECTS, name=policy_name(_name(keda[0])), namespace=namespace)
            except NotFoundError:
                return {}
            return {_name(one): one}
        items = session.list(_SCALEDOBJECTS, namespace=namespace, page_size=_LIST_PAGE)
    except RayQueueError as err:  # KEDA gone or not readable: the idle clock is unknown, said so
        log.debug("cannot read ScaledObjects in %s: %s", namespace, err)
        return None
    return {_name(so): so for so in items}


def _read(
    session: KubeSession,
    namespace: str,
    pairs: list[tuple[dict[str, Any], dict[str, Any] | None]],
    *,
    with_positions: bool,
    with_addresses: bool,
    heads: Mapping[str, Mapping[str, Any] | None] | None = None,
    assessment: Assessment | None = None,
    fair_shares: Mapping[str, str | None] | None = None,
) -> list[tuple[ClusterStatus, dict[str, Any]]]:
    """The one read path: (RayCluster, Workload) pairs → statuses, with positions, exposed addresses and
    the idle policies' state (and the head Pods the caller read, by cluster uid; the assessment a single
    pair's caller already made; the fair-share sentences it made from the queues it read, by Workload
    name: those are not read again)."""
    positions = _positions(session, namespace, pairs) if with_positions else {}
    scaled = _scaled_objects(session, namespace, [c for c, _ in pairs])
    found = exposures(session, namespace=namespace) if with_addresses and pairs else {}
    out = []
    for cluster, wl in pairs:
        position, why = positions.get(_name(wl), (None, None)) if wl else (None, None)
        exposed = dashboard_from_exposure(_name(cluster), namespace, **found) if found else None
        limits = check_limits(session, wl) if waits_for_checks(wl) else None
        known = fair_shares is not None and wl is not None and _name(wl) in fair_shares
        fair = (fair_shares or {}).get(_name(wl)) if known else fair_share_for(session, wl)
        head = (heads or {}).get(_uid(cluster))
        st = _status(cluster, wl, position, why, exposed, limits, fair, head, scaled, assessment)
        out.append((st, cluster))
    return out


def _head_of_starting(
    session: KubeSession, cluster: Mapping[str, Any], wl: Mapping[str, Any] | None
) -> dict[str, Mapping[str, Any] | None]:
    """The head Pod of a cluster that is starting (one read; its kubelet may say it cannot start), by uid."""
    if assess_cluster(cluster, wl).phase is not ClusterPhase.STARTING:
        return {}
    meta = meta_of(cluster)
    try:
        pod = head_pod(
            session, cluster=_name(cluster), namespace=str(meta.get("namespace") or ""), uid=_uid(cluster)
        )
    except (ForbiddenError, NotFoundError) as err:  # pods not readable: the RayCluster's word only
        log.debug("cannot read the head pod of %s: %s", _name(cluster), err)
        return {}
    return {_uid(cluster): pod}


def observe_one(
    session: KubeSession,
    *,
    name: str,
    namespace: str | None = None,
    with_position: bool = True,
    with_addresses: bool = True,
) -> tuple[ClusterStatus, dict[str, Any]]:
    """The status of one RayCluster with reachable addresses, and the RayCluster itself.

    Reads the RayCluster, its Workload (by ``kueue.x-k8s.io/job-uid``), while it is queued its position
    (Kueue's visibility API; absent or forbidden → ``position_unavailable``), while it starts its head Pod
    (a head that cannot start, e.g. ``ImagePullBackOff``, makes it ``FAILED``) and, with
    ``with_addresses``, the Routes/HTTPRoutes/Ingresses that expose its dashboard.

    Raises:
        ClusterNotFoundError: no such RayCluster (lists those that exist).

    Example:
        >>> head = {"rayStartParams": {}, "template": {"spec": {"containers": [
        ...     {"name": "ray-head", "image": "rayproject/ray:2.52.0"}]}}}
        >>> _ = session.create(RAYCLUSTERS, {"apiVersion": "ray.io/v1", "kind": "RayCluster",
        ...     "metadata": {"name": "doc-one"}, "spec": {"headGroupSpec": head}})
        >>> status, raycluster = observe_one(session, name="doc-one")   # namespace: the session's
        >>> status.name, status.namespace, raycluster["kind"]
        ('doc-one', 'default', 'RayCluster')
        >>> observe_one(session, name="doc-onee")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ClusterNotFoundError: ...doc-one...
    """
    namespace = namespace or session.namespace
    cluster = fetch_raycluster(session, name=name, namespace=namespace)
    return observe_object(session, cluster, with_position=with_position, with_addresses=with_addresses)


def observe_object(
    session: KubeSession,
    cluster: dict[str, Any],
    *,
    with_position: bool = True,
    with_addresses: bool = True,
    with_eta: bool = True,
    estimate_reads: EstimateRead | None = None,
) -> tuple[ClusterStatus, dict[str, Any]]:
    """:func:`observe_one` from a RayCluster already in hand (as ``apply()`` was answered it): its Workload,
    position, head Pod and addresses are read, the RayCluster is not read again.

    A queued cluster gets its admission estimate (``with_eta=False`` leaves it out) and its fair-share
    sentence from one set of queue reads: ``estimate_reads(session, cluster, workloads)`` (default
    :func:`~rayqueue_sdk.queues.eta.read_around`: the overview's LISTs and the holders', the cluster and
    its Workloads left out of them, not read twice; a card hands the reads of its shared watches).

    Example:
        >>> head = {"rayStartParams": {}, "template": {"spec": {"containers": [
        ...     {"name": "ray-head", "image": "rayproject/ray:2.52.0"}]}}}
        >>> rc = session.create(RAYCLUSTERS, {"apiVersion": "ray.io/v1", "kind": "RayCluster",
        ...     "metadata": {"name": "doc-object", "namespace": "default"}, "spec": {"headGroupSpec": head}})
        >>> observe_object(session, rc, with_eta=False)[0].name
        'doc-object'
    """
    namespace = namespace_of(cluster) or session.namespace
    workloads: list[dict[str, Any]] = []
    try:
        workloads = list(
            session.list(
                session.kueue_kind("workloads"),
                namespace=namespace,
                label_selector=f"{JOB_UID_LABEL}={_uid(cluster)}",
            )
        )
    except (ForbiddenError, NotFoundError) as err:
        log.debug("cannot read Kueue Workloads in %s: %s", namespace, err)
    wl = pick_workload(workloads)
    pairs = [(cluster, wl)]
    heads = _head_of_starting(session, cluster, wl)
    around = None
    if with_eta and with_position and wl is not None and assess_cluster(cluster, wl).pending:
        around = _queue_reads(session, cluster, workloads, estimate_reads or read_around)
    fair = None
    if around is not None and wl is not None:
        queues = around.queues
        fair = {_name(wl): fair_share_in(queues.own, queues.cluster_queues if queues.readable else None, wl)}
    status, rc = _read(
        session,
        namespace,
        pairs,
        with_positions=with_position,
        with_addresses=with_addresses,
        heads=heads,
        fair_shares=fair,
    )[0]
    if around is not None:
        status = replace(status, eta=around.estimate(_name(wl)))
    return with_scaling(session, status, cluster, namespace=namespace, workloads=workloads), rc


def _queue_reads(
    session: KubeSession, cluster: dict[str, Any], workloads: list[dict[str, Any]], read: EstimateRead
) -> EstimateReads | None:
    """The queue reads of a queued cluster's estimate, or ``None`` where the queues cannot be read at all
    (said in the log, never an error: the status stands without the estimate)."""
    try:
        return read(session, cluster, workloads)
    except RayQueueError as err:
        log.debug("no admission estimate for %s: %s", _name(cluster), err)
        return None


def observe_pair(
    session: KubeSession,
    cluster: dict[str, Any],
    workload: dict[str, Any] | None,
    *,
    assessment: Assessment | None = None,
) -> ClusterStatus:
    """The status of a RayCluster and its Workload already in hand (a wait's last sight of them): the read
    path's addresses and idle policy state added, without reading the two again (no position, no head Pod).

    Example:
        >>> head = {"rayStartParams": {}, "template": {"spec": {"containers": [
        ...     {"name": "ray-head", "image": "rayproject/ray:2.52.0"}]}}}
        >>> rc = session.create(RAYCLUSTERS, {"apiVersion": "ray.io/v1", "kind": "RayCluster",
        ...     "metadata": {"name": "doc-pair", "namespace": "default"}, "spec": {"headGroupSpec": head}})
        >>> st = observe_pair(session, rc, None)
        >>> st.name, st.idle is None, st.dashboard_url is None   # no policy; no address reported yet
        ('doc-pair', True, True)
    """
    namespace = namespace_of(cluster) or ""
    pairs = [(cluster, workload)]
    return _read(session, namespace, pairs, with_positions=False, with_addresses=True, assessment=assessment)[
        0
    ][0]


def observe_many(
    session: KubeSession,
    *,
    namespace: str | None = None,
    label_selector: str | None = None,
    with_positions: bool = True,
    with_addresses: bool = True,
) -> list[tuple[ClusterStatus, dict[str, Any]]]:
    """``(status, RayCluster)`` for every RayCluster in ``namespace``, in a constant number of API calls.

    One LIST of RayClusters, one LIST of Workloads (joined on ``kueue.x-k8s.io/job-uid``), with
    ``with_positions`` one visibility-API read per LocalQueue that has queued clusters, and with
    ``with_addresses`` the LISTs of Routes/HTTPRoutes/Ingresses: the number of requests does not grow
    with the number of clusters.

    Example:
        >>> head = {"rayStartParams": {}, "template": {"spec": {"containers": [
        ...     {"name": "ray-head", "image": "rayproject/ray:2.52.0"}]}}}
        >>> for name in ("doc-many-a", "doc-many-b"):
        ...     _ = session.create(RAYCLUSTERS, {"apiVersion": "ray.io/v1", "kind": "RayCluster",
        ...         "metadata": {"name": name, "labels": {"doc": "many"}}, "spec": {"headGroupSpec": head}})
        >>> sorted(st.name for st, _ in observe_many(session, label_selector="doc=many"))
        ['doc-many-a', 'doc-many-b']
        >>> observe_many(session, namespace="an-empty-namespace")
        []
    """
    namespace = namespace or session.namespace
    clusters = session.list(
        RAYCLUSTERS, namespace=namespace, label_selector=label_selector, page_size=_LIST_PAGE
    )
    by_uid: dict[str, list[dict[str, Any]]] = {}
    if clusters:
        try:
            workloads = session.list(
                session.kueue_kind("workloads"), namespace=namespace, page_size=_LIST_PAGE
            )
            for item in workloads:
                uid = labels_of(item).get(JOB_UID_LABEL)
                if uid:
                    by_uid.setdefault(uid, []).append(item)
        except (ForbiddenError, NotFoundError) as err:
            log.debug("cannot read Kueue Workloads in %s: %s", namespace, err)
    pairs = [(c, pick_workload(by_uid.get(_uid(c), []))) for c in clusters]
    return _read(session, namespace, pairs, with_positions=with_positions, with_addresses=with_addresses)


def observe_cluster(
    name: str,
    namespace: str,
    client: SessionLike = None,
    *,
    with_position: bool = True,
    with_addresses: bool = True,
) -> ClusterStatus:
    """The current :class:`ClusterStatus` of one RayCluster (no waiting): :func:`observe_one` for a client.

    Raises:
        ClusterNotFoundError: no such RayCluster (lists those that exist).

    Example:
        >>> observe_cluster("not-there", "default", api)   # print(observe_cluster("ws", "ds-team"))
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ClusterNotFoundError: ...
    """
    session = KubeSession.of(client, namespace=namespace)
    return observe_one(
        session, name=name, namespace=namespace, with_position=with_position, with_addresses=with_addresses
    )[0]


def list_clusters(
    namespace: str | None = None,
    client: SessionLike = None,
    *,
    label_selector: str | None = None,
) -> list[ClusterStatus]:
    """Every RayCluster of a namespace with its queue state, in a constant number of API calls.

    ``namespace`` defaults to the one of the current credentials. Each :class:`ClusterStatus` has the
    phase, Kueue's reason and message, the queue position while queued, workers ready/desired and the
    dashboard address.

    Example:
        >>> from rayqueue_sdk import list_clusters
        >>> list_clusters("an-empty-namespace", api)   # each: name, phase, queue, position, explanation
        []
    """
    session = KubeSession.of(client, namespace=namespace)
    statuses = [st for st, _ in observe_many(session, label_selector=label_selector)]
    return sorted(statuses, key=lambda s: s.name)
