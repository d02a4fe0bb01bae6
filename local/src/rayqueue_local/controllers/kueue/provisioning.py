"""Kueue's ProvisioningRequest admission check controller (v0.19.2,
``pkg/controller/admissionchecks/provisioning/controller.go``), for the local control plane.

For each Workload with reserved quota and a check whose AdmissionCheck has ``controllerName:
kueue.x-k8s.io/provisioning-request``, it reads the ProvisioningRequestConfig named by the check's
``spec.parameters`` and:

* when no pod set uses a ``managedResources`` resource, sets the check ``Ready`` with "the
  provisioning request is not needed"; a missing config leaves it ``Pending`` with "the check is not
  active";
* otherwise creates ProvisioningRequest ``<workload>-<check>-<attempt>`` (autoscaling.x-k8s.io/v1,
  label ``kueue.x-k8s.io/managed=true``, ``provisioningClassName`` and ``parameters`` from the config,
  controller-owned by the Workload) with one PodTemplate ``ppt-<request>-<podset>`` per pod set that
  uses the managed resources (the flavors' nodeLabels merged in), and the event
  ``ProvisioningRequestCreated`` "Created ProvisioningRequest: \\"<name>\\"". The attempt is the
  check's ``retryCount + 1``, or the last request's attempt + 1 when that one failed;
* follows the request into the check (``syncCheckStates``): ``Failed`` with attempts left
  (attempt <= ``retryStrategy.backoffLimitCount``) -> ``Retry`` "Retrying after failure: <message>" with
  ``requeueAfterSeconds`` = min(base * 2^retryCount, max) (``UpdateAdmissionCheckRequeueState``),
  ``Failed`` on the last attempt -> ``Rejected`` with the request's message, ``CapacityRevoked`` on an
  active Workload -> ``Rejected``, ``Provisioned`` -> ``Ready`` (with the request's message and
  ``podSetUpdates`` annotating the pods with the request), ``Accepted`` -> ``Pending`` with the
  ``Provisioned`` condition's message, no condition yet -> ``Pending`` with no message; each state change
  records ``AdmissionCheckUpdated`` "Admission check <name> updated state from <old> to <new>[ with
  message: <message>]";
* deletes the requests of a finished or evicted Workload (``CleanupProvisioningRequestsOnEviction``,
  on by default in v0.19) and those of earlier attempts.

It also keeps each provisioning AdmissionCheck's ``Active`` condition (``admissioncheck_reconciler.go``):
``True``/``Active`` "The admission check is active" when its config exists, else ``False``/
``BadParametersRef``. The ``retryStrategy`` defaults are the CRD's: 3 retries, 60 s base, 1800 s max.

Example:
    >>> provisioning_request_name("job-ws-1a2b3", "sample-prov", 2)
    'job-ws-1a2b3-sample-prov-2'
    >>> attempt_of("job-ws-1a2b3-sample-prov-2", "job-ws-1a2b3", "sample-prov")
    2
    >>> retry_backoff_seconds(60, 1800, 0), retry_backoff_seconds(60, 1800, 10)
    (60, 1800)
"""

from __future__ import annotations

import copy
import re
from typing import Any

from rayqueue_local.apimachinery.time import now_rfc3339
from rayqueue_local.controllers.base import QueueController
from rayqueue_local.controllers.kueue import conditions as cond
from rayqueue_local.controllers.kueue import messages as msg
from rayqueue_local.controllers.kueue.ops import (
    ADMISSION_CHECKS,
    CHECKS,
    FLAVORS,
    PROVISIONING_REQUEST_CONFIGS,
    WORKLOADS,
    Checks,
    StoreOps,
    WorkloadItem,
    metadata_of,
)
from rayqueue_local.storage.store import StoreError

__all__ = [
    "PROVISIONING_CONTROLLER_NAME",
    "PROVISIONING_REQUESTS",
    "ProvisioningController",
    "attempt_of",
    "provisioning_request_name",
    "retry_backoff_seconds",
    "retry_strategy",
]

PROVISIONING_CONTROLLER_NAME = "kueue.x-k8s.io/provisioning-request"
"""The ``spec.controllerName`` of AdmissionChecks this controller serves."""

PROVISIONING_REQUESTS = "provisioningrequests.autoscaling.x-k8s.io"
"""Store key of ProvisioningRequests (autoscaling.x-k8s.io/v1)."""

