"""Kueue's RayCluster/RayJob admission webhooks as store admission hooks.

Mutating (on create, as ``mraycluster.kb.io``/``mrayjob.kb.io``): fill ``kueue.x-k8s.io/queue-name:
default`` when the label is missing and a LocalQueue named ``default`` exists in the namespace, then
set ``spec.suspend=true`` on every object with a queue name (unless a Kueue-managed RayJob owns it);
elastic jobs get the ``kueue.x-k8s.io/elastic-job`` scheduling gate. Validating (on create and
update, as ``vraycluster.kb.io``/``vrayjob.kb.io``) with upstream's field errors, rejected with 403
and ``admission webhook "<name>" denied the request: <errors>`` as the API server reports it.
Sources: Kueue v0.19.2 pkg/controller/jobs/raycluster/raycluster_webhook.go, common.go,
jobs/rayjob/rayjob_webhook.go, jobframework/defaults.go and validation.go; the topology rules in
:mod:`.tasvalidation`.

Example:
    >>> field_error("spec.shutdownAfterJobFinishes", "Invalid value", False, "a kueue managed job should ...")
    'spec.shutdownAfterJobFinishes: Invalid value: false: a kueue managed job should ...'
"""

from __future__ import annotations

import json
import re
from typing import Any

from rayqueue_local.apimachinery.status import aggregate
from rayqueue_local.controllers.kueue.tasvalidation import topology_errors
from rayqueue_local.controllers.kueue.workloads import (
    ELASTIC_JOB_ANNOTATION,
    PRIORITY_CLASS_LABEL,
    QUEUE_LABEL,
)
from rayqueue_local.storage.store import StoreError

__all__ = ["field_error", "install", "mutate", "validate_create", "validate_update"]

_MAX_POD_SETS = 18
_ELASTIC_GATE = "kueue.x-k8s.io/elastic-job"
_UNMANAGED_NAMESPACES = ("kube-system", "kueue-system")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_MAX_EXEC_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"
_IMMUTABLE = "field is immutable"
_MULTIKUEUE = "kueue.x-k8s.io/multikueue"


