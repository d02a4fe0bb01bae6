"""Seed 000's scale-to-zero objects as the SDK makes them, by ``Kind/name`` (for the docs).

Example:
    >>> objs = render_seeds()
    >>> objs["ScaledObject/first-raycluster-idle"]["spec"]["triggers"][0]["metadata"]["serverAddress"]
    'https://thanos-querier.openshift-monitoring.svc.cluster.local:9092'
"""

from __future__ import annotations

from typing import Any

from rayqueue_sdk.config.idle import IdlePolicy, PrometheusSource
from rayqueue_sdk.manifests.scaling import keda_objects

__all__ = ["SEED000_POLICY", "render_seeds"]

#: Seed 000's policy in the SDK's words: KEDA on the Workload, the seed's thanos-querier (the documented
#: example, never a default) with bearer auth, one idle hour.
SEED000_POLICY = IdlePolicy(
    idle_minutes=60,
    mode="keda",
    prometheus=PrometheusSource(
        url="https://thanos-querier.openshift-monitoring.svc.cluster.local:9092", auth="bearer"
    ),
)


def render_seeds() -> dict[str, dict[str, Any]]:
    """Seed 000's KEDA-mode objects for ``first-raycluster`` in ``demo``, keyed ``Kind/name``.

    The Workload's name is a placeholder (Kueue derives it from the RayCluster's uid, known once applied),
    and so the ownerReferences are left out.

    Example:
        >>> for key in sorted(render_seeds()):
        ...     print(key)
        Role/first-raycluster-idle
        RoleBinding/first-raycluster-idle
        ScaledObject/first-raycluster-idle
        Secret/first-raycluster-idle-token
        ServiceAccount/first-raycluster-idle
        TriggerAuthentication/first-raycluster-idle
    """
    objects = keda_objects(
        SEED000_POLICY,
        cluster="first-raycluster",
        namespace="demo",
        groups=["small-group-first-raycluster"],
        workload="raycluster-first-raycluster-<hash>",
    )
    return {f"{o['kind']}/{o['metadata']['name']}": o for o in objects}
