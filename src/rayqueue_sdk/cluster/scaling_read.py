"""Read an autoscaling cluster's scaling state (thin I/O over :mod:`rayqueue_sdk.admission.scaling_status`).

:func:`with_scaling` lists the cluster's Kueue Workload slices (label ``kueue.x-k8s.io/job-uid``), asks the
visibility API where a waiting scale-up slice stands in its LocalQueue, and returns the status with
``scaling`` set and, while a scale-up waits, its line appended to the explanation (what ``status()``, the
card and ``rayqueue cluster status --json`` show).

Example (a cluster without in-tree autoscaling comes back as it was, with no request)::

    status = with_scaling(session, status, raycluster, namespace="team-a")
    status.scaling.text()   # 'autoscaling: 1 of 2 workers running (min 0, max 2); scale-up waits ...'

    >>> from rayqueue_sdk.cluster.status import ClusterStatus
    >>> with_scaling(None, "unchanged", {"spec": {}}, namespace="ds")  # type: ignore[arg-type]
    'unchanged'
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from rayqueue_sdk.admission.scaling_status import pending_slice, scaling_from
from rayqueue_sdk.cluster.status import ClusterStatus
from rayqueue_sdk.errors import ForbiddenError, NotFoundError
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.manifests.labels import JOB_UID_LABEL
from rayqueue_sdk.manifests.meta import name_of, uid_of
from rayqueue_sdk.queues.local_queues import queue_position

log = logging.getLogger(__name__)

__all__ = ["with_scaling"]


def with_scaling(
    session: KubeSession,
    status: ClusterStatus,
    cluster: Mapping[str, Any],
    *,
    namespace: str,
    workloads: list[dict[str, Any]] | None = None,
) -> ClusterStatus:
    """``status`` with the cluster's scaling reading (unchanged without in-tree autoscaling); ``workloads``:
    the cluster's Workloads when the caller has just listed them (else they are listed here)."""
    if not ((cluster.get("spec") or {}).get("enableInTreeAutoscaling")):
        return status
    if workloads is not None:
        return _with_reading(session, status, cluster, namespace=namespace, workloads=workloads)
    uid = uid_of(cluster) or ""
    workloads = []
    try:
        workloads = list(
            session.list(
                session.kueue_kind("workloads"), namespace=namespace, label_selector=f"{JOB_UID_LABEL}={uid}"
            )
        )
    except (ForbiddenError, NotFoundError) as err:  # no Kueue, or no right to read Workloads
        log.debug("cannot read Kueue Workloads in %s: %s", namespace, err)
    return _with_reading(session, status, cluster, namespace=namespace, workloads=workloads)


def _with_reading(
    session: KubeSession,
    status: ClusterStatus,
    cluster: Mapping[str, Any],
    *,
    namespace: str,
    workloads: list[dict[str, Any]],
) -> ClusterStatus:
    waiting = pending_slice(workloads)
    position = None
    queue = ((waiting or {}).get("spec") or {}).get("queueName")
    if waiting is not None and queue:
        position, _why = queue_position(
            session, local_queue=str(queue), workload_name=name_of(waiting), namespace=namespace
        )
    scaling = scaling_from(cluster, workloads, position=position)
    if scaling is None:
        return status
    explanation = f"{status.explanation}; {scaling.text()}" if scaling.waiting else status.explanation
    return replace(status, scaling=scaling, explanation=explanation)
