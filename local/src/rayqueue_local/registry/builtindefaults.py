"""Upstream's defaults for the built-in kinds whose objects this server stores without a controller.

The real API server applies the ``SetDefaults_*`` functions of ``k8s.io/kubernetes/pkg/apis/*/v1/
defaults.go`` when it decodes a request; a client reading the object back sees them. These are the
ones kubectl and the Kubernetes client show for the kinds here: Secret ``type: Opaque``
[core/v1 SetDefaults_Secret]; Deployment ``replicas: 1``, ``RollingUpdate`` 25%/25%,
``revisionHistoryLimit: 10``, ``progressDeadlineSeconds: 600`` [apps/v1 SetDefaults_Deployment]; Job
``parallelism``/``completions: 1``, ``backoffLimit: 6``, ``completionMode: NonIndexed``, ``suspend:
false`` [batch/v1 SetDefaults_Job]; a pod template's ``restartPolicy`` (``Always``; Jobs must set it)
and ``dnsPolicy``/``schedulerName``/``terminationGracePeriodSeconds``.

Example:
    >>> apply_builtin_defaults("secrets", {"metadata": {"name": "s"}})["type"]
    'Opaque'
    >>> apply_builtin_defaults("deployments.apps", {"spec": {}})["spec"]["replicas"]
    1
"""

from __future__ import annotations

from typing import Any

__all__ = ["DEFAULTED_KEYS", "apply_builtin_defaults"]


def _pod_template(spec: dict[str, Any], restart_policy: str | None) -> None:
    template = spec.get("template")
    if not isinstance(template, dict):
        return
    pod = template.get("spec")
    if not isinstance(pod, dict):
        return
    if restart_policy is not None:
        pod.setdefault("restartPolicy", restart_policy)
    pod.setdefault("dnsPolicy", "ClusterFirst")
    pod.setdefault("schedulerName", "default-scheduler")
    pod.setdefault("terminationGracePeriodSeconds", 30)


def _secret(obj: dict[str, Any]) -> None:
    if not obj.get("type"):
        obj["type"] = "Opaque"


def _deployment(obj: dict[str, Any]) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            if isinstance(rolling, dict):
                rolling.setdefault("maxUnavailable", "25%")
                rolling.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    _pod_template(spec, "Always")


def _job(obj: dict[str, Any]) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    _pod_template(spec, None)


_DEFAULTERS = {"secrets": _secret, "deployments.apps": _deployment, "jobs.batch": _job}

#: The resource keys :func:`apply_builtin_defaults` changes.
DEFAULTED_KEYS = tuple(sorted(_DEFAULTERS))


def apply_builtin_defaults(key: str, obj: dict[str, Any]) -> dict[str, Any]:
    """Fill in upstream's defaults on ``obj`` (in place; returned for convenience).

    Example:
        >>> job = apply_builtin_defaults("jobs.batch", {"spec": {"template": {"spec": {}}}})
        >>> spec = job["spec"]
        >>> spec["backoffLimit"], spec["completions"], spec["template"]["spec"]["dnsPolicy"]
        (6, 1, 'ClusterFirst')
        >>> apply_builtin_defaults("pods", {"spec": {}})
        {'spec': {}}
    """
    defaulter = _DEFAULTERS.get(key)
    if defaulter is not None:
        defaulter(obj)
    return obj