_PODTEMPLATES = "podtemplates"
_MANAGED_LABEL = {"kueue.x-k8s.io/managed": "true"}
_CHECK_INACTIVE = "the check is not active"
_NO_REQUEST_NEEDED = "the provisioning request is not needed"
_MAX_NAME = 253


def _limit_name(name: str) -> str:
    """Upstream cuts names over 253 characters and appends a hash; ours stay short (kept as is)."""
    return name[:_MAX_NAME]


def provisioning_request_name(workload: str, check: str, attempt: int) -> str:
    """``<workload>-<check>-<attempt>`` (``ProvisioningRequestName``).

    Example:
        >>> provisioning_request_name("wl", "prov", 1)
        'wl-prov-1'
    """
    return _limit_name(f"{workload}-{check}-{attempt}")


def attempt_of(request_name: str, workload: str, check: str) -> int | None:
    """The attempt number in a request's name, or ``None`` when it is not ``<workload>-<check>-<n>``.

    Example:
        >>> attempt_of("wl-prov-3", "wl", "prov"), attempt_of("other-1", "wl", "prov")
        (3, None)
    """
    match = re.fullmatch(re.escape(f"{workload}-{check}-") + r"([0-9]+)", request_name)
    return int(match.group(1)) if match else None


def retry_strategy(config: dict[str, Any]) -> tuple[int, int, int]:
    """``(backoffLimitCount, backoffBaseSeconds, backoffMaxSeconds)`` of a ProvisioningRequestConfig,
    with the CRD's defaults (3, 60, 1800).

    Example:
        >>> retry_strategy({"spec": {"retryStrategy": {"backoffLimitCount": 2}}})
        (2, 60, 1800)
    """
    strategy = ((config.get("spec") or {}).get("retryStrategy")) or {}
    return (
        int(strategy.get("backoffLimitCount", 3)),
        int(strategy.get("backoffBaseSeconds", 60)),
        int(strategy.get("backoffMaxSeconds", 1800)),
    )


def retry_backoff_seconds(base: int, maximum: int, retry_count: int) -> int:
    """``requeueAfterSeconds`` of a check's next retry: ``base * 2^retry_count`` capped at ``maximum``
    (``UpdateAdmissionCheckRequeueState``; upstream's jitter is 0.0001 and is left out).

    Example:
        >>> [retry_backoff_seconds(1, 5, n) for n in range(4)]
        [1, 2, 4, 5]
    """
    return int(min(base * 2**retry_count, maximum))


def _condition(obj: dict[str, Any], ctype: str) -> dict[str, Any] | None:
    return cond.find(obj, ctype)


def _uses(pod_spec: dict[str, Any], resources: set[str]) -> bool:
    for container in [*(pod_spec.get("initContainers") or ()), *(pod_spec.get("containers") or ())]:
        res = container.get("resources") or {}
        if resources & {*(res.get("requests") or {}), *(res.get("limits") or {})}:
            return True
    return False


def _needed_pod_sets(wl: dict[str, Any], config: dict[str, Any]) -> list[dict[str, Any]]:
    """The pod sets the request is for (``reqIsNeeded``/``requiredPodSets``): count > 0 and, when the
    config lists ``managedResources``, using one of them."""
    managed = set((config.get("spec") or {}).get("managedResources") or ())
    return [
        ps
        for ps in (wl.get("spec") or {}).get("podSets") or ()
        if int(ps.get("count", 1)) > 0
        and (not managed or _uses(((ps.get("template") or {}).get("spec")) or {}, managed))
    ]


