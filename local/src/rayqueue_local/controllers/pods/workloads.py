"""``apps/v1`` Deployments and ``batch/v1`` Jobs: their pods, made from the template, and their status.

The pods run on the local kubelet (:mod:`.kubelet`).

**Deployments** [R kubernetes/pkg/controller/deployment, replicaset]: ``spec.replicas`` (default 1)
pods named ``<deployment>-<pod-template-hash>-<rand5>`` with the template's labels plus
``pod-template-hash``. This API server does not serve ReplicaSets, so the pods are owned by the
Deployment directly (a controller ownerReference; deleting the Deployment garbage-collects them);
a changed template replaces every pod (the new ones are made first, the old ones deleted once all new
ones are ready: a rolling update in one step). A pod that ends (``Failed``/``Succeeded``) is deleted
and replaced. ``status``: ``observedGeneration``, ``replicas``, ``updatedReplicas``,
``readyReplicas``, ``availableReplicas`` (``minReadySeconds`` 0), ``unavailableReplicas`` and the
conditions ``Available`` (``MinimumReplicasAvailable`` / ``MinimumReplicasUnavailable``) and
``Progressing``; a pod that admission refuses (Pod Security, :mod:`rayqueue_local.apiserver.podsecurity`)
gives a ``Warning`` Event ``FailedCreate`` ("Error creating: <the refusal>") and the condition
``ReplicaFailure`` (reason ``FailedCreate``), as upstream's ReplicaSet reports it and the Deployment
mirrors it. ``/scale`` is served by the API server and moves ``spec.replicas``.

**Jobs** [R kubernetes/pkg/controller/job/job_controller.go]: pods ``<job>-<rand5>`` labelled
``batch.kubernetes.io/job-name``, ``job-name``, ``batch.kubernetes.io/controller-uid`` and
``controller-uid``, owned by the Job; ``parallelism`` (default 1) at once until ``completions``
(default 1) have succeeded. A failed pod counts against ``backoffLimit`` (default 6; with
``restartPolicy: OnFailure`` a container restart counts too), and its replacement waits the Job's
back-off (10 s doubling, at most 6 min). A pod that admission refuses gives a ``Warning`` Event
``FailedCreate`` on the Job and is tried again. ``activeDeadlineSeconds`` and ``suspend`` are honoured.
``status``: ``startTime``, ``active``, ``ready``, ``succeeded``, ``failed``, ``completionTime`` and
the conditions as Kubernetes 1.31+ writes them: ``SuccessCriteriaMet`` then ``Complete``, or
``FailureTarget`` then ``Failed`` (reasons ``BackoffLimitExceeded`` "Job has reached the specified
backoff limit", ``DeadlineExceeded`` "Job was active longer than specified deadline"); the active
pods of a failed Job are deleted. Finished pods are kept (``ttlSecondsAfterFinished`` is honoured:
the Job, and so its pods, is deleted that long after it finished).

Example:
    >>> JobController().watches, DeploymentController().watches
    (('jobs.batch', 'pods'), ('deployments.apps', 'pods'))
"""

from __future__ import annotations

import copy
import hashlib
import json
import secrets
import time
from typing import Any

from rayqueue_local.apimachinery.time import now_rfc3339, parse_rfc3339
from rayqueue_local.controllers.base import QueueController, get_or_none
from rayqueue_local.controllers.pods.kubelet import PODS
from rayqueue_local.storage.store import StoreError

__all__ = [
    "DEPLOYMENTS",
    "JOB_BACKOFF",
    "JOBS",
    "DeploymentController",
    "JobController",
    "job_pod_labels",
    "template_hash",
]

#: The resource key of Deployments.
DEPLOYMENTS = "deployments.apps"
#: The resource key of Jobs.
JOBS = "jobs.batch"
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # Kubernetes' rand.String alphabet
#: The first delay before a failed Job pod is replaced, seconds.
JOB_BACKOFF = 10.0
_JOB_BACKOFF_MAX = 360.0


def _rand5() -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(5))


def template_hash(template: dict[str, Any]) -> str:
    """A stable short hash of a pod template (the ``pod-template-hash`` label's role).

    Example:
        >>> template_hash({"spec": {}}) == template_hash({"spec": {}}), len(template_hash({}))
        (True, 10)
    """
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).digest()
    return "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:10])


