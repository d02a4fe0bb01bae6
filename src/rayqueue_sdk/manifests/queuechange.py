"""A re-apply may not move an admitted RayCluster to another LocalQueue: refuse it before sending.

Kueue v0.19.2 (pkg/controller/jobframework/validation.go, ``validateUpdateForQueueName``, which the
RayCluster webhook runs on every update) treats the ``kueue.x-k8s.io/queue-name`` label as immutable while
the job is not suspended, that is while its Workload is admitted and its pods run: the API server answers
403 ``metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: ...: field is immutable``, which reads
like a missing permission. :func:`check_queue_unchanged` says it first, and what to do instead.

Example:
    >>> running = {"metadata": {"name": "ws", "labels": {"kueue.x-k8s.io/queue-name": "team-a"}},
    ...            "spec": {"suspend": False}}
    >>> check_queue_unchanged(running, "team-a")
    >>> check_queue_unchanged(running, "team-b")
    Traceback (most recent call last):
    ...
    rayqueue_sdk.errors.ConfigError: local_queue: the queue cannot change while the cluster is admitted ...
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.manifests.labels import QUEUE_LABEL

__all__ = ["check_queue_unchanged"]


def check_queue_unchanged(existing: Mapping[str, Any] | None, new_queue: str | None) -> None:
    """Refuse a queue change (or removal, or addition) on a RayCluster that is running (not suspended).

    A suspended cluster (queued, evicted or deactivated) may change queue: Kueue moves its Workload.
    """
    if existing is None:
        return
    labels = (existing.get("metadata") or {}).get("labels") or {}
    old_queue = labels.get(QUEUE_LABEL) or None
    new_queue = new_queue or None
    suspended = bool((existing.get("spec") or {}).get("suspend"))
    if suspended or old_queue == new_queue or (old_queue is None and new_queue is None):
        return
    name = (existing.get("metadata") or {}).get("name", "")
    if old_queue is None:
        problem = "a running cluster that no queue manages cannot be put in a queue"
        allowed = f"local_queue=None while it runs; or down() it, then apply() to queue it in {new_queue!r}"
    else:
        problem = (
            f"the queue cannot change while the cluster is admitted (it runs from {old_queue!r}; Kueue keeps "
            "the queue-name label immutable until the RayCluster is suspended)"
        )
        target = f"in {new_queue!r}" if new_queue else "without a queue"
        allowed = (
            f"local_queue={old_queue!r}; or cluster.down() then apply() to run {name!r} {target} "
            "(it is queued again there)"
        )
    raise ConfigError("local_queue", new_queue, allowed, problem=problem)
