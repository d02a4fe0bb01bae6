"""Thin typed helpers over ``CustomObjectsApi`` for the objects the SDK reads and writes.

RayClusters and RayJobs (``ray.io/v1``); Kueue Workloads, LocalQueues and WorkloadPriorityClasses
(``kueue.x-k8s.io``, ``v1beta2`` first and ``v1beta1`` where only that is served: discovered once per
client and cached; ``v1beta1`` objects are normalised to the ``v1beta2`` field names the SDK reads);
and the visibility API's pending workloads (raw GETs through :mod:`~rayqueue_sdk.kube.rest`).

Every call goes through :func:`rayqueue_sdk.kube.retry.call`: bounded retries, typed errors. In the
examples ``api`` is an ``ApiClient`` of a running cluster (the doctests give them a local control plane's).

Example:
    >>> RAYCLUSTERS.key, RAYCLUSTERS.path("ds", "ws")
    ('rayclusters.ray.io', '/apis/ray.io/v1/namespaces/ds/rayclusters/ws')
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rayqueue_sdk.errors import ClusterNotFoundError, ForbiddenError, NotFoundError, RayQueueError
from rayqueue_sdk.kube.connection import cache_for, server_of
from rayqueue_sdk.kube.kinds import KUEUE_GROUP as KUEUE_GROUP
from rayqueue_sdk.kube.kinds import RAYCLUSTERS as RAYCLUSTERS
from rayqueue_sdk.kube.kinds import RAYJOBS as RAYJOBS
from rayqueue_sdk.kube.kinds import Kind as Kind
from rayqueue_sdk.kube.normalize import normalize_kueue as normalize_kueue
from rayqueue_sdk.kube.rest import get_path
from rayqueue_sdk.kube.retry import RetryPolicy, call
from rayqueue_sdk.kube.session import FIELD_MANAGER as FIELD_MANAGER
from rayqueue_sdk.manifests.labels import JOB_UID_LABEL

if TYPE_CHECKING:  # pragma: no cover
    from kubernetes.client import ApiClient

__all__ = [
    "KUEUE_GROUP",
    "RAYCLUSTERS",
    "RAYJOBS",
    "FIELD_MANAGER",
    "Kind",
    "apply_object",
    "create_object",
    "delete_object",
    "fetch_raycluster",
    "find_workload",
    "get_object",
    "get_raycluster",
    "get_rayjob",
    "kueue_kind",
    "kueue_version",
    "list_local_queue_objects",
    "list_objects",
    "list_priority_class_objects",
    "list_rayclusters",
    "list_workloads",
    "normalize_kueue",
    "patch_object",
    "pending_workloads",
    "pick_workload",
    "set_workload_active",
]

_VISIBILITY_GROUP = "visibility.kueue.x-k8s.io"
_KUEUE_VERSIONS = ("v1beta2", "v1beta1")
_VISIBILITY_POLICY = RetryPolicy(attempts=2, budget=5.0)
#: How long "the visibility API is not served" is believed before asking again (seconds).
_VISIBILITY_ABSENT_TTL = 60.0


def _custom(api: ApiClient) -> Any:
    from kubernetes import client as k8s  # lazy: kubernetes is slow to import

    return k8s.CustomObjectsApi(api)


def kueue_version(api: ApiClient) -> str:
    """The Kueue API version to use with ``api``: ``v1beta2`` if served, else ``v1beta1``.

    Discovered once per client (``GET /apis/kueue.x-k8s.io/<version>``) and cached. When neither
    answers (Kueue absent, discovery forbidden) the answer is ``v1beta2`` and later calls say what
    is missing.
    """
    cache = cache_for(api)
    found = cache.get("kueue_version")
    if found:
        return str(found)
    chosen = _KUEUE_VERSIONS[0]
    for version in _KUEUE_VERSIONS:
        try:
            get_path(api, f"/apis/{KUEUE_GROUP}/{version}")
        except (NotFoundError, ForbiddenError):
            continue
        chosen = version
        break
    cache["kueue_version"] = chosen
    return chosen


def kueue_kind(api: ApiClient, plural: str, *, namespaced: bool = True) -> Kind:
    """The :class:`Kind` of a Kueue resource at the version the server serves.

    Example:
        >>> kueue_kind(api, "workloads").version   # 'v1beta1' on a Kueue older than 0.15
        'v1beta2'
    """
    return Kind(KUEUE_GROUP, kueue_version(api), plural, namespaced)


def _endpoint(
    api: ApiClient, kind: Kind, namespace: str | None, method: str, subresource: str = ""
) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """The ``CustomObjectsApi`` method for ``method`` on ``kind`` and its leading positional arguments.

    A namespaced kind uses the ``*_namespaced_*`` method, except a LIST with no namespace (across all).
    """
    custom = _custom(api)
    if kind.namespaced and (namespace or method != "list"):
        fn = getattr(custom, f"{method}_namespaced_custom_object{subresource}")
        return fn, (kind.group, kind.version, namespace, kind.plural)
    return getattr(custom, f"{method}_cluster_custom_object{subresource}"), (
        kind.group,
        kind.version,
        kind.plural,
    )


def _normalized(kind: Kind, obj: dict[str, Any]) -> dict[str, Any]:
    return normalize_kueue(obj, kind.version, kind.plural) if kind.group == KUEUE_GROUP else obj


def get_object(
    api: ApiClient, kind: Kind, name: str, namespace: str | None = None, *, deadline: float | None = None
) -> dict[str, Any]:
    """GET one object as a dict.

    Raises:
        NotFoundError, ForbiddenError, AuthenticationError, ApiError, ConnectionFailedError.
    """
    fn, args = _endpoint(api, kind, namespace, "get")
    ctx: dict[str, Any] = {"verb": "get", "resource": kind.key, "namespace": namespace, "name": name}
    return _normalized(kind, call(fn, *args, name, deadline=deadline, server=server_of(api), **ctx))


def list_objects(
    api: ApiClient,
    kind: Kind,
    namespace: str | None = None,
    *,
    label_selector: str | None = None,
    field_selector: str | None = None,
    page_size: int = 500,
    deadline: float | None = None,
) -> tuple[list[dict[str, Any]], str | None]:
    """LIST objects (all pages); ``namespace=None`` lists across namespaces (or a cluster-scoped kind).

    Returns ``(items, resourceVersion)``; the resourceVersion is where a watch should start.
    """
    fn, args = _endpoint(api, kind, namespace, "list")
    ctx: dict[str, Any] = {"verb": "list", "resource": kind.key, "namespace": namespace}
    selectors = {"label_selector": label_selector, "field_selector": field_selector}
    items: list[dict[str, Any]] = []
    token: str | None = None
    resource_version: str | None = None
    while True:
        kwargs: dict[str, Any] = {"limit": page_size, **{k: v for k, v in selectors.items() if v}}
        if token:
            kwargs["_continue"] = token
        page = call(fn, *args, deadline=deadline, server=server_of(api), **ctx, **kwargs)
        meta = page.get("metadata") or {}
        resource_version = meta.get("resourceVersion") or resource_version
        items.extend(page.get("items") or [])
        token = meta.get("continue") or None
        if not token:
            break
    return [_normalized(kind, i) for i in items], resource_version


def _where(kind: Kind, obj: dict[str, Any]) -> tuple[str, str | None]:
    meta = obj.get("metadata") or {}
    return str(meta.get("name") or ""), (meta.get("namespace") if kind.namespaced else None)


def apply_object(
    api: ApiClient, kind: Kind, obj: dict[str, Any], *, field_manager: str = FIELD_MANAGER, force: bool = True
) -> dict[str, Any]:
    """Server-side apply ``obj`` (create or update; idempotent, so retried like a read).

    Example:
        >>> head = {"rayStartParams": {}, "template": {"spec": {"containers": [
        ...     {"name": "ray-head", "image": "rayproject/ray:2.52.0"}]}}}
        >>> manifest = {"apiVersion": "ray.io/v1", "kind": "RayCluster",
        ...             "metadata": {"name": "doc-apply", "namespace": "default"},
        ...             "spec": {"headGroupSpec": head}}
        >>> stored = apply_object(api, RAYCLUSTERS, manifest)
        >>> again = apply_object(api, RAYCLUSTERS, manifest)   # the same object, unchanged
        >>> again["metadata"]["uid"] == stored["metadata"]["uid"]
        True
        >>> delete_object(api, RAYCLUSTERS, "doc-apply", "default")
        True
    """
    name, namespace = _where(kind, obj)
    fn, args = _endpoint(api, kind, namespace, "patch")
    ctx: dict[str, Any] = {"verb": "patch", "resource": kind.key, "namespace": namespace, "name": name}
    opts: dict[str, Any] = {"field_manager": field_manager, "force": force}
    opts["_content_type"] = "application/apply-patch+yaml"
    return call(fn, *args, name, obj, server=server_of(api), **ctx, **opts)


def create_object(api: ApiClient, kind: Kind, obj: dict[str, Any]) -> dict[str, Any]:
    """Create ``obj``; an existing one is :class:`~rayqueue_sdk.errors.AlreadyExistsError` (not retried
    after an unclear failure, since the first attempt may have succeeded).

    Example:
        >>> head = {"rayStartParams": {}, "template": {"spec": {"containers": [
        ...     {"name": "ray-head", "image": "rayproject/ray:2.52.0"}]}}}
        >>> manifest = {"apiVersion": "ray.io/v1", "kind": "RayCluster",
        ...             "metadata": {"name": "doc-create", "namespace": "default"},
        ...             "spec": {"headGroupSpec": head}}
        >>> create_object(api, RAYCLUSTERS, manifest)["metadata"]["name"]
        'doc-create'
        >>> create_object(api, RAYCLUSTERS, manifest)
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.AlreadyExistsError: ...
    """
    name, namespace = _where(kind, obj)
    fn, args = _endpoint(api, kind, namespace, "create")
    ctx: dict[str, Any] = {"verb": "create", "resource": kind.key, "namespace": namespace, "name": name}
    return call(fn, *args, obj, idempotent=False, server=server_of(api), **ctx)


def patch_object(
    api: ApiClient,
    kind: Kind,
    name: str,
    patch: dict[str, Any],
    namespace: str | None = None,
    *,
    status: bool = False,
) -> dict[str, Any]:
    """Merge-patch an object (or its ``status`` subresource).

    Example:
        >>> head = {"rayStartParams": {}, "template": {"spec": {"containers": [
        ...     {"name": "ray-head", "image": "rayproject/ray:2.52.0"}]}}}
        >>> _ = create_object(api, RAYCLUSTERS, {"apiVersion": "ray.io/v1", "kind": "RayCluster",
        ...     "metadata": {"name": "doc-patch", "namespace": "default"}, "spec": {"headGroupSpec": head}})
        >>> patch = {"metadata": {"labels": {"team": "a"}}}
        >>> patch_object(api, RAYCLUSTERS, "doc-patch", patch, "default")["metadata"]["labels"]["team"]
        'a'
    """
    fn, args = _endpoint(api, kind, namespace, "patch", "_status" if status else "")
    ctx: dict[str, Any] = {"verb": "patch", "resource": kind.key, "namespace": namespace, "name": name}
    opts: dict[str, Any] = {"_content_type": "application/merge-patch+json"}
    return _normalized(kind, call(fn, *args, name, patch, server=server_of(api), **ctx, **opts))


def delete_object(
    api: ApiClient, kind: Kind, name: str, namespace: str | None = None, *, propagation: str = "Foreground"
) -> bool:
    """Delete an object; ``False`` if it was already gone (so repeating a delete is safe).

    Example:
        >>> head = {"rayStartParams": {}, "template": {"spec": {"containers": [
        ...     {"name": "ray-head", "image": "rayproject/ray:2.52.0"}]}}}
        >>> _ = create_object(api, RAYCLUSTERS, {"apiVersion": "ray.io/v1", "kind": "RayCluster",
        ...     "metadata": {"name": "doc-delete", "namespace": "default"}, "spec": {"headGroupSpec": head}})
        >>> delete_object(api, RAYCLUSTERS, "doc-delete", "default")
        True
        >>> delete_object(api, RAYCLUSTERS, "doc-delete", "default")   # gone already: safe to repeat
        False
    """
    fn, args = _endpoint(api, kind, namespace, "delete")
    ctx: dict[str, Any] = {"verb": "delete", "resource": kind.key, "namespace": namespace, "name": name}
    try:
        call(fn, *args, name, propagation_policy=propagation, server=server_of(api), **ctx)
    except NotFoundError:
        return False
    return True


def set_workload_active(api: ApiClient, namespace: str, owner_uid: str, active: bool) -> dict[str, Any]:
    """Set ``spec.active`` of the Workload of a RayCluster/RayJob: Kueue's supported stop and resume.

    ``False`` evicts it (``Evicted``/``Deactivated``) and Kueue suspends the job, releasing quota;
    ``True`` requeues it (``Requeued``/``Reactivated``). Writing ``spec.suspend`` on the RayCluster
    instead would be undone by Kueue.

    Raises:
        NotFoundError: Kueue has no Workload for this owner (not managed, or not created yet).

    Example:
        >>> set_workload_active(api, "default", "a-uid-kueue-never-saw", False)
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.NotFoundError: ...
    """
    workload = find_workload(api, namespace, owner_uid)
    if workload is None:
        raise NotFoundError(
            404,
            "NotFound",
            f"no Kueue Workload with label {JOB_UID_LABEL}={owner_uid} in namespace {namespace!r}",
        )
    name = str((workload.get("metadata") or {}).get("name"))
    return patch_object(api, kueue_kind(api, "workloads"), name, {"spec": {"active": active}}, namespace)


def get_raycluster(api: ApiClient, namespace: str, name: str) -> dict[str, Any]:
    """GET a RayCluster (``ray.io/v1``)."""
    return get_object(api, RAYCLUSTERS, name, namespace)


def fetch_raycluster(api: ApiClient, namespace: str, name: str) -> dict[str, Any]:
    """GET a RayCluster; a missing one is a :class:`~rayqueue_sdk.errors.ClusterNotFoundError` that lists
    the RayClusters of the namespace (one more LIST, only on that error path).

    Example:
        >>> head = {"rayStartParams": {}, "template": {"spec": {"containers": [
        ...     {"name": "ray-head", "image": "rayproject/ray:2.52.0"}]}}}
        >>> _ = create_object(api, RAYCLUSTERS, {"apiVersion": "ray.io/v1", "kind": "RayCluster",
        ...     "metadata": {"name": "doc-fetch", "namespace": "default"}, "spec": {"headGroupSpec": head}})
        >>> fetch_raycluster(api, "default", "doc-fetch")["kind"]
        'RayCluster'
        >>> fetch_raycluster(api, "default", "doc-fetchh")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ClusterNotFoundError: ...doc-fetch...
    """
    try:
        return get_raycluster(api, namespace, name)
    except NotFoundError:
        try:
            available = [
                str((o.get("metadata") or {}).get("name") or "") for o in list_rayclusters(api, namespace)
            ]
        except RayQueueError:
            available = []
        raise ClusterNotFoundError(name, available, namespace=namespace) from None


def list_rayclusters(
    api: ApiClient, namespace: str | None, label_selector: str | None = None
) -> list[dict[str, Any]]:
    """LIST RayClusters in ``namespace`` (all namespaces when ``None``)."""
    return list_objects(api, RAYCLUSTERS, namespace, label_selector=label_selector)[0]


def get_rayjob(api: ApiClient, namespace: str, name: str) -> dict[str, Any]:
    """GET a RayJob (``ray.io/v1``)."""
    return get_object(api, RAYJOBS, name, namespace)


def list_workloads(
    api: ApiClient, namespace: str | None, label_selector: str | None = None
) -> list[dict[str, Any]]:
    """LIST Kueue Workloads (normalised to ``v1beta2`` field names)."""
    return list_objects(api, kueue_kind(api, "workloads"), namespace, label_selector=label_selector)[0]


def pick_workload(workloads: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The Workload that stands for a job among those carrying its ``job-uid`` label.

    Kueue may briefly keep a replaced Workload (or several slices): prefer one not being deleted and
    not ``Finished``, then the newest. This only chooses which object is current (as a read would);
    what the Workload's conditions *mean* is the admission machine's business
    (:mod:`rayqueue_sdk.admission`), which the kube layer does not import.

    Example:
        >>> old = {"metadata": {"name": "a", "creationTimestamp": "2026-01-01T00:00:00Z",
        ...                     "deletionTimestamp": "2026-01-01T00:01:00Z"}}
        >>> new = {"metadata": {"name": "b", "creationTimestamp": "2026-01-01T00:00:30Z"}}
        >>> pick_workload([old, new])["metadata"]["name"]
        'b'
    """
    if not workloads:
        return None

    def rank(w: dict[str, Any]) -> tuple[int, int, str, str]:
        meta = w.get("metadata") or {}
        conditions = (w.get("status") or {}).get("conditions") or []
        finished = any(c.get("type") == "Finished" and c.get("status") == "True" for c in conditions)
        return (
            0 if meta.get("deletionTimestamp") else 1,
            0 if finished else 1,
            str(meta.get("creationTimestamp") or ""),
            str(meta.get("name") or ""),
        )

    return max(workloads, key=rank)