def _go(value: Any) -> str:
    """A value as Kubernetes field errors print it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict):
        inner = ", ".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in sorted(value.items()))
        return "map[string]string{" + inner + "}"
    return str(value)


def field_error(path: str, kind: str, value: Any, detail: str) -> str:
    """One ``k8s.io/apimachinery`` field error (``kind``: "Invalid value", "Forbidden", ...)."""
    if kind in ("Forbidden", "Required value"):
        return f"{path}: {kind}: {detail}"
    return f"{path}: {kind}: {_go(value)}: {detail}"


def _labels(obj: dict[str, Any]) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def _elastic(obj: dict[str, Any]) -> bool:
    return ((obj.get("metadata") or {}).get("annotations") or {}).get(ELASTIC_JOB_ANNOTATION) == "true"


def _cluster_spec_errors(job: dict[str, Any], spec: dict[str, Any], path: str, rayjob: bool) -> list[str]:
    errors = []
    if spec.get("enableInTreeAutoscaling") and not _elastic(job):
        if rayjob:
            detail = "a kueue managed job should only use autoscaling when workload slicing is enabled"
        else:
            detail = (
                "a kueue-managed RayCluster can use autoscaling only as an elastic job: enable the "
                "ElasticJobsViaWorkloadSlices feature gate and set the "
                f'"{ELASTIC_JOB_ANNOTATION}": "true" annotation'
            )
        errors.append(field_error(f"{path}.enableInTreeAutoscaling", "Invalid value", True, detail))
    if (
        not rayjob
        and _elastic(job)
        and spec.get("enableInTreeAutoscaling")
        and spec.get("managedBy") == _MULTIKUEUE
    ):
        detail = "in-tree autoscaling is not supported for a MultiKueue-managed elastic RayCluster"
        errors.append(field_error(f"{path}.enableInTreeAutoscaling", "Forbidden", None, detail))
    count = len(spec.get("workerGroupSpecs") or ()) + 1
    if count > _MAX_POD_SETS:
        errors.append(
            field_error(
                f"{path}.workerGroupSpecs", "Too many", count, f"must have at most {_MAX_POD_SETS} items"
            )
        )
    for i, group in enumerate(spec.get("workerGroupSpecs") or ()):
        if group.get("groupName") == "head":
            errors.append(
                field_error(
                    f"{path}.workerGroupSpecs[{i}].groupName",
                    "Forbidden",
                    None,
                    '"head" is reserved for the head group',
                )
            )
    return errors


def _job_errors(job: dict[str, Any]) -> list[str]:
    """ValidateJobOnCreate: the queue-name and max-exec-time labels."""
    errors = []
    labels = _labels(job)
    queue = labels.get(QUEUE_LABEL)
    if queue is not None and (len(queue) > 253 or not _DNS1123_SUBDOMAIN.match(queue)):
        detail = (
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'example.com', "
            "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        )
        errors.append(field_error(f"metadata.labels[{QUEUE_LABEL}]", "Invalid value", queue, detail))
    if _MAX_EXEC_LABEL in labels:
        raw = labels[_MAX_EXEC_LABEL]
        try:
            if int(raw) <= 0:
                errors.append(
                    field_error(
                        f"metadata.labels[{_MAX_EXEC_LABEL}]",
                        "Invalid value",
                        int(raw),
                        "should be greater than 0",
                    )
                )
        except ValueError:
            detail = f'strconv.Atoi: parsing "{raw}": invalid syntax'
            errors.append(field_error(f"metadata.labels[{_MAX_EXEC_LABEL}]", "Invalid value", raw, detail))
    return errors


def validate_create(job: dict[str, Any]) -> list[str]:
    """The create-time field errors of a RayCluster or RayJob (empty when valid)."""
    errors: list[str] = []
    spec = job.get("spec") or {}
    if _labels(job).get(QUEUE_LABEL):
        if job.get("kind") == "RayJob":
            selector, cluster = spec.get("clusterSelector"), spec.get("rayClusterSpec")
            if selector and cluster:
                detail = "a kueue managed job should not use an existing cluster"
                return [field_error("spec.clusterSelector", "Invalid value", selector, detail)]
            if selector:
                return []
            if not cluster:
                detail = "rayClusterSpec is required for Kueue-managed jobs that don't use clusterSelector"
                return [field_error("spec.rayClusterSpec", "Required value", None, detail)]
            if not spec.get("shutdownAfterJobFinishes"):
                detail = "a kueue managed job should delete the cluster after finishing"
                errors.append(field_error("spec.shutdownAfterJobFinishes", "Invalid value", False, detail))
            errors += _cluster_spec_errors(job, cluster, "spec.rayClusterSpec", True)
        else:
            errors += _cluster_spec_errors(job, spec, "spec", False)
    return errors + _job_errors(job) + topology_errors(job)


def validate_update(old: dict[str, Any], new: dict[str, Any], default_queue_exists: bool) -> list[str]:
    """The update-time field errors (queue name, priority class, elastic annotation, then create rules)."""
    if not _labels(new).get(QUEUE_LABEL) and not _labels(old).get(QUEUE_LABEL):
        return []
    errors = []
    suspended = bool((new.get("spec") or {}).get("suspend"))
    old_queue, new_queue = _labels(old).get(QUEUE_LABEL, ""), _labels(new).get(QUEUE_LABEL, "")
    path = f"metadata.labels[{QUEUE_LABEL}]"
    if not suspended and old_queue != new_queue:
        errors.append(field_error(path, "Invalid value", new_queue, _IMMUTABLE))
    if not new_queue and old_queue and default_queue_exists:
        errors.append(
            field_error(
                path, "Invalid value", "", "queue-name must not be empty in namespace with default queue"
            )
        )
    old_class, new_class = (
        _labels(old).get(PRIORITY_CLASS_LABEL, ""),
        _labels(new).get(PRIORITY_CLASS_LABEL, ""),
    )
    class_path = f"metadata.labels[{PRIORITY_CLASS_LABEL}]"
    if not suspended and not old_class and new_class:
        detail = "WorkloadPriorityClass cannot be added to a non-suspended workload"
        errors.append(field_error(class_path, "Invalid value", new_class, detail))
    elif old_class and not new_class:
        errors.append(
            field_error(
                class_path, "Invalid value", "", "WorkloadPriorityClass cannot be removed from a workload"
            )
        )
    if _elastic(old) != _elastic(new):
        errors.append(
            field_error(
                f"metadata.annotations[{ELASTIC_JOB_ANNOTATION}]", "Invalid value", _elastic(new), _IMMUTABLE
            )
        )
    return errors + validate_create(new)


def _unchanged_for_validation(old: dict[str, Any], new: dict[str, Any]) -> bool:
    om, nm = old.get("metadata") or {}, new.get("metadata") or {}
    return (
        old.get("spec") == new.get("spec")
        and om.get("labels") == nm.get("labels")
        and om.get("annotations") == nm.get("annotations")
    )


def _gate(template: dict[str, Any]) -> None:
    gates = template.setdefault("spec", {}).setdefault("schedulingGates", [])
    if {"name": _ELASTIC_GATE} not in gates:
        gates.append({"name": _ELASTIC_GATE})


def mutate(job: dict[str, Any], *, default_queue_exists: bool, owner_managed: bool) -> dict[str, Any]:
    """The mutating webhook on create: default queue name, suspend, elastic scheduling gates."""
    meta = job.setdefault("metadata", {})
    namespace = meta.get("namespace", "")
    if owner_managed:
        return job
    if default_queue_exists and not _labels(job).get(QUEUE_LABEL) and namespace not in _UNMANAGED_NAMESPACES:
        meta.setdefault("labels", {})[QUEUE_LABEL] = "default"
    if _labels(job).get(QUEUE_LABEL):
        job.setdefault("spec", {})["suspend"] = True
    if _elastic(job) and job.get("kind") == "RayCluster":
        spec = job.setdefault("spec", {})
        _gate(spec.setdefault("headGroupSpec", {}).setdefault("template", {}))
        for group in spec.get("workerGroupSpecs") or ():
            _gate(group.setdefault("template", {}))
    return job


def _denied(webhook: str, errors: list[str]) -> Exception:
    text = aggregate(errors)
    return StoreError(403, "Forbidden", f'admission webhook "{webhook}" denied the request: {text}')


def install(store: Any) -> None:
    """Register the RayCluster and RayJob hooks on ``store`` (reads LocalQueues and owners from it)."""

    def default_queue_exists(namespace: str) -> bool:
        return any(
            lq["metadata"]["name"] == "default" for lq in store.list("localqueues.kueue.x-k8s.io", namespace)
        )

    def owner_managed(job: dict[str, Any]) -> bool:
        for ref in (job.get("metadata") or {}).get("ownerReferences") or ():
            if ref.get("kind") == "RayJob" and ref.get("controller"):
                try:
                    owner = store.get("rayjobs.ray.io", job["metadata"].get("namespace"), ref["name"])
                except Exception:  # the owner is gone: treat the object as unmanaged by its parent
                    continue
                if _labels(owner).get(QUEUE_LABEL):
                    return True
        return False

    def hook_for(kind: str) -> Any:
        suffix = "raycluster" if kind == "RayCluster" else "rayjob"

        def hook(op: str, new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
            new.setdefault("kind", kind)
            namespace = (new.get("metadata") or {}).get("namespace", "")
            if op == "CREATE":
                managed_by_owner = owner_managed(new)
                new = mutate(
                    new, default_queue_exists=default_queue_exists(namespace), owner_managed=managed_by_owner
                )
                errors = [] if managed_by_owner else validate_create(new)
            else:
                if old is None or _unchanged_for_validation(old, new):
                    return new  # status and finalizer writes: nothing Kueue validates changed
                errors = validate_update(old, new, default_queue_exists(namespace))
            if errors:
                raise _denied(f"v{suffix}.kb.io", errors)
            return new

        return hook

    store.add_admission_hook("rayclusters.ray.io", hook_for("RayCluster"))
    store.add_admission_hook("rayjobs.ray.io", hook_for("RayJob"))
