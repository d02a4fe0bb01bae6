"""The reads that take more than one request or a choice among answers, over a
:class:`~rayqueue_sdk.kube.session.KubeSession`: a RayCluster that may be misnamed, the Kueue Workload of
an owner, Kueue's stop/resume switch, the visibility API's pending workloads, and a LIST of an optional
fact that may be forbidden or not served (:func:`list_or_none`).

Plain reads and writes are the session's own verbs (``session.get(RAYCLUSTERS, name=...)``).
What a Workload's conditions *mean* is decided above the kube layer (:mod:`rayqueue_sdk.admission`).

Example:
    >>> old = {"metadata": {"name": "a", "creationTimestamp": "2026-01-01T00:00:00Z",
    ...                     "deletionTimestamp": "2026-01-01T00:01:00Z"}}
    >>> new = {"metadata": {"name": "b", "creationTimestamp": "2026-01-01T00:00:30Z"}}
    >>> pick_workload([old, new])["metadata"]["name"]
    'b'
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from rayqueue_sdk.errors import ClusterNotFoundError, ForbiddenError, NotFoundError, RayQueueError
from rayqueue_sdk.kube.kinds import RAYCLUSTERS, Kind
from rayqueue_sdk.kube.retry import RetryPolicy
from rayqueue_sdk.kube.session import KubeSession, Objects
from rayqueue_sdk.manifests.labels import JOB_UID_LABEL
from rayqueue_sdk.manifests.meta import meta_of, name_of

__all__ = [
    "fetch_raycluster",
    "find_workload",
    "find_workloads",
    "list_or_none",
    "pending_workloads",
    "pick_workload",
    "set_workload_active",
]

log = logging.getLogger(__name__)

_VISIBILITY_GROUP = "visibility.kueue.x-k8s.io"
_VISIBILITY_POLICY = RetryPolicy(attempts=2, budget=5.0)
#: How long "the visibility API is not served" is believed before asking again (seconds).
_VISIBILITY_ABSENT_TTL = 60.0


def fetch_raycluster(session: KubeSession, *, name: str, namespace: str | None = None) -> dict[str, Any]:
    """GET a RayCluster; a missing one is a :class:`~rayqueue_sdk.errors.ClusterNotFoundError` that lists
    the RayClusters of the namespace (one more LIST, only on that error path).

    Example:
        >>> head = {"rayStartParams": {}, "template": {"spec": {"containers": [
        ...     {"name": "ray-head", "image": "rayproject/ray:2.52.0"}]}}}
        >>> _ = session.create(RAYCLUSTERS, {"apiVersion": "ray.io/v1", "kind": "RayCluster",
        ...     "metadata": {"name": "doc-lookup"}, "spec": {"headGroupSpec": head}})
        >>> fetch_raycluster(session, name="doc-lookup")["kind"]
        'RayCluster'
        >>> fetch_raycluster(session, name="doc-lookupp")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ClusterNotFoundError: ...doc-lookup...
    """
    ns = namespace or session.namespace
    try:
        return session.get(RAYCLUSTERS, name=name, namespace=ns)
    except NotFoundError:
        try:
            available = [name_of(o) for o in session.list(RAYCLUSTERS, namespace=ns)]
        except RayQueueError:
            available = []
        raise ClusterNotFoundError(name, available, namespace=ns) from None


def list_or_none(
    session: KubeSession,
    kind: Kind,
    *,
    namespace: str | None = None,
    label_selector: str | None = None,
    field_selector: str | None = None,
    refused: Callable[[ForbiddenError | NotFoundError], None] | None = None,
) -> Objects | None:
    """LIST ``kind`` in ``namespace`` (the session's by default), or ``None`` where the identity may not
    (403) or the server does not serve the kind (404): the read of a fact that is optional. ``refused``,
    when given, hears why (to log or word it); any other failure raises.

    Example:
        >>> list_or_none(session, RAYCLUSTERS, label_selector="no-such=label")
        []
        >>> list_or_none(session, Kind("no.such.io", "v1", "things")) is None
        True
    """
    try:
        return session.list(
            kind, namespace=namespace, label_selector=label_selector, field_selector=field_selector
        )
    except (ForbiddenError, NotFoundError) as err:
        log.debug("cannot list %s in %s: %s", kind.key, namespace or session.namespace, err)
        if refused is not None:
            refused(err)
        return None


def pick_workload(workloads: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The Workload that stands for a job among those carrying its ``job-uid`` label.

    Kueue may briefly keep a replaced Workload (or several slices): prefer one not being deleted and
    not ``Finished``, then one holding quota (an elastic job's scale-up slice waits beside the admitted
    one), then the newest. This only chooses which object is current (as a read would).

    Example:
        >>> pick_workload([]) is None
        True
    """
    if not workloads:
        return None

    def rank(w: dict[str, Any]) -> tuple[int, int, int, str, str]:
        meta = meta_of(w)
        conditions = (w.get("status") or {}).get("conditions") or []
        finished = any(c.get("type") == "Finished" and c.get("status") == "True" for c in conditions)
        reserved = any(c.get("type") == "QuotaReserved" and c.get("status") == "True" for c in conditions)
        return (
            0 if meta.get("deletionTimestamp") else 1,
            0 if finished else 1,
            1 if reserved else 0,  # an elastic job's admitted slice, not its scale-up waiting for quota
            str(meta.get("creationTimestamp") or ""),
            str(meta.get("name") or ""),
        )

    return max(workloads, key=rank)


def find_workloads(
    session: KubeSession, *, owner_uid: str, namespace: str | None = None
) -> list[dict[str, Any]]:
    """Every Kueue Workload of a RayCluster/RayJob, by label ``kueue.x-k8s.io/job-uid=<owner uid>`` (one
    LIST; :func:`pick_workload` picks the one that speaks for it).

    Example:
        >>> find_workloads(session, owner_uid="a-uid-kueue-never-saw")
        []
    """
    return list(
        session.list(
            session.kueue_kind("workloads"),
            namespace=namespace,
            label_selector=f"{JOB_UID_LABEL}={owner_uid}",
        )
    )


def find_workload(
    session: KubeSession, *, owner_uid: str, namespace: str | None = None
) -> dict[str, Any] | None:
    """The Kueue Workload of a RayCluster/RayJob, by label ``kueue.x-k8s.io/job-uid=<owner uid>``.

    Returns ``None`` when Kueue has not created one (yet), or does not manage the owner.

    Example:
        >>> find_workload(session, owner_uid="a-uid-kueue-never-saw") is None
        True
    """
    return pick_workload(find_workloads(session, owner_uid=owner_uid, namespace=namespace))


def set_workload_active(
    session: KubeSession,
    *,
    owner_uid: str,
    active: bool,
    namespace: str | None = None,
    workload: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Set ``spec.active`` of the Workload of a RayCluster/RayJob: Kueue's supported stop and resume.

    ``False`` evicts it (``Evicted``/``Deactivated``) and Kueue suspends the job, releasing quota;
    ``True`` requeues it (``Requeued``/``Reactivated``). Writing ``spec.suspend`` on the RayCluster
    instead would be undone by Kueue. ``workload``: the Workload when the caller has just found it (then
    it is not looked up again).

    Raises:
        NotFoundError: Kueue has no Workload for this owner (not managed, or not created yet).

    Example:
        >>> set_workload_active(session, owner_uid="a-uid-kueue-never-saw", active=False)
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.NotFoundError: ...
    """
    ns = namespace or session.namespace
    if workload is None:
        workload = find_workload(session, owner_uid=owner_uid, namespace=ns)
    if workload is None:
        raise NotFoundError(
            404, "NotFound", f"no Kueue Workload with label {JOB_UID_LABEL}={owner_uid} in namespace {ns!r}"
        )
    name = name_of(workload)
    return session.patch(
        session.kueue_kind("workloads"), name=name, patch={"spec": {"active": active}}, namespace=ns
    )


def pending_workloads(
    session: KubeSession,
    *,
    local_queue: str,
    namespace: str | None = None,
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

    Example:
        >>> summary, version = pending_workloads(session, local_queue="no-such-queue")
        >>> summary["items"], version
        ([], 'v1beta2')
    """
    ns = namespace or session.namespace
    cache = session.cache
    if time.monotonic() < cache.get("visibility_absent_until", 0.0):
        raise NotFoundError(404, "NotFound", "the Kueue visibility API is not served (cached answer)")
    versions = [cache["visibility_version"]] if "visibility_version" in cache else ["v1beta2", "v1beta1"]
    last: NotFoundError | None = None
    for version in versions:
        path = (
            f"/apis/{_VISIBILITY_GROUP}/{version}/namespaces/{ns}/localqueues/{local_queue}/pendingworkloads"
        )
        try:
            summary = session.get_path(
                path, policy=policy or _VISIBILITY_POLICY, deadline=deadline, request_timeout=(3.0, 5.0)
            )
        except NotFoundError as err:
            last = err
            if session.served(f"{_VISIBILITY_GROUP}/{version}", policy=_VISIBILITY_POLICY):
                cache["visibility_version"] = version
                return {"items": []}, version  # the API is there; this LocalQueue is not: nothing pending
            continue
        cache["visibility_version"] = version
        return summary, version
    cache["visibility_absent_until"] = time.monotonic() + _VISIBILITY_ABSENT_TTL
    assert last is not None
    raise last
