"""Kueue's pending-workloads visibility API (``visibility.kueue.x-k8s.io/v1beta2``, and ``v1beta1``).

``GET /apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/{cq}/pendingworkloads`` and
``.../namespaces/{ns}/localqueues/{lq}/pendingworkloads`` return a ``PendingWorkloadsSummary``
whose items carry ``metadata{name, namespace, ownerReferences}``, ``priority``, ``localQueueName``,
``positionInClusterQueue`` and ``positionInLocalQueue`` (0-based), honouring ``limit`` (default
1000) and ``offset`` (default 0). Positions follow the ClusterQueue's queue order (priority, then
creation time). Users may read ``localqueues/pendingworkloads`` in their namespaces; the
ClusterQueue view is for admins, as with Kueue's default roles.
Sources: Kueue v0.19.2 apis/visibility/v1beta2/types.go, pkg/visibility/api/v1beta2/*.

Versions follow the plane's ``kueue_api_versions``, as upstream's releases do: Kueue 0.15 to 0.19
register both ``v1beta2`` and ``v1beta1`` (same fields), 0.20 removed the ``v1beta1`` APIService with
the ``v1beta1`` CRD versions (kueue#14558), and releases before 0.15 serve ``v1beta1`` alone
(``v1alpha1``, served by 0.6 to 0.9, is not emulated).

Example:
    >>> summary([], limit=10, offset=0)
    {'kind': 'PendingWorkloadsSummary', 'apiVersion': 'visibility.kueue.x-k8s.io/v1beta2', \
'metadata': {'creationTimestamp': None}, 'items': []}
"""

from __future__ import annotations

from typing import Any

from rayqueue_local.apimachinery.status import status_body
from rayqueue_local.apiserver.auth import READ, Rule
from rayqueue_local.controllers.kueue.engine import queue_order_key
from rayqueue_local.controllers.kueue.snapshot import WorkloadInfo
from rayqueue_local.controllers.plane import Plane
from rayqueue_local.options import kueue_served_versions
from rayqueue_local.registry.registry import ResourceType
from rayqueue_local.storage.store import Store, StoreError

__all__ = ["GROUP", "pending_items", "register", "summary"]

GROUP = "visibility.kueue.x-k8s.io"  # the aggregated visibility API's group
_VERSION = "v1beta2"
_NAME = r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?"


