"""The Kueue context of a waiting Workload, read from cluster-scoped admin objects (best effort, read-only):
its ProvisioningRequest admission checks' retry limits, and what fair sharing says of its ClusterQueue.

Both objects are an admin's, which a data scientist may not be allowed to read: then the context is
absent and nothing fails.

- **Check limits.** Kueue's ProvisioningRequest check retries a failed request
  ``retryStrategy.backoffLimitCount`` times (default 3), read from the ProvisioningRequestConfig the
  AdmissionCheck names in ``spec.parameters``
  (https://kueue.sigs.k8s.io/docs/admission-check-controllers/provisioning/). Unreadable: the explanation
  says "attempt 2" instead of "attempt 2 of 3". Two GETs per check, only while a Workload waits for its
  checks, remembered per client for a minute.
- **Fair share.** The pure sentence is :func:`rayqueue_sdk.admission.fairshare.fair_share_sentence`; this
  reads the Workload's LocalQueue (for its ClusterQueue) and the ClusterQueues. Two reads, only while a
  Workload waits for quota, remembered per client for ten seconds (shares move as workloads finish).

Example:
    >>> check_limits(None, {"status": {}}) is None, fair_share_for(None, {"spec": {"queueName": "q"}}) is None
    (True, True)
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from rayqueue_sdk.admission.fairshare import fair_share_sentence
from rayqueue_sdk.errors import ApiError, ForbiddenError, NotFoundError
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.manifests.kueue import PROVISIONING_CONTROLLER
from rayqueue_sdk.manifests.meta import conditions_of, name_of, namespace_of

__all__ = ["check_limits", "fair_share_for", "fair_share_in", "waits_for_checks", "waits_for_quota"]

log = logging.getLogger(__name__)

_CHECK_TTL = 60.0
_FAIR_SHARE_TTL = 10.0


# -- admission checks' retry limits -----------------------------------------------------------------
def _read_limit(session: KubeSession, check: str) -> int | None:
    ac = session.get(session.kueue_kind("admissionchecks", namespaced=False), name=check)
    spec = ac.get("spec") or {}
    params = spec.get("parameters") or {}
    if spec.get("controllerName") != PROVISIONING_CONTROLLER or not params.get("name"):
        return None
    prc = session.get(session.kueue_kind("provisioningrequestconfigs", namespaced=False), name=params["name"])
    return int(((prc.get("spec") or {}).get("retryStrategy") or {}).get("backoffLimitCount", 3))


def _limit(session: KubeSession, check: str) -> int | None:
    return session.remembered(
        f"admission-check-limit:{check}", _CHECK_TTL, lambda: _read_limit(session, check)
    )


def check_limits(session: KubeSession | None, workload: Mapping[str, Any] | None) -> dict[str, int] | None:
    """``{check: backoffLimitCount}`` for the Workload's ProvisioningRequest checks, or ``None`` when
    they cannot be read (no checks, no client, forbidden, not found)."""
    names = [c.get("name") for c in ((workload or {}).get("status") or {}).get("admissionChecks") or ()]
    if session is None or not names:
        return None
    limits: dict[str, int] = {}
    try:
        for name in names:
            limit = _limit(session, str(name))
            if limit is not None:
                limits[str(name)] = limit
    except (ForbiddenError, NotFoundError, ApiError) as err:
        log.debug("cannot read the admission checks' configurations: %s", err)
        return None
    return limits


def waits_for_checks(workload: Mapping[str, Any] | None) -> bool:
    """Whether the Workload holds quota and waits for an admission check (then the limits are worth a read).

    Example:
        >>> waits_for_checks({"status": {"conditions": [{"type": "QuotaReserved", "status": "True"}],
        ...     "admissionChecks": [{"name": "sample-prov", "state": "Pending"}]}})
        True
    """
    status = (workload or {}).get("status") or {}
    reserved = conditions_of(workload)["QuotaReserved"].true
    return reserved and any(c.get("state") != "Ready" for c in status.get("admissionChecks") or ())


# -- fair share ------------------------------------------------------------------------------
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
    conds = conditions_of(workload)
    return not conds["QuotaReserved"].true and not conds["Finished"].true


def fair_share_in(
    local_queues: list[dict[str, Any]],
    cluster_queues: list[dict[str, Any]] | None,
    workload: Mapping[str, Any] | None,
) -> str | None:
    """:func:`fair_share_for` from the LocalQueues and ClusterQueues a caller has read (``None``: not
    readable) with the position or the estimate (pure): the Workload's LocalQueue gives its ClusterQueue.

    Example:
        >>> lq = {"metadata": {"name": "q"}, "spec": {"clusterQueue": "cq"}}
        >>> fair_share_in([lq], None, {"spec": {"queueName": "q", "active": True}}) is None   # not readable
        True
    """
    if cluster_queues is None or not waits_for_quota(workload):
        return None
    queue = str(((workload or {}).get("spec") or {}).get("queueName") or "")
    cluster_queue = next(
        (str((q.get("spec") or {}).get("clusterQueue") or "") for q in local_queues if name_of(q) == queue),
        "",
    )
    return fair_share_sentence(cluster_queue, cluster_queues) if cluster_queue else None


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

    return session.remembered(f"fair-share:{namespace}/{queue}", _FAIR_SHARE_TTL, read)