def find_workload(api: ApiClient, namespace: str, owner_uid: str) -> dict[str, Any] | None:
    """The Kueue Workload of a RayCluster/RayJob, by label ``kueue.x-k8s.io/job-uid=<owner uid>``.

    Returns ``None`` when Kueue has not created one (yet), or does not manage the owner.
    """
    return pick_workload(list_workloads(api, namespace, f"{JOB_UID_LABEL}={owner_uid}"))


def list_local_queue_objects(api: ApiClient, namespace: str | None = None) -> list[dict[str, Any]]:
    """LIST LocalQueues (``namespace=None``: every namespace the identity may list)."""
    return list_objects(api, kueue_kind(api, "localqueues"), namespace)[0]


def list_priority_class_objects(api: ApiClient) -> list[dict[str, Any]]:
    """LIST WorkloadPriorityClasses (cluster-scoped)."""
    return list_objects(api, kueue_kind(api, "workloadpriorityclasses", namespaced=False))[0]


def pending_workloads(
    api: ApiClient,
    namespace: str,
    local_queue: str,
    *,
    policy: RetryPolicy | None = None,
    deadline: float | None = None,
) -> tuple[dict[str, Any], str]:
    """GET the visibility API's ``PendingWorkloadsSummary`` of a LocalQueue.

    Tries ``visibility.kueue.x-k8s.io/v1beta2`` then ``v1beta1`` (both still registered in Kueue
    0.19). Returns ``(summary, version)``.

    Raises:
        NotFoundError: neither version is served (the aggregated API is absent); remembered for
            a minute per client, so callers do not ask on every read.
        ForbiddenError: the identity may not read ``localqueues/pendingworkloads``.
    """
    cache = cache_for(api)
    absent_until = cache.get("visibility_absent_until", 0.0)
    if time.monotonic() < absent_until:
        raise NotFoundError(404, "NotFound", "the Kueue visibility API is not served (cached answer)")
    versions = [cache["visibility_version"]] if "visibility_version" in cache else ["v1beta2", "v1beta1"]
    last: Exception | None = None
    for version in versions:
        path = (
            f"/apis/{_VISIBILITY_GROUP}/{version}/namespaces/{namespace}"
            f"/localqueues/{local_queue}/pendingworkloads"
        )
        try:
            summary = get_path(
                api, path, policy=policy or _VISIBILITY_POLICY, deadline=deadline, request_timeout=(3.0, 5.0)
            )
        except NotFoundError as err:
            last = err
            if _served(api, version):
                cache["visibility_version"] = version
                return {"items": []}, version  # the API is there; this LocalQueue is not: nothing pending
            continue
        cache["visibility_version"] = version
        return summary, version
    cache["visibility_absent_until"] = time.monotonic() + _VISIBILITY_ABSENT_TTL
    assert last is not None
    raise last


def _served(api: ApiClient, version: str) -> bool:
    """Whether ``visibility.kueue.x-k8s.io/<version>`` is served (discovery, cached per client)."""
    cache = cache_for(api)
    key = f"visibility_served_{version}"
    if key not in cache:
        try:
            get_path(api, f"/apis/{_VISIBILITY_GROUP}/{version}", policy=_VISIBILITY_POLICY)
            cache[key] = True
        except (NotFoundError, ForbiddenError):
            cache[key] = False
    return bool(cache[key])
