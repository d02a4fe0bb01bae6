"""Reading a pod's log through ``pods/{name}/log``: the logs of a job-owned job after its cluster is gone.

KubeRay runs a job-owned RayJob's submission in a batch Job named after the RayJob, whose pod runs
``ray job submit`` (or ``ray job logs --follow``) and so prints the job's logs as they come. When the
job ends KubeRay deletes the RayCluster (``shutdownAfterJobFinishes``), taking Ray's own copy of the
logs with it, but the submitter Job and its pod stay, owned by the RayJob, until the RayJob is
deleted [R ray-operator/controllers/ray/rayjob_controller.go createNewK8sJob]. Their log is what is left.
The pods are found by the Job controller's label ``batch.kubernetes.io/job-name``.

Example:
    >>> pods = [{"metadata": {"name": "a", "creationTimestamp": "2026-01-01T00:00:00Z"}},
    ...         {"metadata": {"name": "b", "creationTimestamp": "2026-01-02T00:00:00Z"}}]
    >>> newest_pod(pods)["metadata"]["name"]
    'b'
"""

from __future__ import annotations

from typing import Any

from rayqueue_sdk.kube.kinds import PODS
from rayqueue_sdk.kube.session import KubeSession, Objects
from rayqueue_sdk.manifests.meta import meta_of

__all__ = ["JOB_NAME_LABEL", "PodLog", "head_pod", "newest_pod", "submitter_log"]

#: The label the Job controller puts on a Job's pods.
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"


class PodLog(str):
    """A pod's log text that also says which pod and container it came from.

    Example:
        >>> log = PodLog("hello\\n", pod="train-x2k4p", container="ray-job-submitter")
        >>> log, log.pod
        ('hello\\n', 'train-x2k4p')
    """

    pod: str
    container: str

    def __new__(cls, text: str, *, pod: str, container: str) -> PodLog:
        made = super().__new__(cls, text)
        made.pod, made.container = pod, container
        return made


def newest_pod(pods: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The most recently created of ``pods`` (a retried Job has several), or None.

    Example:
        >>> newest_pod([]) is None
        True
    """
    return max(pods, key=lambda p: meta_of(p).get("creationTimestamp") or "", default=None)


def head_pod(
    session: KubeSession,
    *,
    cluster: str,
    namespace: str | None = None,
    uid: str | None = None,
    deadline: float | None = None,
) -> dict[str, Any] | None:
    """The head Pod of RayCluster ``cluster`` (KubeRay's labels ``ray.io/cluster`` and
    ``ray.io/node-type=head`` [R ray-operator/controllers/ray/utils/constant.go]; owned by ``uid`` when
    given), the newest if several; None when there is none.

    Raises:
        ForbiddenError: the identity may not list pods.
        ApiError, ConnectionFailedError: as every API call.

    Example:
        >>> from rayqueue_sdk.kube.pods import head_pod
        >>> head_pod(session, cluster="a-cluster-with-no-pods") is None
        True
    """
    selector = f"ray.io/cluster={cluster},ray.io/node-type=head"
    pods: Objects = session.list(PODS, namespace=namespace, label_selector=selector, deadline=deadline)
    if uid:
        pods = [p for p in pods if any(o.get("uid") == uid for o in meta_of(p).get("ownerReferences") or [])]
    return newest_pod(pods)


def submitter_log(
    session: KubeSession, *, rayjob: str, namespace: str | None = None, tail_lines: int | None = None
) -> PodLog | None:
    """The log of the newest pod of KubeRay's submitter Job for ``rayjob``; None when there is no such pod.

    Raises:
        ForbiddenError: the identity may not list pods or read ``pods/log``.
        ApiError, ConnectionFailedError: as every API call.
    """
    ns = namespace or session.namespace
    pod = newest_pod(session.list(PODS, namespace=ns, label_selector=f"{JOB_NAME_LABEL}={rayjob}"))
    if pod is None:
        return None
    name = pod["metadata"]["name"]
    containers = (pod.get("spec") or {}).get("containers") or [{}]
    container = containers[0].get("name") or ""
    query: dict[str, Any] = {"container": container} if container else {}
    if tail_lines is not None:
        query["tailLines"] = tail_lines
    text = session.get_text(PODS.path(ns, name) + "/log", query=query)
    return PodLog(text, pod=name, container=container)
