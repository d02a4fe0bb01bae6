"""KEDA's ScaledObject controller and scale loop, emulated over the store.

Reconcile (on every change), as KEDA v2.20.2 [E controllers/keda/scaledobject_controller.go]:
conditions initialised (Ready/Active/Fallback Unknown, Paused False); the label
``scaledobject.keda.sh/name``; the target resolved from ``scaleTargetRef`` (apiVersion default
``apps/v1``, kind default ``Deployment``) and its ``/scale`` subresource checked through the
registry. No such kind: Ready False with ``no matches for kind``; target missing: event
"Target resource doesn't exist"; target without ``/scale``: event "Target resource doesn't expose
/scale subresource" and Ready False (``ScaledObjectCheckFailed``, "ScaledObject doesn't have correct
scaleTargetRef specification: the server could not find the requested resource"). Otherwise
``status.scaleTargetKind``/``scaleTargetGVKR``/``originalReplicaCount``/``hpaName``/trigger types,
and Ready True (``ScaledObjectReady``, "ScaledObject is defined correctly and is ready for scaling").

Scale loop (every ``pollingInterval``, default 30 s) [E pkg/scaling/executor/scale_scaledobjects.go]:
each Prometheus trigger is queried (:mod:`.prometheus_trigger`); active ⇔ any value >
``activationThreshold``. Active: ``Active`` True (``ScalerActive``); from 0 replicas scale to
``max(minReplicaCount, 1)``, otherwise to what the HPA would ask (``ceil(value/threshold)``
within ``[max(min, 1), max]``), and ``lastActiveTime`` = now. Not active: ``Active`` False
(``ScalerNotActive``); with replicas > 0 and ``minReplicaCount`` 0, scale to 0 once
``lastActiveTime + cooldownPeriod`` (default 300 s) has passed (``ScalerCooldown`` meanwhile;
without a lastActiveTime, ``initialCooldownPeriod`` from creation); below ``minReplicaCount``,
back up to it. A failing trigger: ``KEDAScalerFailed`` event with the error, ``health`` Failure,
and Ready False ``TriggerError`` when nothing is active. Pause annotations are honoured
(``autoscaling.keda.sh/paused``, ``paused-replicas``).

Example:
    >>> ScaledObjectController(registry=None).watches
    ('scaledobjects.keda.sh',)
"""

from __future__ import annotations

import copy
import logging
import time
from dataclasses import dataclass
from typing import Any

from rayqueue_local.apimachinery.time import now_rfc3339, parse_rfc3339
from rayqueue_local.controllers.base import QueueController
from rayqueue_local.controllers.keda.prometheus_trigger import PrometheusTrigger, TriggerError
from rayqueue_local.controllers.keda.secrets import resolve_auth
from rayqueue_local.controllers.keda.webhook import OWNER_LABEL, SCALEDOBJECTS, hpa_name
from rayqueue_local.controllers.kuberay.resources import set_condition
from rayqueue_local.storage.store import StoreError

log = logging.getLogger(__name__)

__all__ = ["ScaledObjectController"]

_READY_MSG = "ScaledObject is defined correctly and is ready for scaling"
_TARGET_ERR = "ScaledObject doesn't have correct scaleTargetRef specification"
_NO_SCALE = "Target resource doesn't expose /scale subresource"
_NOT_FOUND = "Target resource doesn't exist"
_PAUSED = "autoscaling.keda.sh/paused"
_PAUSED_REPLICAS = "autoscaling.keda.sh/paused-replicas"


@dataclass(frozen=True)
class _Reconcile:
    """The work item of a ScaledObject's reconcile (its spec, labels or annotations may have changed)."""

    namespace: str
    name: str


@dataclass(frozen=True)
class _Poll:
    """The work item of a ready ScaledObject's due poll of its triggers."""

    namespace: str
    name: str


