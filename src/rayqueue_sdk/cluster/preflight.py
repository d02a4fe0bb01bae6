"""The preflight of ``Cluster.apply()`` and ``Cluster.up()``: what they must know, fetched once, then decided.

:func:`fetch_facts` asks the API server for everything in at most four independent requests, sent
together (one round trip; plus Kueue's version discovery, once per client):

- one LIST of the namespace's LocalQueues: it checks ``local_queue``, lists the queues for the error,
  and finds the default queue when none is given;
- one GET of the WorkloadPriorityClass, when one is asked for (a LIST follows only to word a 404);
- one GET of the RayCluster, when ``apply()`` must refuse to take over one the SDK did not make;
- one GET of the Secret holding the Redis password (GCS fault tolerance, ``redis_password_secret``): a
  missing Secret or key would keep the head from starting (the kubelet's ``CreateContainerConfigError``).

It returns :class:`Facts`, plain data. :func:`decide` is pure: from the manifest and the facts it returns
the manifest to send (namespace set, default queue filled in) or raises the error the user reads.

Example:
    >>> from rayqueue_sdk.queues.local_queues import queue_info
    >>> facts = Facts("ds", queues=(queue_info({"metadata": {"name": "default", "namespace": "ds"}}),))
    >>> head = {"template": {"spec": {"containers": [{"name": "ray-head"}]}}}
    >>> manifest = {"metadata": {"name": "ws", "labels": {}}, "spec": {"headGroupSpec": head}}
    >>> decide(manifest, facts)["metadata"]
    {'name': 'ws', 'labels': {'kueue.x-k8s.io/queue-name': 'default'}, 'namespace': 'ds'}
    >>> decide(manifest, facts, local_queue="gpu")
    Traceback (most recent call last):
    ...
    rayqueue_sdk.errors.QueueNotFoundError: 404 NotFound: LocalQueue 'gpu' does not exist in namespace 'ds'; \
available: default. Omit local_queue to use the namespace's default queue 'default'. \
(see docs/troubleshooting.md#queuenotfounderror)
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from rayqueue_sdk.errors import (
    ApiError,
    ConfigError,
    ConflictError,
    ForbiddenError,
    NotFoundError,
    PriorityClassNotFoundError,
)
from rayqueue_sdk.kube.kinds import KUEUE_GROUP, RAYCLUSTERS, Kind
from rayqueue_sdk.kube.lookups import list_or_none
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.manifests.labels import MANAGED_BY_LABEL, MANAGED_BY_VALUE, QUEUE_LABEL
from rayqueue_sdk.manifests.meta import meta_of, name_of
from rayqueue_sdk.manifests.podsetlimit import SMALLEST_WORKER_GROUP_LIMIT, check_served_pod_sets
from rayqueue_sdk.manifests.queuechange import check_queue_unchanged
from rayqueue_sdk.manifests.raycluster import mark_elastic_if_autoscaling
from rayqueue_sdk.manifests.rules import check_raycluster
from rayqueue_sdk.queues.local_queues import (
    LocalQueueInfo,
    default_queue_of,
    list_priority_class_choices,
    queue_info,
    queue_not_found,
)

__all__ = ["Facts", "check_ours", "decide", "fetch_facts"]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Why the LocalQueues could not be listed: the hint of a QueueNotFoundError.
#: Secrets (the Redis password's, for GCS fault tolerance).
_SECRETS = Kind("", "v1", "secrets")
_QUEUES_ABSENT = "This cluster does not serve Kueue's LocalQueue API (is Kueue installed?)."


@dataclass(frozen=True)
class Facts:
    """What the API server said, as plain data: the only input of :func:`decide` besides the manifest.

    Attributes:
        namespace: where the cluster goes.
        queues: the namespace's LocalQueues, default first (when they could be listed).
        queue_objects: the namespace's LocalQueues as listed (raw), for a queued cluster's estimate.
        queue_listing: ``"listed"``, ``"forbidden"`` (403: the check is left to Kueue) or ``"absent"``
            (Kueue's LocalQueue API is not served).
        priority_class_missing: the asked-for WorkloadPriorityClass does not exist.
        priority_class_choices, priority_class_hint: what exists instead (for the error), or why unknown.
        existing: the RayCluster of that name as stored, when it was read and exists.
        max_pod_sets: the pod sets the served Kueue's Workload holds (read only for a cluster of more
            worker groups than every Kueue release takes; ``None``: not read or not readable).
        secret_problem: what is wrong with the Redis password Secret (missing, or without the key).

    Example:
        >>> Facts("ds").queue_listing
        'listed'
    """

    namespace: str
    queues: tuple[LocalQueueInfo, ...] = ()
    queue_objects: tuple[dict[str, Any], ...] = ()
    queue_listing: str = "listed"
    priority_class_missing: bool = False
    priority_class_choices: tuple[str, ...] = ()
    priority_class_hint: str | None = None
    existing: Mapping[str, Any] | None = None
    max_pod_sets: int | None = None
    secret_problem: str | None = None


def check_ours(obj: Mapping[str, Any], how: str) -> None:
    """Raise :class:`ConflictError` unless the SDK made ``obj`` (label ``app.kubernetes.io/managed-by``).

    Example:
        >>> check_ours({"metadata": {"labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE}}}, "down(force=True)")
        >>> check_ours({"metadata": {"name": "x", "namespace": "ds"}}, "down(force=True) would delete it")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConflictError: 409 Conflict: RayCluster ds/x was not made by rayqueue_sdk \
(no label app.kubernetes.io/managed-by=rayqueue-sdk); leaving it alone (down(force=True) would delete it) \
(see docs/troubleshooting.md#conflicterror)
    """
    meta = meta_of(obj)
    if (meta.get("labels") or {}).get(MANAGED_BY_LABEL) != MANAGED_BY_VALUE:
        raise ConflictError(
            409,
            "Conflict",
            f"RayCluster {meta.get('namespace')}/{meta.get('name')} was not made by rayqueue_sdk (no label "
            f"{MANAGED_BY_LABEL}={MANAGED_BY_VALUE}); leaving it alone ({how})",
        )


def decide(
    manifest: Mapping[str, Any],
    facts: Facts,
    *,
    local_queue: str | None = None,
    priority_class: str | None = None,
    refuse_foreign: str | None = None,
    elastic_by_default: bool = False,
) -> dict[str, Any]:
    """The manifest to send, or the error the user reads (pure; ``manifest`` is not changed).

    Checks in this order: the LocalQueue (or fills in the default one, then re-checks the rules that
    depend on a queue), the priority class, with ``refuse_foreign`` (how to override, for the
    message) that an existing RayCluster of that name was made by the SDK, and that a running one keeps
    its queue (:func:`~rayqueue_sdk.manifests.queuechange.check_queue_unchanged`). With
    ``elastic_by_default`` (the user left ``elastic`` unset), an autoscaling cluster put in the default
    queue gets Kueue's elastic-job annotation, as one given a queue does.

    Raises:
        QueueNotFoundError: ``local_queue`` does not exist (lists those that do).
        PriorityClassNotFoundError: ``priority_class`` does not exist (lists those that do).
        ConfigError: e.g. autoscaling under the default queue with ``elastic=False``, or a Redis
            password Secret (``redis_password_secret``) that does not exist or lacks the key.
        ConflictError: the existing RayCluster was not made by rayqueue_sdk.
        ConfigError: the existing RayCluster runs (is admitted) from another queue than the one sent.

    Example:
        >>> decide({"metadata": {"labels": {}}}, Facts("ds", queue_listing="forbidden"), local_queue="q")
        {'metadata': {'labels': {}, 'namespace': 'ds'}}
    """
    out = copy.deepcopy(dict(manifest))
    out["metadata"]["namespace"] = facts.namespace
    names = [q.name for q in facts.queues]
    if local_queue is not None:
        if facts.queue_listing == "absent":
            raise queue_not_found(local_queue, facts.namespace, [], _QUEUES_ABSENT)
        if facts.queue_listing == "listed" and local_queue not in names:
            raise queue_not_found(local_queue, facts.namespace, names)
    elif facts.queue_listing == "listed":
        default = default_queue_of(facts.namespace, list(facts.queues))
        if default is not None:
            log.info("%s/%s: using the default LocalQueue %r", facts.namespace, _name(out), default)
            out["metadata"].setdefault("labels", {})[QUEUE_LABEL] = default
            if elastic_by_default:
                mark_elastic_if_autoscaling(out)
            check_raycluster(out)  # e.g. autoscaling under a queue with elastic=False
    if priority_class is not None and facts.priority_class_missing:
        raise PriorityClassNotFoundError(
            priority_class, list(facts.priority_class_choices), hint=facts.priority_class_hint
        )
    if facts.secret_problem is not None:
        ref = ((out.get("spec") or {}).get("gcsFaultToleranceOptions") or {}).get("redisPassword") or {}
        raise ConfigError(
            "redis_password_secret",
            (ref.get("valueFrom") or {}).get("secretKeyRef"),
            f"a Secret of namespace {facts.namespace!r} with the Redis password under that key "
            "(kubectl create secret generic <name> --from-literal=<key>=...)",
            problem=facts.secret_problem,
        )
    if refuse_foreign is not None and facts.existing is not None:
        check_ours(facts.existing, refuse_foreign)
    check_queue_unchanged(facts.existing, (out["metadata"].get("labels") or {}).get(QUEUE_LABEL))
    if (out["metadata"].get("labels") or {}).get(QUEUE_LABEL):
        groups = len((out.get("spec") or {}).get("workerGroupSpecs") or ())
        check_served_pod_sets(groups, facts.max_pod_sets, field="worker_groups", what="a RayCluster")
    return out


def fetch_facts(
    session: KubeSession,
    *,
    name: str,
    namespace: str,
    local_queue: str | None = None,
    priority_class: str | None = None,
    read_existing: bool = False,
    worker_groups: int = 0,
    password_secret: Mapping[str, str] | None = None,
) -> Facts:
    """Fetch what :func:`decide` needs, in at most three requests sent together (see the module).

    Raises:
        AuthenticationError, ConnectionFailedError, ApiError: the server failed (403 and 404 are facts).

    Example:
        >>> facts = fetch_facts(session, name="ws", namespace="default", read_existing=True)
        >>> facts.queue_listing, facts.queues, facts.existing
        ('listed', (), None)
    """
    lq_kind = session.kueue_kind("localqueues")  # discovery (cached per client) before the concurrent part
    jobs: dict[str, Callable[[], Any]] = {
        "queues": lambda: _queues(session, lq_kind, namespace=namespace, local_queue=local_queue),
    }
    if priority_class is not None:
        wpc_kind = session.kueue_kind("workloadpriorityclasses", namespaced=False)
        jobs["priority"] = lambda: _priority_class(session, wpc_kind, name=priority_class)
    if read_existing:
        jobs["existing"] = lambda: _existing(session, name=name, namespace=namespace)
    if worker_groups > SMALLEST_WORKER_GROUP_LIMIT:  # the limit depends on the Kueue release: read it
        jobs["pod_sets"] = lambda: _served_max_pod_sets(session, lq_kind.version)
    if password_secret is not None:
        jobs["secret"] = lambda: _secret_problem(session, password_secret, namespace=namespace)
    found = _together(jobs)
    queues, objects, listing = found["queues"]
    missing, choices, hint = found.get("priority", (False, [], None))
    return Facts(
        namespace=namespace,
        queues=tuple(queues),
        queue_objects=tuple(objects),
        queue_listing=listing,
        priority_class_missing=missing,
        priority_class_choices=tuple(choices),
        priority_class_hint=hint,
        existing=found.get("existing"),
        max_pod_sets=found.get("pod_sets"),
        secret_problem=found.get("secret"),
    )


def _served_max_pod_sets(session: KubeSession, version: str) -> int | None:
    """``spec.podSets`` ``maxItems`` of the served Workload schema (OpenAPI v3, readable by any
    authenticated user), or ``None`` when it cannot be read."""
    try:
        index = session.get_path("/openapi/v3")
        url = str(index["paths"][f"apis/{KUEUE_GROUP}/{version}"]["serverRelativeURL"])
        path, _, query = url.partition("?")
        doc = session.get_path(path, query=dict([query.split("=", 1)]) if "=" in query else None)
        for schema_name, schema in doc["components"]["schemas"].items():
            if schema_name.endswith(".Workload"):
                return int(schema["properties"]["spec"]["properties"]["podSets"]["maxItems"])
    except (ApiError, KeyError, TypeError, ValueError) as err:
        log.debug("cannot read the served Workload schema: %s", err)
    return None


def _together(jobs: dict[str, Callable[[], T]]) -> dict[str, T]:
    """Run independent requests at once (one round trip); errors surface in ``jobs``' order."""
    if len(jobs) == 1:
        return {key: job() for key, job in jobs.items()}
    with ThreadPoolExecutor(max_workers=len(jobs), thread_name_prefix="rayqueue-preflight") as pool:
        futures = {key: pool.submit(job) for key, job in jobs.items()}
        return {key: future.result() for key, future in futures.items()}


def _queues(
    session: KubeSession, kind: Kind, *, namespace: str, local_queue: str | None
) -> tuple[list[LocalQueueInfo], list[dict[str, Any]], str]:
    refusals: list[ForbiddenError | NotFoundError] = []
    objects = list_or_none(session, kind, namespace=namespace, refused=refusals.append)
    if objects is None:
        err = refusals[0]
        if isinstance(err, NotFoundError):  # a LIST is 404 only when the resource type is not served
            log.debug("no LocalQueue API: %s", err)
            return [], [], "absent"
        if local_queue is not None:
            log.warning(
                "cannot check LocalQueue %r in %r (%s); leaving the check to Kueue",
                local_queue,
                namespace,
                err.message,
            )
        else:
            log.debug("no default LocalQueue lookup in %r: %s", namespace, err)
        return [], [], "forbidden"
    queues = sorted((queue_info(o) for o in objects), key=lambda q: (not q.default, q.name))
    return queues, list(objects), "listed"


def _priority_class(session: KubeSession, kind: Kind, *, name: str) -> tuple[bool, list[str], str | None]:
    try:
        session.get(kind, name=name)
    except ForbiddenError as err:
        log.warning(
            "cannot check WorkloadPriorityClass %r (%s); leaving the check to Kueue", name, err.message
        )
        return False, [], None
    except NotFoundError:
        available, hint = list_priority_class_choices(session)
        return True, available, hint
    return False, [], None


def _existing(session: KubeSession, *, name: str, namespace: str) -> dict[str, Any] | None:
    try:
        return session.get(RAYCLUSTERS, name=name, namespace=namespace)
    except (NotFoundError, ForbiddenError):  # a 403 is for the write to report
        return None


def _secret_problem(session: KubeSession, ref: Mapping[str, str], *, namespace: str) -> str | None:
    """What is wrong with the Secret ``ref`` names (``None``: it has the key). Only the key's presence is
    read; the value is never kept or logged. A 403 leaves the check to the kubelet."""
    try:
        secret = session.get(_SECRETS, name=ref["name"], namespace=namespace)
    except ForbiddenError as err:
        log.warning("cannot check Secret %r (%s); leaving the check to the kubelet", ref["name"], err.message)
        return None
    except NotFoundError:
        return f"Secret {ref['name']!r} does not exist in namespace {namespace!r}"
    keys = set(secret.get("data") or {}) | set(secret.get("stringData") or {})
    if ref["key"] not in keys:
        return (
            f"Secret {ref['name']!r} has no key {ref['key']!r} (it has: {', '.join(sorted(keys)) or 'none'})"
        )
    return None


def _name(obj: Mapping[str, Any]) -> str:
    return name_of(obj)
