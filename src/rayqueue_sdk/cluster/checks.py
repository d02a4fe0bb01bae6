"""Read how many attempts a Workload's ProvisioningRequest admission checks allow (best effort, read-only).

Kueue's ProvisioningRequest check retries a failed request ``retryStrategy.backoffLimitCount`` times
(default 3), read from the ProvisioningRequestConfig the AdmissionCheck names in ``spec.parameters``
(https://kueue.sigs.k8s.io/docs/admission-check-controllers/provisioning/). Both are cluster-scoped
admin objects a data scientist may not be allowed to read: then the limits are unknown and the
explanation says "attempt 2" instead of "attempt 2 of 3". Two GETs per check, done only while a
Workload waits for its checks, and remembered per client for a minute.

Example:
    >>> check_limits(None, {"status": {}}) is None
    True
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from rayqueue_sdk.errors import ApiError, ForbiddenError, NotFoundError
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.manifests.kueue import PROVISIONING_CONTROLLER
from rayqueue_sdk.manifests.meta import condition_of

__all__ = ["check_limits", "waits_for_checks"]

log = logging.getLogger(__name__)

_TTL = 60.0


def _read_limit(session: KubeSession, check: str) -> int | None:
    ac = session.get(session.kueue_kind("admissionchecks", namespaced=False), name=check)
    spec = ac.get("spec") or {}
    params = spec.get("parameters") or {}
    if spec.get("controllerName") != PROVISIONING_CONTROLLER or not params.get("name"):
        return None
    prc = session.get(session.kueue_kind("provisioningrequestconfigs", namespaced=False), name=params["name"])
    return int(((prc.get("spec") or {}).get("retryStrategy") or {}).get("backoffLimitCount", 3))


def _limit(session: KubeSession, check: str) -> int | None:
    return session.remembered(f"admission-check-limit:{check}", _TTL, lambda: _read_limit(session, check))


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
    reserved = (condition_of(workload, "QuotaReserved") or {}).get("status") == "True"
    return reserved and any(c.get("state") != "Ready" for c in status.get("admissionChecks") or ())
