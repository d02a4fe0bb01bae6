"""Kueue queues and priorities as a data scientist sees them: which queues exist, which is the
default, whether a queue or priority class is real, and where a workload stands in its queue.

Example:
    >>> from rayqueue_sdk import list_local_queues
    >>> for q in list_local_queues("default", client=session):   # none in the example's namespace
    ...     print(q.name, q.cluster_queue, q.pending, q.admitted, q.default)
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from rayqueue_sdk.errors import (
    ApiError,
    AuthenticationError,
    ForbiddenError,
    NotFoundError,
    PriorityClassNotFoundError,
    QueueNotFoundError,
)
from rayqueue_sdk.kube.lookups import pending_workloads
from rayqueue_sdk.kube.session import KubeSession, SessionLike
from rayqueue_sdk.manifests.labels import DEFAULT_QUEUE_ANNOTATION
from rayqueue_sdk.manifests.meta import condition_of, meta_of, name_of

__all__ = [
    "DEFAULT_QUEUE_ANNOTATION",
    "LocalQueueInfo",
    "check_priority_class",
    "check_queue",
    "default_queue_of",
    "list_local_queues",
    "list_priority_class_choices",
    "priority_class_choices",
    "queue_info",
    "queue_not_found",
    "queue_position",
    "queue_positions",
    "resolve_default_queue",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LocalQueueInfo:
    """One LocalQueue, summarised.

    Attributes:
        name, namespace: the LocalQueue.
        cluster_queue: ``spec.clusterQueue``.
        pending, reserving, admitted: workload counts from ``status``.
        flavors: the ResourceFlavors the queue uses (from ``status.flavorsUsage``/``flavorsReservation``).
        default: the queue Kueue (name ``default``) or the peer's annotation makes the default.
        active: the ``Active`` condition (``None`` when not reported).

    Example:
        >>> q = LocalQueueInfo("default", "ds", "cq-dev", 1, 0, 2, ("default-flavor",), True, True)
        >>> q.to_dict()["cluster_queue"]
        'cq-dev'
    """

    name: str
    namespace: str
    cluster_queue: str | None
    pending: int
    reserving: int
    admitted: int
    flavors: tuple[str, ...]
    default: bool
    active: bool | None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        out = asdict(self)
        out["flavors"] = list(self.flavors)
        return out


def queue_info(obj: Mapping[str, Any]) -> LocalQueueInfo:
    """The :class:`LocalQueueInfo` of a LocalQueue dict (pure).

    Example:
        >>> q = queue_info({"metadata": {"name": "default"}, "spec": {"clusterQueue": "cq"}})
        >>> q.cluster_queue, q.default
        ('cq', True)
    """
    meta = meta_of(obj)
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    flavors: list[str] = []
    for key in ("flavorsUsage", "flavorsReservation", "flavors"):
        for entry in status.get(key) or []:
            name = entry.get("name") if isinstance(entry, Mapping) else None
            if name and name not in flavors:
                flavors.append(str(name))
    annotations = meta.get("annotations") or {}
    active_cond = condition_of(obj, "Active")
    active = None if active_cond is None else active_cond.get("status") == "True"
    return LocalQueueInfo(
        name=str(meta.get("name") or ""),
        namespace=str(meta.get("namespace") or ""),
        cluster_queue=spec.get("clusterQueue"),
        pending=int(status.get("pendingWorkloads") or 0),
        reserving=int(status.get("reservingWorkloads") or 0),
        admitted=int(status.get("admittedWorkloads") or 0),
        flavors=tuple(flavors),
        default=meta.get("name") == "default"
        or str(annotations.get(DEFAULT_QUEUE_ANNOTATION)).lower() == "true",
        active=active,
    )


def queue_not_found(
    name: str, namespace: str, available: list[str], hint: str | None = None
) -> QueueNotFoundError:
    """The :class:`QueueNotFoundError` for a missing LocalQueue ``name`` (pure): it lists ``available`` and,
    when there is a queue named ``default``, says that omitting ``local_queue`` would use it.

    Example:
        >>> str(queue_not_found("gpu", "ds", ["default", "team-q"])).endswith(
        ...     "Omit local_queue to use the namespace's default queue 'default'."
        ...     " (see docs/troubleshooting.md#queuenotfounderror)")
        True
    """
    if "default" in available and not hint:
        hint = "Omit local_queue to use the namespace's default queue 'default'."
    return QueueNotFoundError(name, available, namespace=namespace, hint=hint)


def default_queue_of(namespace: str, queues: list[LocalQueueInfo]) -> str | None:
    """The default among ``queues`` (pure): one named ``default``, else the (first) annotated one.

    Example:
        >>> default_queue_of("ds", [queue_info({"metadata": {"name": "team-q"}}),
        ...                         queue_info({"metadata": {"name": "default"}})])
        'default'
    """
    named = [q.name for q in queues if q.name == "default"]
    if named:
        return named[0]
    annotated = sorted(q.name for q in queues if q.default)
    if len(annotated) > 1:
        log.warning(
            "several LocalQueues in %r are annotated as default: %s; using %r",
            namespace,
            annotated,
            annotated[0],
        )
    return annotated[0] if annotated else None


def priority_class_choices(objs: list[dict[str, Any]]) -> list[str]:
    """How a :class:`PriorityClassNotFoundError` lists WorkloadPriorityClasses: ``name (value)`` (pure).

    Example:
        >>> priority_class_choices([{"metadata": {"name": "rd"}, "value": 100}, {"metadata": {"name": "x"}}])
        ['rd (100)', 'x']
    """
    return [
        f"{(o.get('metadata') or {}).get('name')} ({o.get('value')})"
        if o.get("value") is not None
        else name_of(o)
        for o in objs
    ]


def list_priority_class_choices(session: KubeSession) -> tuple[list[str], str | None]:
    """The WorkloadPriorityClasses for an error message, and a hint when they cannot be listed."""
    try:
        kind = session.kueue_kind("workloadpriorityclasses", namespaced=False)
        return priority_class_choices(session.list(kind)), None
    except ForbiddenError:
        return [], "You may not list WorkloadPriorityClasses; ask your admin which to use."
    except NotFoundError:
        return [], "This cluster does not serve Kueue's WorkloadPriorityClass API."


def list_local_queues(namespace: str | None = None, client: SessionLike = None) -> list[LocalQueueInfo]:
    """The LocalQueues of a namespace (default: the namespace of the current credentials).

    Each has its ClusterQueue, pending/reserving/admitted counts, flavors and whether it is the
    default (Kueue's rule: a LocalQueue named ``default``; the peer's annotation
    ``kueue.x-k8s.io/default-queue: "true"`` is honoured too).

    Raises:
        ForbiddenError: the identity may not list LocalQueues there.
        NotFoundError: Kueue's LocalQueue API is not served (Kueue not installed).

    Example:
        >>> from rayqueue_sdk import list_local_queues
        >>> [q.name for q in list_local_queues("default", client=session) if q.default]
        []
    """
    session = KubeSession.of(client, namespace=namespace)
    try:
        objects = session.list(session.kueue_kind("localqueues"))
    except NotFoundError as err:  # a LIST is 404 only when the resource type is not served
        raise NotFoundError(
            404,
            "NotFound",
            f"this cluster does not serve Kueue's LocalQueue API (is Kueue installed?): {err.message}",
        ) from None
    return sorted((queue_info(o) for o in objects), key=lambda q: (not q.default, q.name))


def _usable_queue_names(session: KubeSession, *, namespace: str) -> tuple[list[str], str | None]:
    """Names of the queues in ``namespace`` and a hint when they cannot be listed."""
    try:
        return [q.name for q in list_local_queues(namespace, session)], None
    except ForbiddenError:
        return [], "You may not list LocalQueues in this namespace; ask your admin which queue to use."
    except NotFoundError:
        return [], "This cluster does not serve Kueue's LocalQueue API (is Kueue installed?)."


def check_queue(session: KubeSession, *, name: str, namespace: str | None = None) -> LocalQueueInfo | None:
    """Check that LocalQueue ``name`` exists in ``namespace`` (the session's by default).

    Returns its :class:`LocalQueueInfo`, or ``None`` when the identity may not read LocalQueues (the
    check is then left to Kueue, and a warning is logged: the label is never dropped).

    Raises:
        QueueNotFoundError: it does not exist; the error lists the queues that do.

    Example:
        >>> check_queue(session, name="gpu-queue", namespace="default")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.QueueNotFoundError: 404 NotFound: LocalQueue 'gpu-queue' does not exist in \
namespace 'default'; available: none ...
    """
    namespace = namespace or session.namespace
    try:
        obj = session.get(session.kueue_kind("localqueues"), name=name, namespace=namespace)
    except ForbiddenError as err:
        log.warning(
            "cannot check LocalQueue %r in %r (%s); leaving the check to Kueue", name, namespace, err.message
        )
        return None
    except NotFoundError:
        available, hint = _usable_queue_names(session, namespace=namespace)
        raise queue_not_found(name, namespace, available, hint) from None
    return queue_info(obj)


def check_priority_class(session: KubeSession, *, name: str) -> dict[str, Any] | None:
    """Check that WorkloadPriorityClass ``name`` exists; returns it (``None`` if it cannot be read).

    Raises:
        PriorityClassNotFoundError: it does not exist; the error lists the classes that do.

    Example:
        >>> check_priority_class(session, name="urgent")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.PriorityClassNotFoundError: 404 NotFound: WorkloadPriorityClass 'urgent' \
does not exist; available: none ...
    """
    try:
        return session.get(session.kueue_kind("workloadpriorityclasses", namespaced=False), name=name)
    except ForbiddenError as err:
        log.warning(
            "cannot check WorkloadPriorityClass %r (%s); leaving the check to Kueue", name, err.message
        )
        return None
    except NotFoundError:
        available, hint = list_priority_class_choices(session)
        raise PriorityClassNotFoundError(name, available, hint=hint) from None


def resolve_default_queue(session: KubeSession, *, namespace: str | None = None) -> str | None:
    """The default LocalQueue of ``namespace`` (the session's by default), or ``None``.

    Kueue's rule first (a LocalQueue literally named ``default``, which Kueue's webhook fills in by
    itself), then the peer's annotation ``kueue.x-k8s.io/default-queue: "true"``. ``None`` when
    there is none, or LocalQueues cannot be listed (403, or Kueue absent).

    Example:
        >>> resolve_default_queue(session, namespace="default") is None   # no LocalQueue there
        True
    """
    namespace = namespace or session.namespace
    try:
        queues = list_local_queues(namespace, session)
    except (ForbiddenError, NotFoundError) as err:
        log.debug("no default LocalQueue lookup in %r: %s", namespace, err)
        return None
    return default_queue_of(namespace, queues)


def queue_position(
    session: KubeSession,
    *,
    local_queue: str,
    workload_name: str,
    namespace: str | None = None,
    deadline: float | None = None,
) -> tuple[int | None, str | None]:
    """The 0-based position of a pending Workload in its LocalQueue, via Kueue's visibility API.

    Returns ``(position, None)``; ``(None, None)`` when the workload is not pending (admitted, not
    yet queued) or the API answered with a transient error; ``(None, reason)`` when the position
    is unavailable for good: the visibility API is absent (404) or forbidden (403). That is never
    an error: the caller says it once and carries on.

    Raises:
        AuthenticationError: the credentials expired.

    Example:
        >>> queue_position(session, local_queue="team-q", workload_name="raycluster-ws-4e803")  # not pending
        (None, None)
    """
    positions = queue_positions(
        session,
        local_queue=local_queue,
        workload_names=[workload_name],
        namespace=namespace,
        deadline=deadline,
    )
    return positions[workload_name]


def queue_positions(
    session: KubeSession,
    *,
    local_queue: str,
    workload_names: list[str],
    namespace: str | None = None,
    deadline: float | None = None,
) -> dict[str, tuple[int | None, str | None]]:
    """:func:`queue_position` for several Workloads of one LocalQueue, in one request.

    Example:
        >>> queue_positions(session, local_queue="team-q", workload_names=["rc-a-1", "rc-b-2"])
        {'rc-a-1': (None, None), 'rc-b-2': (None, None)}
    """
    namespace = namespace or session.namespace
    unknown: tuple[int | None, str | None] = (None, None)
    try:
        summary, _version = pending_workloads(
            session, local_queue=local_queue, namespace=namespace, deadline=deadline
        )
    except NotFoundError:
        why = "Kueue's visibility API (visibility.kueue.x-k8s.io) is not served by this cluster"
        return dict.fromkeys(workload_names, (None, why))
    except ForbiddenError as err:
        why = f"not allowed to read the queue's pending workloads ({err.verb or 'get'} {err.resource})"
        return dict.fromkeys(workload_names, (None, why))
    except AuthenticationError:
        raise
    except (ApiError, ConnectionError) as err:  # transient: try again later
        log.debug("queue positions in %s/%s unavailable this time: %s", namespace, local_queue, err)
        return dict.fromkeys(workload_names, unknown)
    found: dict[str, tuple[int | None, str | None]] = {}
    for item in summary.get("items") or []:
        name = meta_of(item).get("name")
        pos = item.get("positionInLocalQueue")
        if name in workload_names and pos is not None:
            found[name] = (int(pos), None)
    return {name: found.get(name, unknown) for name in workload_names}