def pending_items(
    workloads: list[dict[str, Any]], local_queues: list[dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """Pending Workloads per ClusterQueue, in queue order, as visibility items (with both positions)."""
    cq_of = {
        (lq["metadata"].get("namespace", ""), lq["metadata"]["name"]): (lq.get("spec") or {}).get(
            "clusterQueue", ""
        )
        for lq in local_queues
    }
    queues: dict[str, list[WorkloadInfo]] = {}
    for obj in workloads:
        if (obj.get("metadata") or {}).get("deletionTimestamp"):
            continue
        wl = WorkloadInfo.from_object(obj)
        if wl.reserved or wl.finished or not wl.active:
            continue
        cq = cq_of.get((wl.namespace, wl.queue_name))
        if cq:
            queues.setdefault(cq, []).append(wl)
    out: dict[str, list[dict[str, Any]]] = {}
    for cq, wls in queues.items():
        wls.sort(key=queue_order_key)
        per_lq: dict[tuple[str, str], int] = {}
        items = []
        for position, wl in enumerate(wls):
            lq_key = (wl.namespace, wl.queue_name)
            meta = wl.obj.get("metadata") or {}
            items.append(
                {
                    "metadata": {
                        "name": wl.name,
                        "namespace": wl.namespace,
                        "creationTimestamp": meta.get("creationTimestamp"),
                        "ownerReferences": meta.get("ownerReferences") or [],
                    },
                    "priority": wl.priority,
                    "localQueueName": wl.queue_name,
                    "positionInClusterQueue": position,
                    "positionInLocalQueue": per_lq.get(lq_key, 0),
                }
            )
            per_lq[lq_key] = per_lq.get(lq_key, 0) + 1
        out[cq] = items
    return out


def summary(
    items: list[dict[str, Any]], *, limit: int, offset: int, version: str = _VERSION
) -> dict[str, Any]:
    """A ``PendingWorkloadsSummary`` of ``items[offset:offset+limit]`` at ``version``."""
    return {
        "kind": "PendingWorkloadsSummary",
        "apiVersion": f"{GROUP}/{version}",
        "metadata": {"creationTimestamp": None},
        "items": items[offset : offset + limit],
    }


def _paging(query: dict[str, list[str]]) -> tuple[int, int] | dict[str, Any]:
    try:
        limit = int((query.get("limit") or ["1000"])[0])
        offset = int((query.get("offset") or ["0"])[0])
    except ValueError as exc:
        return status_body(400, "BadRequest", f"invalid paging parameter: {exc}")
    if limit < 0 or offset < 0:
        return status_body(400, "BadRequest", "limit and offset must not be negative")
    return limit, offset


def _error(err: StoreError, resource: str, name: str) -> tuple[int, dict[str, Any]]:
    """The response to a store error reading the queue ``name``: Kubernetes' ``NotFound`` for a missing
    queue, else the error's own code and ``Status`` (a 403, a 507...). Any other exception is a bug and
    propagates (the API server answers it as a 500).

    Example:
        >>> _error(StoreError(404, "NotFound", "gone"), "localqueues.kueue.x-k8s.io", "lq")[1]["message"]
        'localqueues.kueue.x-k8s.io "lq" not found'
        >>> _error(StoreError(403, "Forbidden", "no"), "localqueues.kueue.x-k8s.io", "lq")[0]
        403
    """
    if err.code == 404:
        return 404, status_body(404, "NotFound", f'{resource} "{name}" not found')
    return err.code, err.to_status()


def _discovery_types(versions: tuple[str, ...]) -> list[Any]:
    def rt(plural: str, kind: str, namespaced: bool) -> ResourceType:
        return ResourceType(
            group=GROUP,
            versions=versions,
            storage_version=versions[0],
            plural=plural,
            singular="",
            kind=kind,
            namespaced=namespaced,
            verbs=("get",),
            has_generation=False,
        )

    return [
        rt("clusterqueues", "ClusterQueue", False),
        rt("clusterqueues/pendingworkloads", "PendingWorkloadsSummary", False),
        rt("localqueues", "LocalQueue", True),
        rt("localqueues/pendingworkloads", "PendingWorkloadsSummary", True),
    ]


def register(cp: Plane, store: Store) -> None:
    """Serve the two routes on the control plane ``cp`` at each version its ``kueue_api_versions``
    serves, list the group in discovery and let users read ``localqueues/pendingworkloads`` in their
    namespaces."""
    options = getattr(cp, "options", None)
    versions = kueue_served_versions(getattr(options, "kueue_api_versions", "both"))

    def cluster_queue_handler(
        match: Any, query: dict[str, list[str]], user: Any
    ) -> tuple[int, dict[str, Any]]:
        version = match.group("version")
        paging = _paging(query)
        if isinstance(paging, dict):
            return 400, paging
        name = match.group("name")
        try:
            store.get("clusterqueues.kueue.x-k8s.io", None, name)
        except StoreError as err:
            return _error(err, "clusterqueues.kueue.x-k8s.io", name)
        items = pending_items(
            store.list("workloads.kueue.x-k8s.io"), store.list("localqueues.kueue.x-k8s.io")
        )
        return 200, summary(items.get(name, []), limit=paging[0], offset=paging[1], version=version)

    def local_queue_handler(match: Any, query: dict[str, list[str]], user: Any) -> tuple[int, dict[str, Any]]:
        version = match.group("version")
        paging = _paging(query)
        if isinstance(paging, dict):
            return 400, paging
        namespace, name = match.group("namespace"), match.group("name")
        try:
            lq = store.get("localqueues.kueue.x-k8s.io", namespace, name)
        except StoreError as err:
            return _error(err, "localqueues.kueue.x-k8s.io", name)
        items = pending_items(
            store.list("workloads.kueue.x-k8s.io"), store.list("localqueues.kueue.x-k8s.io")
        )
        cq = (lq.get("spec") or {}).get("clusterQueue", "")
        mine = [
            i
            for i in items.get(cq, [])
            if i["metadata"]["namespace"] == namespace and i["localQueueName"] == name
        ]
        return 200, summary(mine, limit=paging[0], offset=paging[1], version=version)

    prefix = rf"/apis/{GROUP}/(?P<version>{'|'.join(versions)})"
    cp.add_route(
        "GET",
        rf"{prefix}/clusterqueues/(?P<name>{_NAME})/pendingworkloads",
        cluster_queue_handler,
        resource=f"clusterqueues/pendingworkloads.{GROUP}",
        verb="get",
    )
    cp.add_route(
        "GET",
        rf"{prefix}/namespaces/(?P<namespace>{_NAME})/localqueues/(?P<name>{_NAME})/pendingworkloads",
        local_queue_handler,
        resource=f"localqueues/pendingworkloads.{GROUP}",
        verb="get",
    )
    registry = getattr(store, "registry", None)
    if registry is not None:
        for rtype in _discovery_types(versions):
            if rtype.key not in registry:
                registry.add(rtype)
    auth = getattr(cp, "auth", None)
    if auth is not None:
        auth.policy.add_rule(Rule(GROUP, ("localqueues/pendingworkloads",), READ))