def job_pod_labels(job: dict[str, Any]) -> dict[str, str]:
    """The labels the Job controller puts on its pods (template labels, then the Job's own).

    Example:
        >>> labels = job_pod_labels({"metadata": {"name": "j", "uid": "u"}, "spec": {}})
        >>> labels["batch.kubernetes.io/job-name"], labels["controller-uid"]
        ('j', 'u')
    """
    meta = job["metadata"]
    labels = dict((((job.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {})
    labels.update(
        {
            "batch.kubernetes.io/controller-uid": str(meta.get("uid", "")),
            "batch.kubernetes.io/job-name": meta["name"],
            "controller-uid": str(meta.get("uid", "")),
            "job-name": meta["name"],
        }
    )
    return labels


def _owner(obj: dict[str, Any], api_version: str, kind: str) -> dict[str, Any]:
    meta = obj["metadata"]
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _owned(store: Any, obj: dict[str, Any]) -> list[dict[str, Any]]:
    meta = obj["metadata"]
    uid = meta.get("uid")
    return [
        p
        for p in store.list(PODS, meta.get("namespace"))
        if any(
            o.get("uid") == uid and o.get("controller") for o in p["metadata"].get("ownerReferences") or []
        )
    ]


def _ready(pod: dict[str, Any]) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def _phase(pod: dict[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def _pod(owner: dict[str, Any], ref: dict[str, Any], name: str, labels: dict[str, str]) -> dict[str, Any]:
    template = copy.deepcopy((owner.get("spec") or {}).get("template") or {})
    meta = template.get("metadata") or {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": owner["metadata"].get("namespace"),
            "labels": labels,
            "annotations": dict(meta.get("annotations") or {}),
            "ownerReferences": [ref],
        },
        "spec": template.get("spec") or {},
    }


def _condition(kind: str, reason: str, message: str, stamp: str, status: str = "True") -> dict[str, Any]:
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastProbeTime": stamp,
        "lastTransitionTime": stamp,
    }


def _delete(store: Any, pod: dict[str, Any]) -> None:
    try:
        store.delete(PODS, pod["metadata"].get("namespace"), pod["metadata"]["name"])
    except StoreError as err:
        if err.code != 404:
            raise


def _write_status(store: Any, key: str, obj: dict[str, Any], status: dict[str, Any]) -> None:
    if status == (obj.get("status") or {}):
        return
    meta = {k: v for k, v in obj["metadata"].items() if k != "resourceVersion"}
    try:
        store.update_status(key, {**obj, "metadata": meta, "status": status})
    except StoreError as err:
        if err.code != 404:
            raise


class _OwnerController(QueueController):
    """Reconciles ``kind`` objects of ``key``; a pod event enqueues its controller owner."""

    kind = ""
    key = ""

    def keys_for(self, event: Any) -> list[Any]:
        meta = event.object.get("metadata", {})
        if event.key == self.key:
            return [(meta.get("namespace"), meta.get("name"))]
        return [
            (meta.get("namespace"), o["name"])
            for o in meta.get("ownerReferences") or []
            if o.get("kind") == self.kind and o.get("controller")
        ]

    def resync(self) -> list[Any]:
        if self.store is None:
            return []
        return [(o["metadata"].get("namespace"), o["metadata"]["name"]) for o in self.store.list(self.key)]

    def _get(self, item: tuple[str, str]) -> dict[str, Any] | None:
        obj = get_or_none(self.store, self.key, item[0], item[1])
        return None if obj is None or obj["metadata"].get("deletionTimestamp") else obj


class DeploymentController(_OwnerController):
    """``apps/v1`` Deployments: pods owned directly (no ReplicaSets are served), status, scale."""

    name = "deployment"
    kind = "Deployment"
    key = DEPLOYMENTS
    watches = (DEPLOYMENTS, PODS)

    def reconcile(self, item: tuple[str, str]) -> None:
        deploy = self._get(item)
        if deploy is None:
            return
        spec = deploy.get("spec") or {}
        replicas = int(spec.get("replicas", 1))
        template = spec.get("template") or {}
        current = template_hash(template)
        pods = [p for p in _owned(self.store, deploy) if not p["metadata"].get("deletionTimestamp")]
        for pod in [p for p in pods if _phase(p) in ("Succeeded", "Failed")]:
            _delete(self.store, pod)
            pods.remove(pod)
        new = [p for p in pods if (p["metadata"].get("labels") or {}).get("pod-template-hash") == current]
        old = [p for p in pods if p not in new]
        ref = _owner(deploy, "apps/v1", "Deployment")
        labels = dict((template.get("metadata") or {}).get("labels") or {})
        labels["pod-template-hash"] = current
        name = deploy["metadata"]["name"]
        refused: str | None = None
        for _ in range(replicas - len(new)):
            try:
                new.append(self.store.create(PODS, _pod(deploy, ref, f"{name}-{current}-{_rand5()}", labels)))
            except (
                StoreError
            ) as err:  # admission refused the pod (Pod Security, say): upstream's FailedCreate
                if err.code != 403:
                    raise
                refused = err.message
                self.store.record_event(
                    deploy,
                    type="Warning",
                    reason="FailedCreate",
                    message=f"Error creating: {err.message}",
                    source="replicaset-controller",
                )
                break
        for pod in sorted(new, key=lambda p: str(p["metadata"].get("creationTimestamp")), reverse=True)[
            : max(0, len(new) - replicas)
        ]:
            _delete(self.store, pod)
            new.remove(pod)
        if old and sum(_ready(p) for p in new) >= replicas:
            for pod in old:
                _delete(self.store, pod)
            old = []
        ready = sum(_ready(p) for p in new + old)
        stamp = now_rfc3339()
        available = ready >= replicas
        previous = {c.get("type"): c for c in (deploy.get("status") or {}).get("conditions") or []}

        def keep(cond: dict[str, Any]) -> dict[str, Any]:
            before = previous.get(cond["type"])
            if before is not None and before.get("status") == cond["status"]:
                cond["lastTransitionTime"] = before.get("lastTransitionTime", stamp)
                cond["lastUpdateTime"] = before.get("lastUpdateTime", stamp)
            else:
                cond["lastUpdateTime"] = stamp
            cond.pop("lastProbeTime", None)
            return cond

        status: dict[str, Any] = {
            "observedGeneration": deploy["metadata"].get("generation", 1),
            "replicas": len(new) + len(old),
            "updatedReplicas": len(new),
            "readyReplicas": ready,
            "availableReplicas": ready,
            "unavailableReplicas": max(0, replicas - ready),
            "conditions": [
                keep(
                    _condition(
                        "Available",
                        "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
                        "Deployment has minimum availability."
                        if available
                        else "Deployment does not have minimum availability.",
                        stamp,
                        "True" if available else "False",
                    )
                ),
                keep(
                    _condition(
                        "Progressing",
                        "NewReplicaSetAvailable" if available and not old else "ReplicaSetUpdated",
                        f'Deployment "{name}" has successfully progressed.'
                        if available and not old
                        else f'Deployment "{name}" is progressing.',
                        stamp,
                    )
                ),
            ],
        }
        if refused is not None:
            status["conditions"].append(
                keep(_condition("ReplicaFailure", "FailedCreate", refused, stamp, "True"))
            )
        for key in ("readyReplicas", "availableReplicas", "unavailableReplicas", "updatedReplicas"):
            if not status[key]:
                del status[key]  # omitempty, as upstream serialises them
        _write_status(self.store, DEPLOYMENTS, deploy, status)


class JobController(_OwnerController):
    """``batch/v1`` Jobs: pods until ``completions`` succeed, ``backoffLimit``, conditions, TTL.

    ``backoff_initial``: the first delay before a failed pod is replaced (upstream: 10 s).
    """

    name = "job"
    kind = "Job"
    key = JOBS
    watches = (JOBS, PODS)
    resync_seconds = 1.0

    def __init__(self, *, backoff_initial: float = JOB_BACKOFF) -> None:
        super().__init__()
        self.backoff_initial = backoff_initial
        self._last_failure: dict[str, float] = {}  # job uid -> monotonic time of its last pod failure

    def reconcile(self, item: tuple[str, str]) -> None:
        job = self._get(item)
        if job is None:
            return
        spec = job.get("spec") or {}
        status = copy.deepcopy(job.get("status") or {})
        conditions = status.get("conditions") or []
        finished = any(
            c.get("type") in ("Complete", "Failed") and c.get("status") == "True" for c in conditions
        )
        if finished:
            self._ttl(job, status)
            return
        pods = _owned(self.store, job)
        succeeded = sum(_phase(p) == "Succeeded" for p in pods)
        failed_pods = [p for p in pods if _phase(p) == "Failed"]
        active = [p for p in pods if _phase(p) not in ("Succeeded", "Failed")]
        restarts = 0
        if (((spec.get("template") or {}).get("spec") or {}).get("restartPolicy")) == "OnFailure":
            restarts = sum(
                int(c.get("restartCount") or 0)
                for p in active
                for c in (p.get("status") or {}).get("containerStatuses") or []
            )
        failed = len(failed_pods)
        uid = str(job["metadata"].get("uid"))
        if failed > int(status.get("failed") or 0):
            self._last_failure[uid] = time.monotonic()
        stamp = now_rfc3339()
        status.setdefault("startTime", stamp)
        completions = int(spec.get("completions", 1) if spec.get("completions") is not None else 1)
        parallelism = int(spec.get("parallelism", 1) if spec.get("parallelism") is not None else 1)
        backoff_limit = int(spec.get("backoffLimit", 6) if spec.get("backoffLimit") is not None else 6)
        deadline = spec.get("activeDeadlineSeconds")
        started = parse_rfc3339(status.get("startTime"))
        ending: tuple[str, str] | None = None
        if failed + restarts > backoff_limit:
            ending = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
        elif deadline is not None and started is not None and time.time() >= started + int(deadline):
            ending = ("DeadlineExceeded", "Job was active longer than specified deadline")
        if ending is not None:
            for pod in active:
                _delete(self.store, pod)
            active = []
            conditions = [c for c in conditions if c.get("type") not in ("FailureTarget", "Failed")] + [
                _condition("FailureTarget", *ending, stamp),
                _condition("Failed", *ending, stamp),
            ]
        elif succeeded >= completions:
            conditions = [
                c for c in conditions if c.get("type") not in ("SuccessCriteriaMet", "Complete")
            ] + [
                _condition(
                    "SuccessCriteriaMet",
                    "CompletionsReached",
                    "Reached expected number of succeeded pods",
                    stamp,
                ),
                _condition(
                    "Complete", "CompletionsReached", "Reached expected number of succeeded pods", stamp
                ),
            ]
            status["completionTime"] = stamp
        elif not spec.get("suspend"):
            wanted = min(parallelism, completions - succeeded) - len(active)
            since = self._last_failure.get(uid)
            delay = min(self.backoff_initial * 2 ** max(0, failed - 1), _JOB_BACKOFF_MAX) if failed else 0.0
            if wanted > 0 and (since is None or time.monotonic() >= since + delay):
                ref = _owner(job, "batch/v1", "Job")
                for _ in range(wanted):
                    name = f"{job['metadata']['name']}-{_rand5()}"
                    try:
                        active.append(self.store.create(PODS, _pod(job, ref, name, job_pod_labels(job))))
                    except StoreError as err:  # admission refused the pod (Pod Security): FailedCreate
                        if err.code != 403:
                            raise
                        self.store.record_event(
                            job,
                            type="Warning",
                            reason="FailedCreate",
                            message=f"Error creating: {err.message}",
                            source="job-controller",
                        )
                        break
        status.update(
            {
                "active": len(active),
                "ready": sum(_ready(p) for p in active),
                "succeeded": succeeded,
                "failed": failed,
                "uncountedTerminatedPods": {},
            }
        )
        for key in ("active", "succeeded", "failed"):
            if not status[key]:
                del status[key]
        if conditions:
            status["conditions"] = conditions
        _write_status(self.store, JOBS, job, status)

    def _ttl(self, job: dict[str, Any], status: dict[str, Any]) -> None:
        ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
        if ttl is None:
            return
        ended = max(
            (parse_rfc3339(c.get("lastTransitionTime")) or 0.0)
            for c in status.get("conditions") or []
            if c.get("type") in ("Complete", "Failed")
        )
        if time.time() >= ended + int(ttl):
            try:
                self.store.delete(JOBS, job["metadata"].get("namespace"), job["metadata"]["name"])
            except StoreError as err:
                if err.code != 404:
                    raise
