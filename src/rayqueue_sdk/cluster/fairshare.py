"""Read what fair sharing says about a pending Workload (best effort, read-only).

The pure sentence is :func:`rayqueue_sdk.admission.fairshare.fair_share_sentence`; this reads what it
needs: the Workload's LocalQueue (for its ClusterQueue) and the ClusterQueues (cluster-scoped, which a
data scientist may not be allowed to list: then there is no sentence, and nothing fails). Two reads,
done only while a Workload waits for quota, and remembered per client for ten seconds (shares move as
workloads finish, so the memory is short).

Example:
    >>> fair_share_for(None, {"spec": {"queueName": "q"}}) is None
    True
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from rayqueue_sdk.admission.fairshare import fair_share_sentence
from rayqueue_sdk.errors import ApiError, ForbiddenError, NotFoundError
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.manifests.meta import condition_of, namespace_of

__all__ = ["fair_share_for", "waits_for_quota"]

log = logging.getLogger(__name__)

_TTL = 10.0


def waits_for_quota(workload: Mapping[str, Any] | None) -> bool:
    """Whether the Workload is active and waits for quota (no ``QuotaReserved=True``, not finished).

    Example:
        >>> waits_for_quota({"spec": {"active": True}, "status": {"conditions": []}})
        True
        >>> waits_for_quota({"status": {"conditions": [{"type": "QuotaReserved", "status": "True"}]}})
        False
    """
    if workload is None or (workload.get("spec") or {}).get("active") is False:
        return False
    reserved, finished = condition_of(workload, "QuotaReserved"), condition_of(workload, "Finished")
    return not (reserved and reserved.get("status") == "True") and not (
        finished and finished.get("status") == "True"
    )


def _sentence(session: KubeSession, *, namespace: str, queue: str) -> str | None:
    lq = session.get(session.kueue_kind("localqueues"), name=queue, namespace=namespace)
    cluster_queue = str((lq.get("spec") or {}).get("clusterQueue") or "")
    if not cluster_queue:
        return None
    cqs = session.list(session.kueue_kind("clusterqueues", namespaced=False))
    return fair_share_sentence(cluster_queue, cqs)


def fair_share_for(session: KubeSession | None, workload: Mapping[str, Any] | None) -> str | None:
    """The sentence ("behind team-b-cq's workloads: fair share 0.42 vs 0.10") for a Workload waiting for
    quota under fair sharing, else ``None`` (no client, not waiting, fair sharing off, or not readable)."""
    if session is None or not waits_for_quota(workload):
        return None
    assert workload is not None
    namespace = namespace_of(workload) or ""
    queue = str((workload.get("spec") or {}).get("queueName") or "")
    if not namespace or not queue:
        return None

    def read() -> str | None:
        try:
            return _sentence(session, namespace=namespace, queue=queue)
        except (ForbiddenError, NotFoundError, ApiError) as err:
            log.debug("cannot read the ClusterQueues' fair shares: %s", err)
            return None

    return session.remembered(f"fair-share:{namespace}/{queue}", _TTL, read)