class ProvisioningController(StoreOps, QueueController):
    """Kueue's provisioning admission check controller; see the module docstring.

    Example:
        >>> ProvisioningController().name, PROVISIONING_REQUESTS in ProvisioningController.watches
        ('kueue-provisioning', True)
    """

    name = "kueue-provisioning"
    watches = (WORKLOADS, PROVISIONING_REQUESTS, ADMISSION_CHECKS, PROVISIONING_REQUEST_CONFIGS)
    resync_seconds = 2.0

    def keys_for(self, event: Any) -> list[Checks | WorkloadItem]:
        """A Workload, the Workload owning a request, or every check (a check or config changed)."""
        meta = metadata_of(event.object)
        if event.key == WORKLOADS:
            return [WorkloadItem(meta.get("namespace"), meta.get("name") or "")]
        if event.key == PROVISIONING_REQUESTS:
            return [
                WorkloadItem(meta.get("namespace"), ref.get("name") or "")
                for ref in meta.get("ownerReferences") or ()
                if ref.get("kind") == "Workload"
            ]
        return [CHECKS]

    def resync(self) -> list[Checks | WorkloadItem]:
        """The checks' ``Active`` conditions and every Workload holding a reservation."""
        items: list[Checks | WorkloadItem] = [CHECKS]
        for wl in self.store.list(WORKLOADS):
            if (wl.get("status") or {}).get("admissionChecks"):
                items.append(
                    WorkloadItem(metadata_of(wl).get("namespace"), metadata_of(wl).get("name") or "")
                )
        return items

    def reconcile(self, item: Checks | WorkloadItem) -> None:
        """One work item; a write conflict re-queues it."""
        try:
            if isinstance(item, Checks):
                self._sync_checks()
            else:
                self._reconcile_workload(item.namespace, item.name)
        except StoreError as exc:
            if exc.code == 409:
                self.enqueue(item)
            elif exc.code != 404:
                raise

    # -- AdmissionCheck status --------------------------------------------------------------------
    def _config_for(self, check: dict[str, Any] | None) -> dict[str, Any] | None:
        params = ((check or {}).get("spec") or {}).get("parameters") or {}
        if params.get("kind") != "ProvisioningRequestConfig" or not params.get("name"):
            return None
        return self._get(PROVISIONING_REQUEST_CONFIGS, None, params["name"])

    def _sync_checks(self) -> None:
        for check in self.store.list(ADMISSION_CHECKS):
            if (check.get("spec") or {}).get("controllerName") != PROVISIONING_CONTROLLER_NAME:
                continue
            new = copy.deepcopy(check)
            if self._config_for(check) is not None:
                state = (True, "Active", "The admission check is active")
            else:
                name = ((check.get("spec") or {}).get("parameters") or {}).get("name", "")
                state = (
                    False,
                    "BadParametersRef",
                    f'provisioningrequestconfigs.kueue.x-k8s.io "{name}" not found',
                )
            if cond.set_condition(new, "Active", *state, now_rfc3339()):
                self.store.update_status(ADMISSION_CHECKS, new)

    # -- Workloads --------------------------------------------------------------------------------
    def _owned_requests(self, wl: dict[str, Any]) -> list[dict[str, Any]]:
        uid = metadata_of(wl).get("uid")
        return [
            pr
            for pr in self.store.list(PROVISIONING_REQUESTS, metadata_of(wl).get("namespace"))
            if any(ref.get("uid") == uid for ref in metadata_of(pr).get("ownerReferences") or ())
        ]

    def _delete(self, key: str, obj: dict[str, Any]) -> None:
        try:
            self.store.delete(key, metadata_of(obj).get("namespace"), metadata_of(obj)["name"])
        except StoreError as exc:
            if exc.code != 404:
                raise

    def _reconcile_workload(self, namespace: str | None, name: str) -> None:
        wl = self._get(WORKLOADS, namespace, name)
        if wl is None:
            return
        finished, evicted = cond.is_true(wl, msg.FINISHED), cond.is_true(wl, msg.EVICTED)
        reserved = cond.is_true(wl, msg.QUOTA_RESERVED) and bool((wl.get("status") or {}).get("admission"))
        if not reserved and not finished and not evicted:
            return
        owned = self._owned_requests(wl)
        if finished or evicted:
            for pr in owned:
                self._delete(PROVISIONING_REQUESTS, pr)
            return
        configs: dict[str, dict[str, Any] | None] = {}
        for state in (wl.get("status") or {}).get("admissionChecks") or ():
            check = self._get(ADMISSION_CHECKS, None, state["name"])
            if (
                check is None
                or (check.get("spec") or {}).get("controllerName") != PROVISIONING_CONTROLLER_NAME
            ):
                continue
            configs[state["name"]] = self._config_for(check)
        if not configs:
            return
        last: dict[str, dict[str, Any]] = {}
        for check_name, config in configs.items():
            if config is None or not _needed_pod_sets(wl, config):
                continue
            for pr in owned:
                attempt = attempt_of(metadata_of(pr)["name"], name, check_name)
                if attempt is None:
                    continue
                synced = (pr.get("spec") or {}).get("provisioningClassName") == (
                    config.get("spec") or {}
                ).get("provisioningClassName")
                best = last.get(check_name)
                if synced and (
                    best is None or (attempt_of(metadata_of(best)["name"], name, check_name) or 0) < attempt
                ):
                    last[check_name] = pr
        wl = self._sync_check_states(wl, configs, last)
        keep = {metadata_of(pr)["name"] for pr in last.values()}
        for pr in owned:
            if metadata_of(pr)["name"] not in keep:
                self._delete(PROVISIONING_REQUESTS, pr)
        self._create_requests(wl, configs, last)

    def _sync_check_states(
        self,
        wl: dict[str, Any],
        configs: dict[str, dict[str, Any] | None],
        last: dict[str, dict[str, Any]],
    ) -> dict[str, Any]:
        new = copy.deepcopy(wl)
        states = {c["name"]: c for c in new["status"].get("admissionChecks") or ()}
        now = now_rfc3339()
        events: list[str] = []
        name = metadata_of(wl)["name"]
        for check_name, config in configs.items():
            state = states[check_name]
            old_state = state.get("state")
            if config is None:
                state.update(state="Pending", message=_CHECK_INACTIVE)
            elif not _needed_pod_sets(wl, config):
                if state.get("state") != "Ready":
                    state.update(state="Ready", message=_NO_REQUEST_NEEDED)
                    state.pop("podSetUpdates", None)
            else:
                pr = last.get(check_name)
                if pr is None:
                    continue
                limit, base, maximum = retry_strategy(config)
                attempt = attempt_of(metadata_of(pr)["name"], name, check_name) or 1
                failed = _condition(pr, "Failed")
                revoked = _condition(pr, "CapacityRevoked")
                provisioned = _condition(pr, "Provisioned")
                accepted = _condition(pr, "Accepted")
                if failed is not None and failed.get("status") == "True":
                    if attempt <= limit:
                        state["message"] = f"Retrying after failure: {failed.get('message', '')}"
                        if attempt > int(state.get("retryCount") or 0):
                            state["state"] = "Retry"
                            state["requeueAfterSeconds"] = retry_backoff_seconds(
                                base, maximum, int(state.get("retryCount") or 0)
                            )
                    else:
                        state.update(state="Rejected", message=failed.get("message", ""))
                elif revoked is not None and revoked.get("status") == "True":
                    if (wl.get("spec") or {}).get("active", True) is not False:
                        state.update(state="Rejected", message=revoked.get("message", ""))
                elif provisioned is not None and provisioned.get("status") == "True":
                    if state.get("state") != "Ready":
                        state.update(state="Ready", message=provisioned.get("message", ""))
                        state["podSetUpdates"] = self._pod_set_updates(pr, config, wl)
                elif accepted is not None and accepted.get("status") == "True":
                    if provisioned is not None:
                        state.update(state="Pending", message=provisioned.get("message", ""))
                else:
                    state.update(state="Pending", message="")
            if state.get("state") != old_state:
                state["lastTransitionTime"] = now
                text = f"Admission check {check_name} updated state from {old_state} to {state['state']}"
                if state.get("message"):
                    text += f" with message: {state['message']}"
                events.append(text)
        if new["status"].get("admissionChecks") == (wl.get("status") or {}).get("admissionChecks"):
            return wl
        stored = dict(self.store.update_status(WORKLOADS, new))
        for text in events:
            self._event(stored, "AdmissionCheckUpdated", text, source="kueue-provisioning-request")
        return stored

    def _pod_set_updates(
        self, pr: dict[str, Any], config: dict[str, Any], wl: dict[str, Any]
    ) -> list[dict[str, Any]]:
        by_template = {
            _limit_name(f"ppt-{metadata_of(pr)['name']}-{ps['name']}"): ps["name"]
            for ps in (wl.get("spec") or {}).get("podSets") or ()
        }
        return [
            {
                "name": by_template.get(ps["podTemplateRef"]["name"], ""),
                "annotations": {
                    "autoscaling.x-k8s.io/consume-provisioning-request": metadata_of(pr)["name"],
                    "autoscaling.x-k8s.io/provisioning-class-name": (pr.get("spec") or {}).get(
                        "provisioningClassName", ""
                    ),
                },
            }
            for ps in (pr.get("spec") or {}).get("podSets") or ()
        ]

    def _create_requests(
        self,
        wl: dict[str, Any],
        configs: dict[str, dict[str, Any] | None],
        last: dict[str, dict[str, Any]],
    ) -> None:
        name, namespace = metadata_of(wl)["name"], metadata_of(wl)["namespace"]
        states = {c["name"]: c for c in (wl.get("status") or {}).get("admissionChecks") or ()}
        for check_name, config in configs.items():
            if config is None:
                continue
            pod_sets = _needed_pod_sets(wl, config)
            state = states.get(check_name) or {}
            if not pod_sets or state.get("state") == "Ready":
                continue
            pr = last.get(check_name)
            attempt = int(state.get("retryCount") or 0) + 1
            if pr is not None:
                failed = _condition(pr, "Failed")
                if not (
                    failed is not None and failed.get("status") == "True" and state.get("state") == "Pending"
                ):
                    continue
                attempt = (attempt_of(metadata_of(pr)["name"], name, check_name) or 1) + 1
            request = provisioning_request_name(name, check_name, attempt)
            owner = {
                "apiVersion": self._workload_api_version(),
                "kind": "Workload",
                "name": name,
                "uid": metadata_of(wl).get("uid"),
                "controller": True,
                "blockOwnerDeletion": True,
            }
            refs: list[dict[str, Any]] = []
            for ps in pod_sets:
                template_name = _limit_name(f"ppt-{request}-{ps['name']}")
                if self._get(_PODTEMPLATES, namespace, template_name) is None:
                    self.store.create(_PODTEMPLATES, self._pod_template(wl, ps, template_name, owner))
                refs.append({"podTemplateRef": {"name": template_name}, "count": int(ps.get("count", 1))})
            spec: dict[str, Any] = {
                "provisioningClassName": (config.get("spec") or {}).get("provisioningClassName", ""),
                "podSets": refs,
            }
            if (config.get("spec") or {}).get("parameters"):
                spec["parameters"] = dict(config["spec"]["parameters"])
            body: dict[str, Any] = {
                "apiVersion": "autoscaling.x-k8s.io/v1",
                "kind": "ProvisioningRequest",
                "metadata": {
                    "name": request,
                    "namespace": namespace,
                    "labels": dict(_MANAGED_LABEL),
                    "ownerReferences": [owner],
                },
                "spec": spec,
            }
            try:
                created = self.store.create(PROVISIONING_REQUESTS, body)
            except StoreError as exc:
                if exc.code != 409:
                    raise
                continue
            # The templates now belong to the request (syncProvisionRequestsPodTemplates).
            pr_ref = {
                "apiVersion": "autoscaling.x-k8s.io/v1",
                "kind": "ProvisioningRequest",
                "name": request,
                "uid": metadata_of(created).get("uid"),
                "controller": True,
                "blockOwnerDeletion": True,
            }
            for ref in refs:
                template = self._get(_PODTEMPLATES, namespace, ref["podTemplateRef"]["name"])
                if template is not None:
                    template["metadata"]["ownerReferences"] = [pr_ref]
                    self.store.update(_PODTEMPLATES, template)
            self._event(
                wl,
                "ProvisioningRequestCreated",
                f'Created ProvisioningRequest: "{request}"',
                source="kueue-provisioning-request",
            )

    def _workload_api_version(self) -> str:
        """The Workload ``apiVersion`` an owner reference names: the preferred version served (a plane
        serving ``v1beta1`` alone names ``kueue.x-k8s.io/v1beta1``, as Kueue before 0.15 does)."""
        rt = self.store.registry.lookup_key(WORKLOADS)
        return (
            rt.api_version_for(rt.versions[0]) if rt is not None and rt.versions else "kueue.x-k8s.io/v1beta2"
        )

    def _pod_template(
        self, wl: dict[str, Any], pod_set: dict[str, Any], name: str, owner: dict[str, Any]
    ) -> dict[str, Any]:
        """The pod set's template with its assigned flavors' nodeLabels and tolerations merged in."""
        template = copy.deepcopy(pod_set.get("template") or {})
        pod = template.setdefault("spec", {})
        flavors = {metadata_of(f)["name"]: f for f in self.store.list(FLAVORS)}
        admission = (wl.get("status") or {}).get("admission") or {}
        for psa in admission.get("podSetAssignments") or ():
            if psa.get("name") != pod_set.get("name"):
                continue
            for flavor_name in sorted(set((psa.get("flavors") or {}).values())):
                flavor_spec = (flavors.get(flavor_name) or {}).get("spec") or {}
                if flavor_spec.get("nodeLabels"):
                    pod.setdefault("nodeSelector", {}).update(flavor_spec["nodeLabels"])
                for toleration in flavor_spec.get("tolerations") or ():
                    if toleration not in pod.setdefault("tolerations", []):
                        pod["tolerations"].append(copy.deepcopy(toleration))
        return {
            "apiVersion": "v1",
            "kind": "PodTemplate",
            "metadata": {
                "name": name,
                "namespace": metadata_of(wl)["namespace"],
                "labels": dict(_MANAGED_LABEL),
                "ownerReferences": [owner],
            },
            "template": template,
        }
