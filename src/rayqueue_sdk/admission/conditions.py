"""Readers of Kubernetes objects for the admission machine: status conditions, labels, RayCluster readiness.

:func:`cluster_ready` says whether a RayCluster is ready from ``HeadPodReady`` and
``RayClusterProvisioned`` (the deprecated ``status.state`` only when KubeRay publishes no conditions);
:func:`is_suspended` and :func:`worker_counts` read suspension and worker counts. The generic readers
(a condition by type, its status and text, labels) are :mod:`rayqueue_sdk.manifests.meta`'s. Pure: no I/O.

Example:
    >>> rc = {"spec": {"suspend": True, "workerGroupSpecs": [{"replicas": 2}]}}
    >>> is_suspended(rc), worker_counts(rc)
    (True, (None, 2))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rayqueue_sdk.admission.phases import Obj
from rayqueue_sdk.manifests.meta import Conditions, conditions_of, meta_of

__all__ = [
    "AUTOSCALING_CONDITION",
    "HEAD_FAILURE_REASONS",
    "UNKNOWN_REASON",
    "RayClusterReading",
    "autoscaling_not_run",
    "cluster_ready",
    "head_failure",
    "head_progress",
    "is_suspended",
    "read_raycluster",
    "worker_counts",
]

#: A head container waiting for one of these reasons will not start by itself: the kubelet backs off
#: pulling an image it could not pull, cannot parse the image name, may not pull it, cannot create or
#: run the container, or restarts one that keeps exiting [kubernetes pkg/kubelet/images/types.go
#: ErrImagePullBackOff, ErrInvalidImageName, ErrImageNeverPull; pkg/kubelet/container/sync_result.go
#: ErrCreateContainer, ErrRunContainer, ErrCrashLoopBackOff]. ``ErrImagePull`` (one failed pull) and
#: ``CreateContainerConfigError`` (often a Secret that is about to exist) are retried, so not listed.
HEAD_FAILURE_REASONS = frozenset(
    {
        "ImagePullBackOff",
        "InvalidImageName",
        "ErrImageNeverPull",
        "CreateContainerError",
        "RunContainerError",
        "CrashLoopBackOff",
    }
)


#: A RayCluster condition that a control plane which does not run KubeRay's in-tree autoscaler sets
#: ``False`` (with its reason why) while ``spec.enableInTreeAutoscaling`` is true: ``rayqueue_local`` does.
#: Upstream KubeRay has no such condition (its autoscaler runs beside the head), so it is never set there.
AUTOSCALING_CONDITION = "InTreeAutoscaling"


def autoscaling_not_run(cluster: Obj | None) -> str | None:
    """Why the RayCluster's in-tree autoscaling is not running, as the control plane wrote it, or ``None``.

    Example:
        >>> rc = {"status": {"conditions": [{"type": "InTreeAutoscaling", "status": "False",
        ...     "reason": "NotRunByLocalControlPlane", "message": "not emulated: replicas stay fixed"}]}}
        >>> autoscaling_not_run(rc), autoscaling_not_run({"status": {}})
        ('not emulated: replicas stay fixed', None)
    """
    return _autoscaling_not_run(conditions_of(cluster))


def _autoscaling_not_run(conds: Conditions) -> str | None:
    cond = conds[AUTOSCALING_CONDITION]
    if not cond.false:
        return None
    return cond.message or cond.reason or "in-tree autoscaling is not running"


def _int(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def cluster_ready(cluster: Obj) -> tuple[bool, str | None, str | None]:
    """Whether a RayCluster is ready, from its conditions first and ``status.state`` second.

    Returns ``(ready, reason, message)`` where reason/message explain a not-ready cluster.

    Example:
        >>> rc = {"status": {"conditions": [
        ...     {"type": "HeadPodReady", "status": "True", "reason": "HeadPodRunningAndReady"},
        ...     {"type": "RayClusterProvisioned", "status": "True",
        ...      "reason": "AllPodRunningAndReadyFirstTime"}], "state": "suspended"}}
        >>> cluster_ready(rc)[0]
        True
    """
    return _cluster_ready(cluster, conditions_of(cluster))


def _cluster_ready(cluster: Obj, conds: Conditions) -> tuple[bool, str | None, str | None]:
    head, provisioned = conds["HeadPodReady"], conds["RayClusterProvisioned"]
    if head.present or provisioned.present:
        if head.true and (not provisioned.present or provisioned.true):
            return True, None, None
        # Say what is missing, the head first.
        missing = head if not head.true else provisioned
        return False, missing.reason, missing.message
    state = str((cluster.get("status") or {}).get("state") or "").lower()
    if state == "ready":
        return True, None, None
    return False, None, None


def is_suspended(cluster: Obj) -> bool:
    """Whether KubeRay suspends (or has suspended) the RayCluster: its ``RayClusterSuspended`` or
    ``RayClusterSuspending`` condition, else ``spec.suspend`` (the deprecated ``status.state`` only when
    KubeRay publishes no conditions).

    Example:
        >>> is_suspended({"spec": {"suspend": True}}), is_suspended({"spec": {}})
        (True, False)
    """
    return _suspended(cluster, conditions_of(cluster))


def _suspended(cluster: Obj, conds: Conditions) -> bool:
    if conds["RayClusterSuspended"].true or conds["RayClusterSuspending"].true:
        return True
    spec_suspend = bool((cluster.get("spec") or {}).get("suspend"))
    has_conditions = bool((cluster.get("status") or {}).get("conditions"))
    if not has_conditions and str((cluster.get("status") or {}).get("state") or "").lower() == "suspended":
        return True
    return spec_suspend


def worker_counts(cluster: Obj | None) -> tuple[int | None, int | None]:
    """``(ready, desired)`` worker replicas of a RayCluster from its status, the desired count from its
    worker groups (``replicas`` × ``numOfHosts``) while KubeRay has written none; ``None`` where unknown.

    Example:
        >>> worker_counts({"spec": {"workerGroupSpecs": [{"replicas": 2, "numOfHosts": 2}]}})
        (None, 4)
    """
    status = (cluster or {}).get("status") or {}
    ready = _int(status.get("readyWorkerReplicas"))
    if ready is None:
        ready = _int(status.get("availableWorkerReplicas"))
    desired = _int(status.get("desiredWorkerReplicas"))
    if desired is None and cluster:
        groups = (cluster.get("spec") or {}).get("workerGroupSpecs") or []
        total = 0
        for group in groups:
            replicas = _int(group.get("replicas"))
            hosts = _int(group.get("numOfHosts")) or 1
            total += (1 if replicas is None else replicas) * hosts
        desired = total if groups else None
    return ready, desired


def head_failure(cluster: Obj | None, head_pod: Obj | None = None) -> tuple[str, str] | None:
    """Why the RayCluster's head cannot start, as ``(reason, message)``, or ``None`` while it may.

    Read from KubeRay's ``ReplicaFailure`` condition with reason ``FailedCreateHeadPod`` (the head pod
    could not be created [R ray-operator/controllers/ray/raycluster_controller.go, utils
    FailedCreateHeadPod]) and from the head pod: phase ``Failed``, or a container waiting for one
    of :data:`HEAD_FAILURE_REASONS` (its message, then the last exit's message, as the kubelet wrote them).

    Example:
        >>> pod = {"status": {"phase": "Pending", "containerStatuses": [{"name": "ray-head",
        ...     "state": {"waiting": {"reason": "ImagePullBackOff",
        ...                           "message": 'Back-off pulling image "rayproject/ray:nope"'}}}]}}
        >>> head_failure({"status": {}}, pod)
        ('ImagePullBackOff', 'ray-head: Back-off pulling image "rayproject/ray:nope"')
        >>> head_failure({"status": {}}, {"status": {"phase": "Running"}}) is None
        True
    """
    return _head_failure(conditions_of(cluster), head_pod)


def _head_failure(conds: Conditions, head_pod: Obj | None) -> tuple[str, str] | None:
    failure = conds["ReplicaFailure"]
    if failure.true and failure.reason == "FailedCreateHeadPod":
        return "FailedCreateHeadPod", failure.message or "the head pod could not be created"
    status = (head_pod or {}).get("status") or {}
    for container in list(status.get("initContainerStatuses") or []) + list(
        status.get("containerStatuses") or []
    ):
        waiting = (container.get("state") or {}).get("waiting") or {}
        reason = waiting.get("reason")
        if reason in HEAD_FAILURE_REASONS:
            words = [str(waiting.get("message") or "")]
            last = (container.get("lastState") or {}).get("terminated") or {}
            if last:
                exit_code = last.get("exitCode")
                words.append(f"last exit {exit_code}: {last.get('message') or last.get('reason') or ''}")
            text = "; ".join(w.strip() for w in words if w and w.strip())
            return str(reason), f"{container.get('name') or 'container'}: {text or reason}"
    if status.get("phase") == "Failed":
        return str(status.get("reason") or "Failed"), str(status.get("message") or "the head pod failed")
    return None


#: KubeRay's reason for a condition it could not read yet (``rayv1.UnknownReason``): no word for a person.
UNKNOWN_REASON = "Unknown"


def head_progress(cluster: Obj | None, head_pod: Obj | None = None) -> str:
    """What is known of a starting head, in words, where KubeRay's ``HeadPodReady`` says only
    ``Unknown`` (the head pod has no ``Ready`` condition yet): the head pod's phase and what its
    container waits for when the pod was read, else what the condition says.

    Example:
        >>> head_progress({"status": {}}, {"status": {"phase": "Pending", "containerStatuses": [
        ...     {"name": "ray-head", "state": {"waiting": {"reason": "ContainerCreating"}}}]}})
        'head pod pending (ContainerCreating)'
        >>> head_progress({"status": {}}, {"status": {"phase": "Running"}})
        'head pod running, Ray not ready yet'
        >>> head_progress({"status": {"conditions": [{"type": "HeadPodReady", "status": "False",
        ...                                           "reason": "HeadPodNotFound"}]}})
        'waiting for KubeRay to create the head pod'
        >>> head_progress({"status": {}})
        'head pod not ready yet'
    """
    return _head_progress(conditions_of(cluster), head_pod)


def _head_progress(conds: Conditions, head_pod: Obj | None) -> str:
    status = (head_pod or {}).get("status") or {}
    phase = str(status.get("phase") or "")
    if phase == "Pending" or (head_pod is not None and not phase):
        waits = [
            str(((c.get("state") or {}).get("waiting") or {}).get("reason") or "")
            for c in list(status.get("initContainerStatuses") or [])
            + list(status.get("containerStatuses") or [])
        ]
        why = next((w for w in waits if w), "")
        return f"head pod pending ({why})" if why else "head pod pending"
    if phase == "Running":
        return "head pod running, Ray not ready yet"
    if conds["HeadPodReady"].reason == "HeadPodNotFound":
        return "waiting for KubeRay to create the head pod"
    return "head pod not ready yet"


@dataclass(frozen=True)
class RayClusterReading:
    """What a RayCluster (and its head Pod, when read) says, decoded once for the admission machine
    (made by :func:`read_raycluster`); each field is what the reader of the same name answers.

    Example:
        >>> r = read_raycluster({"spec": {"suspend": True, "workerGroupSpecs": [{"replicas": 2}]}})
        >>> r.suspended, r.workers, r.ready, r.deleting
        (True, (None, 2), (False, None, None), False)
    """

    suspended: bool
    workers: tuple[int | None, int | None]  # (ready, desired): worker_counts
    ready: tuple[bool, str | None, str | None]  # cluster_ready
    unscaled: str | None  # autoscaling_not_run
    head_failure: tuple[str, str] | None
    head_progress: str
    replica_failure: tuple[str | None, str | None] | None  # ReplicaFailure=True: (reason, message)
    deleting: bool  # metadata.deletionTimestamp is set
    legacy_failed: bool  # KubeRay's deprecated status.state "failed", read only without conditions
    legacy_reason: str | None  # its status.reason


def read_raycluster(cluster: Obj, head_pod: Obj | None = None) -> RayClusterReading:
    """Decode a RayCluster's conditions once and read all the admission machine asks of it.

    Example:
        >>> rc = {"status": {"conditions": [{"type": "ReplicaFailure", "status": "True",
        ...     "reason": "FailedCreateWorkerPod", "message": "quota"}]}}
        >>> read_raycluster(rc).replica_failure
        ('FailedCreateWorkerPod', 'quota')
    """
    conds = conditions_of(cluster)
    failure = conds["ReplicaFailure"]
    status = cluster.get("status") or {}
    failed = str(status.get("state") or "").lower() == "failed" and not status.get("conditions")
    return RayClusterReading(
        suspended=_suspended(cluster, conds),
        workers=worker_counts(cluster),
        ready=_cluster_ready(cluster, conds),
        unscaled=_autoscaling_not_run(conds),
        head_failure=_head_failure(conds, head_pod),
        head_progress=_head_progress(conds, head_pod),
        replica_failure=(failure.reason, failure.message) if failure.true else None,
        deleting=bool(meta_of(cluster).get("deletionTimestamp")),
        legacy_failed=failed,
        legacy_reason=status.get("reason") if failed else None,
    )
