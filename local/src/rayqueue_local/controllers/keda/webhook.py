"""KEDA's validating webhook for ScaledObjects (``vscaledobject.kb.io``), as a store admission hook.

Checks, with KEDA v2.20.2's messages [E apis/keda/v1alpha1/scaledobject_webhook.go,
scaledobject_types.go, scaletriggers_types.go]:

- every trigger ``metadata`` value is a string (the CRD's ``map[string]string``; checked here too,
  with the schema's 422, so that a control plane without CRD schemas rejects it as well);
- the name is at most 63 characters, and so is the derived HPA name ``keda-hpa-<name>`` unless
  ``spec.advanced.horizontalPodAutoscalerConfig.name`` is set;
- ``minReplicaCount <= maxReplicaCount`` (default 0 and 100) and ``idleReplicaCount < minReplicaCount``;
- at least one trigger; trigger names unique; no ``useCachedMetrics`` on cpu/memory/cron triggers;
- fallback counts not negative.

A denial is a 403 whose message reads ``admission webhook "vscaledobject.kb.io" denied the request: ...``,
as the API server words a webhook's denial.

Example:
    >>> so = {"metadata": {"name": "x" * 60}, "spec": {"scaleTargetRef": {"name": "t"},
    ...       "triggers": [{"type": "prometheus", "metadata": {"threshold": "1"}}]}}
    >>> validate(so)[:40]
    'HPA name "keda-hpa-xxxxxxxxxxxxxxxxxxxxx'
"""

from __future__ import annotations

from typing import Any

from rayqueue_local.storage.store import StoreError

__all__ = ["OWNER_LABEL", "SCALEDOBJECTS", "hpa_name", "install", "validate"]

SCALEDOBJECTS = "scaledobjects.keda.sh"  # the resource key of KEDA's ScaledObjects
_WEBHOOK = "vscaledobject.kb.io"
_MAX_LABEL = 63
OWNER_LABEL = "scaledobject.keda.sh/name"  # on the HPA: the ScaledObject that owns it


def hpa_name(so: dict[str, Any]) -> str:
    """The HPA KEDA would create: ``advanced.horizontalPodAutoscalerConfig.name`` or ``keda-hpa-<name>``."""
    advanced = (so.get("spec") or {}).get("advanced") or {}
    configured = (advanced.get("horizontalPodAutoscalerConfig") or {}).get("name")
    return str(configured) if configured else f"keda-hpa-{so['metadata']['name']}"


def _types(so: dict[str, Any]) -> str | None:
    for index, trigger in enumerate((so.get("spec") or {}).get("triggers") or []):
        for key, value in (trigger.get("metadata") or {}).items():
            if not isinstance(value, str):
                kind = (
                    "integer"
                    if isinstance(value, int) and not isinstance(value, bool)
                    else type(value).__name__
                )
                if isinstance(value, bool):
                    kind = "boolean"
                elif isinstance(value, float):
                    kind = "number"
                path = f"spec.triggers[{index}].metadata.{key}"
                return f'{path}: Invalid value: "{kind}": {path} in body must be of type string: "{kind}"'
    return None


def _replicas(spec: dict[str, Any]) -> str | None:
    low = int(spec.get("minReplicaCount") or 0)
    high = spec.get("maxReplicaCount")
    high = 100 if high is None else int(high)
    if low > high:
        return f"MinReplicaCount={low} must be less than MaxReplicaCount={high}"
    idle = spec.get("idleReplicaCount")
    if idle is not None and int(idle) >= low:
        return f"IdleReplicaCount={int(idle)} must be less than MinReplicaCount={low}"
    return None


def _triggers(spec: dict[str, Any]) -> str | None:
    triggers = spec.get("triggers") or []
    if not triggers:
        return "no triggers defined in the ScaledObject/ScaledJob"
    names: set[str] = set()
    for trigger in triggers:
        kind = trigger.get("type", "")
        if trigger.get("useCachedMetrics") and kind in ("cpu", "memory", "cron"):
            return f'property "useCachedMetrics" is not supported for "{kind}" scaler'
        name = trigger.get("name") or ""
        if name:
            if name in names:
                return (
                    f'triggerName "{name}" is defined multiple times in the ScaledObject/ScaledJob, '
                    "but it must be unique"
                )
            names.add(name)
    return None


def validate(so: dict[str, Any]) -> str | None:
    """The first reason KEDA's webhook would deny ``so`` for, or ``None`` if it is accepted."""
    name = so["metadata"]["name"]
    spec = so.get("spec") or {}
    if problem := _types(so):
        return problem
    if problem := _replicas(spec):
        return problem
    if len(name) > _MAX_LABEL:
        return (
            f'scaledobject name "{name}" is {len(name)} characters long; must be no more than {_MAX_LABEL} '
            f'characters because it is used as the "{OWNER_LABEL}" label value'
        )
    hpa = hpa_name(so)
    if len(hpa) > _MAX_LABEL:
        return (
            f'HPA name "{hpa}" derived from scaledobject is {len(hpa)} characters long; must be no more than '
            f"{_MAX_LABEL} characters; set spec.advanced.horizontalPodAutoscalerConfig.name to a shorter "
            "name or shorten the scaledobject name"
        )
    fallback = spec.get("fallback")
    if fallback is not None:
        failures, replicas = int(fallback.get("failureThreshold", 0)), int(fallback.get("replicas", 0))
        if failures < 0 or replicas < 0:
            return (
                f"FailureThreshold={failures} & Replicas={replicas} must both be greater than or equal to 0"
            )
    return _triggers(spec)


def install(store: Any) -> None:
    """Register the webhook on ``store`` for ScaledObject creates and updates."""

    def hook(operation: str, new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        if new["metadata"].get("deletionTimestamp"):
            return new
        if (
            old is not None
            and old.get("spec") == new.get("spec")
            and old["metadata"]["name"] == new["metadata"]["name"]
        ):
            return new  # status or metadata writes are not re-validated
        type_problem = _types(new)
        if type_problem is not None:  # the CRD schema's 422, which a real server gives before any webhook
            name = new["metadata"]["name"]
            raise StoreError(422, "Invalid", f'ScaledObject.keda.sh "{name}" is invalid: {type_problem}')
        problem = validate(new)
        if problem is not None:
            raise StoreError(
                403, "Forbidden", f'admission webhook "{_WEBHOOK}" denied the request: {problem}'
            )
        return new

    store.add_admission_hook(SCALEDOBJECTS, hook)