class ScaledObjectController:
    """Reconciles ScaledObjects and runs their scale loops (one thread for both)."""

    name = "keda-scaledobject"
    watches = (SCALEDOBJECTS,)

    def __init__(self, registry: Any, *, tick: float = 0.25) -> None:
        self.registry = registry
        self._next_poll: dict[tuple[str, str], float] = {}
        self._polled_generation: dict[tuple[str, str], Any] = {}
        self._seen: dict[tuple[str, str], Any] = {}  # what the last reconcile saw (KEDA's predicates)
        outer = self

        class _Loop(QueueController):
            name = "keda-scaledobject"
            watches = (SCALEDOBJECTS,)
            resync_seconds = tick

            def keys_for(self, event: Any) -> list[Any]:
                meta = event.object.get("metadata", {})
                return [_Reconcile(meta.get("namespace"), meta.get("name"))]

            def resync(self) -> list[Any]:
                return list(outer._due())

            def reconcile(self, item: _Reconcile | _Poll) -> None:
                outer._handle(item)

        self._loop = _Loop()
        self.store: Any = None

    def start(self, store: Any) -> None:
        """Subscribe to the store and start the loop."""
        self.store = store
        self._loop.start(store)

    def stop(self) -> None:
        """Stop the loop."""
        self._loop.stop()

    # -- scheduling ---------------------------------------------------------------------------------
    def _due(self) -> list[_Reconcile | _Poll]:
        now = time.monotonic()
        items: list[_Reconcile | _Poll] = []
        if self.store is None:
            return items
        for so in self.store.list(SCALEDOBJECTS):
            key = (so["metadata"].get("namespace", ""), so["metadata"]["name"])
            ready = any(
                c.get("type") == "Ready" and c.get("status") == "True"
                for c in (so.get("status") or {}).get("conditions") or []
            )
            if ready and now >= self._next_poll.get(key, 0.0):
                items.append(_Poll(*key))
            elif not ready and now >= self._next_poll.get(key, 0.0):
                # a failed check is retried (upstream requeues the reconcile with a backoff)
                self._seen.pop(key, None)
                self._next_poll[key] = now + 2.0
                items.append(_Reconcile(*key))
        return items

    def _handle(self, item: _Reconcile | _Poll) -> None:
        namespace, name = item.namespace, item.name
        try:
            so = self.store.get(SCALEDOBJECTS, namespace, name)
        except StoreError:
            self._next_poll.pop((namespace, name), None)
            self._seen.pop((namespace, name), None)
            return
        if so["metadata"].get("deletionTimestamp"):
            return
        meta = so["metadata"]
        seen = (meta.get("uid"), meta.get("generation"), meta.get("labels"), meta.get("annotations"))
        try:
            if isinstance(item, _Poll):
                self._poll(so)
            elif self._seen.get((namespace, name)) != seen:  # status writes do not trigger a reconcile
                self._reconcile(so)
                fresh = self.store.get(SCALEDOBJECTS, namespace, name)["metadata"]
                self._seen[(namespace, name)] = (
                    fresh.get("uid"),
                    fresh.get("generation"),
                    fresh.get("labels"),
                    fresh.get("annotations"),
                )
        except StoreError as err:
            if err.code != 409:
                raise
            self._loop.enqueue(item)  # a concurrent write: try again with the fresh object

    # -- reconcile ----------------------------------------------------------------------------------
    def _target(self, so: dict[str, Any]) -> tuple[str | None, dict[str, str], str]:
        """(resource key or None, GVKR, error message)."""
        ref = (so.get("spec") or {}).get("scaleTargetRef") or {}
        api_version = ref.get("apiVersion") or "apps/v1"
        kind = ref.get("kind") or "Deployment"
        group, _, version = api_version.rpartition("/")
        key = self.registry.key_for_kind(api_version, kind) if self.registry is not None else None
        if key is None:
            return None, {}, f'no matches for kind "{kind}" in version "{api_version}"'
        rt = self.registry.get(key)
        gvkr = {"group": group, "version": version, "kind": kind, "resource": rt.plural}
        return key, gvkr, ""

    def _reconcile(self, so: dict[str, Any]) -> None:
        meta = so["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        if (meta.get("labels") or {}).get(OWNER_LABEL) != name:
            fresh = copy.deepcopy(so)
            fresh["metadata"].setdefault("labels", {})[OWNER_LABEL] = name
            so = self.store.update(SCALEDOBJECTS, fresh)
        status = copy.deepcopy(so.get("status") or {})
        conditions: list[dict[str, Any]] = status.get("conditions") or [
            {"type": "Ready", "status": "Unknown"},
            {"type": "Active", "status": "Unknown"},
            {"type": "Fallback", "status": "Unknown"},
            {"type": "Paused", "status": "False"},
        ]
        ref = (so.get("spec") or {}).get("scaleTargetRef") or {}
        key, gvkr, problem = self._target(so)
        if not ref.get("name"):
            problem = "ScaledObject.spec.scaleTargetRef.name is missing"
        elif key is not None:
            problem = self._check_scalable(so, key, gvkr, status)
        if problem:
            set_condition(conditions, "Ready", False, "ScaledObjectCheckFailed", f"{_TARGET_ERR}: {problem}")
            _set_unknown(conditions, "Active", "UnknownState", "ScaledObject check failed")
        else:
            was_ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
            if not was_ready:
                self._record(so, "ScaledObjectReady", "ScaledObject is ready for scaling")
            set_condition(conditions, "Ready", True, "ScaledObjectReady", _READY_MSG)
            status["hpaName"] = hpa_name(so)
            triggers = (so.get("spec") or {}).get("triggers") or []
            status["triggersTypes"] = ",".join(dict.fromkeys(t.get("type", "") for t in triggers))
            auths = [
                t["authenticationRef"]["name"]
                for t in triggers
                if (t.get("authenticationRef") or {}).get("name")
            ]
            if auths:
                status["authenticationsTypes"] = ",".join(dict.fromkeys(auths))
            status["externalMetricNames"] = [f"s{i}-{t.get('type', '')}" for i, t in enumerate(triggers)]
            generation = meta.get("generation")
            if self._polled_generation.get((namespace, name)) != generation:
                self._polled_generation[(namespace, name)] = generation
                self._next_poll[(namespace, name)] = 0.0  # a new or changed spec polls at once
        set_condition(
            conditions, "Fallback", False, "NoFallbackFound", "No fallbacks are active on this scaled object"
        )
        paused = (meta.get("annotations") or {}).get(_PAUSED, "").lower() == "true" or _PAUSED_REPLICAS in (
            meta.get("annotations") or {}
        )
        set_condition(
            conditions,
            "Paused",
            paused,
            "ScaledObjectPaused" if paused else "ScaledObjectUnpaused",
            "ScaledObject is paused" if paused else "pause annotation removed for ScaledObject",
        )
        status["conditions"] = conditions
        self._write(so, status)

    def _check_scalable(
        self, so: dict[str, Any], key: str, gvkr: dict[str, str], status: dict[str, Any]
    ) -> str:
        ns = so["metadata"].get("namespace")
        ref = so["spec"]["scaleTargetRef"]
        rt = self.registry.get(key)
        try:
            target = self.store.get(key, ns if rt.namespaced else None, ref["name"])
        except StoreError as err:
            self._record(so, "ScaledObjectCheckFailed", _NOT_FOUND, warning=True)
            return str(err.message)
        if rt.scale is None:
            self._record(so, "ScaledObjectCheckFailed", _NO_SCALE, warning=True)
            return "the server could not find the requested resource"
        gvk = f"{gvkr['group']}/{gvkr['version']}.{gvkr['kind']}"
        status["scaleTargetKind"] = gvk
        status["scaleTargetGVKR"] = gvkr
        if status.get("originalReplicaCount") is None:
            status["originalReplicaCount"] = int(rt.scale.get_replicas(target))
        return ""

    def _write(self, so: dict[str, Any], status: dict[str, Any]) -> None:
        if status != (so.get("status") or {}):
            fresh = copy.deepcopy(so)
            fresh["status"] = status
            self.store.update_status(SCALEDOBJECTS, fresh)

    # -- the scale loop -------------------------------------------------------------------------------
    def _poll(self, so: dict[str, Any]) -> None:
        meta, spec = so["metadata"], so.get("spec") or {}
        namespace, name = meta.get("namespace", ""), meta["name"]
        self._next_poll[(namespace, name)] = time.monotonic() + float(spec.get("pollingInterval") or 30)
        key, _, problem = self._target(so)
        if key is None or problem:
            return
        rt = self.registry.get(key)
        if rt.scale is None:
            return
        status = copy.deepcopy(so.get("status") or {})
        conditions = status.setdefault("conditions", [])
        annotations = meta.get("annotations") or {}
        target = self.store.get(key, namespace if rt.namespaced else None, spec["scaleTargetRef"]["name"])
        current = int(rt.scale.get_replicas(target))
        if _PAUSED_REPLICAS in annotations:
            wanted = int(annotations[_PAUSED_REPLICAS])
            status["pausedReplicaCount"] = wanted
            if current != wanted:
                self._scale(key, target, wanted)
            self._write(so, status)
            return
        if annotations.get(_PAUSED, "").lower() == "true":
            return

        active, errors, values = self._evaluate(so)
        log.debug("KEDA %s/%s: values=%s errors=%s replicas=%d", namespace, name, values, errors, current)
        health = dict(status.get("health") or {})
        for index, trigger in enumerate(spec.get("triggers") or []):
            metric = f"s{index}-{trigger.get('type', '')}"
            if index in errors:
                failures = int((health.get(metric) or {}).get("numberOfFailures", 0)) + 1
                health[metric] = {"numberOfFailures": failures, "status": "Failure"}
                self._record(so, "KEDAScalerFailed", errors[index], warning=True)
            else:
                health[metric] = {"numberOfFailures": 0, "status": "Happy"}
        status["health"] = health
        status["triggersActivity"] = {
            f"s{i}-{t.get('type', '')}": {"isActive": bool(values.get(i, (0.0, False))[1])}
            for i, t in enumerate(spec.get("triggers") or [])
        }
        set_condition(conditions, "Ready", True, "ScaledObjectReady", _READY_MSG)
        low = int(spec.get("minReplicaCount") or 0)
        high = 100 if spec.get("maxReplicaCount") is None else int(spec["maxReplicaCount"])
        idle = spec.get("idleReplicaCount")
        if active:
            set_condition(
                conditions, "Active", True, "ScalerActive", "Scaling is performed because triggers are active"
            )
            if current == 0 or (idle is not None and current < low):
                wanted = max(low, 1)
                self._scale(key, target, wanted)
                ref = spec["scaleTargetRef"]["name"]
                message = f"Scaled {{kind}} {namespace}/{ref} from {current} to {wanted}"
                message += ", triggered by prometheusScaler"
                self._event(so, status, "KEDAScaleTargetActivated", message)
            else:
                hpa = max(
                    (
                        self._trigger(so, i).desired_replicas(v, low, high)
                        for i, (v, _) in values.items()
                        if i not in errors
                    ),
                    default=current,
                )
                if hpa != current:
                    self._scale(key, target, hpa)
            status["lastActiveTime"] = now_rfc3339()
        else:
            set_condition(
                conditions,
                "Active",
                False,
                "ScalerNotActive",
                "Scaling is not performed because triggers are not active",
            )
            if errors and not spec.get("fallback"):
                set_condition(
                    conditions,
                    "Ready",
                    False,
                    "TriggerError",
                    "Triggers defined in ScaledObject are not working correctly",
                )
            elif (idle is not None and current > int(idle)) or (current > 0 and low == 0):
                self._scale_in(so, status, conditions, key, target, current, 0 if idle is None else int(idle))
            elif idle is None and current < low:
                self._scale(key, target, low)
        self._write(so, status)

    def _scale_in(
        self,
        so: dict[str, Any],
        status: dict[str, Any],
        conditions: list[dict[str, Any]],
        key: str,
        target: dict[str, Any],
        current: int,
        wanted: int,
    ) -> None:
        spec = so.get("spec") or {}
        cooldown = 300.0 if spec.get("cooldownPeriod") is None else float(spec["cooldownPeriod"])
        initial = float(spec.get("initialCooldownPeriod") or 0)
        last = parse_rfc3339(status.get("lastActiveTime"))
        created = parse_rfc3339(so["metadata"].get("creationTimestamp")) or 0.0
        now = time.time()
        if (last is None and created + initial < now) or (last is not None and last + cooldown < now):
            # Active stays False (ScalerNotActive), as the caller set it.
            self._scale(key, target, wanted)
            ref = spec["scaleTargetRef"]["name"]
            self._event(
                so,
                status,
                "KEDAScaleTargetDeactivated",
                f"Deactivated {{kind}} {so['metadata'].get('namespace')}/{ref} from {current} to {wanted}",
            )
        else:
            set_condition(
                conditions,
                "Active",
                False,
                "ScalerCooldown",
                "Scaler cooling down because triggers are not active",
            )

    def _event(self, so: dict[str, Any], status: dict[str, Any], reason: str, message: str) -> None:
        self._record(so, reason, message.replace("{kind}", status.get("scaleTargetKind", "")))

    def _record(self, so: dict[str, Any], reason: str, message: str, *, warning: bool = False) -> None:
        """An event of keda-operator on ``so``."""
        type_ = "Warning" if warning else "Normal"
        self.store.record_event(so, type=type_, reason=reason, message=message, source="keda-operator")

    def _trigger(self, so: dict[str, Any], index: int) -> PrometheusTrigger:
        trigger = so["spec"]["triggers"][index]
        auth = resolve_auth(self.store, so["metadata"].get("namespace", ""), trigger.get("authenticationRef"))
        return PrometheusTrigger.from_metadata(trigger.get("metadata") or {}, auth)

    def _evaluate(self, so: dict[str, Any]) -> tuple[bool, dict[int, str], dict[int, tuple[float, bool]]]:
        """(any active, errors by trigger index, (value, active) by trigger index)."""
        errors: dict[int, str] = {}
        values: dict[int, tuple[float, bool]] = {}
        for index, trigger in enumerate(so["spec"].get("triggers") or []):
            if trigger.get("type") != "prometheus":
                errors[index] = f"no scaler found for type: {trigger.get('type')}"
                continue
            try:
                scaler = self._trigger(so, index)
                value = scaler.value()
            except (TriggerError, ValueError) as err:
                errors[index] = str(err)
                continue
            values[index] = (value, scaler.is_active(value))
        return any(active for _, active in values.values()), errors, values

    def _scale(self, key: str, target: dict[str, Any], replicas: int) -> None:
        rt = self.registry.get(key)
        fresh = self.store.get(key, target["metadata"].get("namespace"), target["metadata"]["name"])
        if int(rt.scale.get_replicas(fresh)) == replicas:
            return
        updated = rt.scale.set_replicas(copy.deepcopy(fresh), replicas)
        self.store.update(key, updated)
        log.info("KEDA: scaled %s %s to %d", key, target["metadata"]["name"], replicas)


def _set_unknown(conditions: list[dict[str, Any]], ctype: str, reason: str, message: str) -> None:
    for cond in conditions:
        if cond.get("type") == ctype:
            cond.update({"status": "Unknown", "reason": reason, "message": message})
            return
    conditions.append({"type": ctype, "status": "Unknown", "reason": reason, "message": message})
