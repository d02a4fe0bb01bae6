"""Pure builders: the Kueue Workload for a RayCluster or RayJob, and pod-template changes on admission.

Follows Kueue v0.19.2: names from ``pkg/controller/jobframework/workload_names.go``, pod sets from
``pkg/controller/jobs/raycluster/common.go`` (BuildPodSets) and ``jobs/rayjob/rayjob_controller.go``,
metadata from ``jobframework/reconciler.go`` (ConstructWorkload), flavor and admission-check
``podSetUpdates`` injection from ``pkg/podset`` (Merge/RestorePodSpec). No I/O.

Example:
    >>> workload_name("RayCluster", "ray.io", "demo", "11111111-2222-3333-4444-555555555555")
    'raycluster-demo-4e803'
"""

from __future__ import annotations

import copy
import hashlib
import re
from typing import Any

from rayqueue_local.controllers.kueue.amounts import to_amount

__all__ = [
    "CLUSTER_QUEUE_LABEL",
    "ELASTIC_JOB_ANNOTATION",
    "JOB_UID_LABEL",
    "LOCAL_QUEUE_LABEL",
    "MAX_EXEC_TIME_LABEL",
    "PODSET_LABEL",
    "PRIORITY_CLASS_LABEL",
    "QUEUE_LABEL",
    "RESOURCE_IN_USE_FINALIZER",
    "WORKLOAD_ANNOTATION",
    "apply_admission",
    "build_workload",
    "job_pod_sets",
    "pod_requests",
    "pod_set_updates",
    "pod_sets_match",
    "queue_name",
    "restore_pod_templates",
    "workload_name",
]

# Kueue's labels, annotation and finalizer on jobs and Workloads
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
RESOURCE_IN_USE_FINALIZER = "kueue.x-k8s.io/resource-in-use"
ELASTIC_JOB_ANNOTATION = "kueue.x-k8s.io/elastic-job"
MAX_EXEC_TIME_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"
_KUEUE_GROUP = "kueue.x-k8s.io"
_RAY_API_VERSION = "ray.io/v1"
_MAX_PREFIX = 253 - 1 - 5
#: What Kueue puts on an admitted job's pod templates (pkg/constants, apis/kueue/v1beta2/topology_types.go).
WORKLOAD_ANNOTATION = "kueue.x-k8s.io/workload"
#: The pod set's name, on each admitted pod template.
PODSET_LABEL = "kueue.x-k8s.io/podset"
#: The Workload's LocalQueue, on each admitted pod template (AssignQueueLabelsForPods).
LOCAL_QUEUE_LABEL = "kueue.x-k8s.io/local-queue-name"
#: The admitting ClusterQueue, on each admitted pod template when it is a DNS-1123 label.
CLUSTER_QUEUE_LABEL = "kueue.x-k8s.io/cluster-queue-name"
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")

_AUTOSCALER = {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"cpu": "500m", "memory": "512Mi"}}
_REDIS_CLEANUP = {"cpu": "200m", "memory": "256Mi"}
_SUBMITTER = {"requests": {"cpu": "500m", "memory": "200Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}}


def workload_name(kind: str, group: str, name: str, uid: str) -> str:
    """Kueue's Workload name for an owner: ``lower(kind)-name`` (cut to 247) plus 5 hex of a SHA-1.

    Example:
        >>> workload_name("Job", "batch", "name", "uid")
        'job-name-ef3a1'
    """
    digest = hashlib.sha1(f"{kind}\n{group}\n{name}\n{uid}".encode()).hexdigest()
    return f"{(kind.lower() + '-' + name)[:_MAX_PREFIX]}-{digest[:5]}"


def queue_name(job: dict[str, Any]) -> str:
    """The ``kueue.x-k8s.io/queue-name`` label of a job ("" when absent)."""
    return ((job.get("metadata") or {}).get("labels") or {}).get(QUEUE_LABEL, "")


def _container_requests(container: dict[str, Any]) -> dict[str, int]:
    resources = container.get("resources") or {}
    requests = dict(resources.get("limits") or {})  # Kubernetes defaults missing requests to limits
    requests.update(resources.get("requests") or {})
    return {name: to_amount(name, value) for name, value in requests.items()}


def pod_requests(spec: dict[str, Any]) -> dict[str, int]:
    """Per-pod requests in Kueue units: the containers' sum, at least each init container, plus overhead.

    Example:
        >>> pod_requests({"containers": [{"resources": {"limits": {"cpu": "2", "nvidia.com/gpu": 1},
        ...                                             "requests": {"cpu": "1"}}},
        ...                              {"resources": {"requests": {"cpu": "500m"}}}]})
        {'cpu': 1500, 'nvidia.com/gpu': 1}
    """
    total: dict[str, int] = {}
    for container in spec.get("containers") or ():
        for name, value in _container_requests(container).items():
            total[name] = total.get(name, 0) + value
    for container in spec.get("initContainers") or ():
        for name, value in _container_requests(container).items():
            total[name] = max(total.get(name, 0), value)
    for name, value in (spec.get("overhead") or {}).items():
        total[name] = total.get(name, 0) + to_amount(name, value)
    return total


def _gcs_ft_enabled(cluster_spec: dict[str, Any], annotations: dict[str, str]) -> bool:
    return (
        bool(cluster_spec.get("gcsFaultToleranceOptions")) or annotations.get("ray.io/ft-enabled") == "true"
    )


def _cluster_pod_sets(cluster_spec: dict[str, Any], annotations: dict[str, str]) -> list[dict[str, Any]]:
    head = copy.deepcopy((cluster_spec.get("headGroupSpec") or {}).get("template") or {})
    head_spec = head.setdefault("spec", {})
    if _gcs_ft_enabled(cluster_spec, annotations) and head_spec.get("containers"):
        resources = head_spec["containers"][0].setdefault("resources", {})
        requests = resources.setdefault("requests", {})
        for name, value in _REDIS_CLEANUP.items():
            if name not in requests or to_amount(name, requests[name]) < to_amount(name, value):
                requests[name] = value
    if cluster_spec.get("enableInTreeAutoscaling"):
        options = cluster_spec.get("autoscalerOptions") or {}
        head_spec.setdefault("containers", []).append(
            {"name": "autoscaler", "resources": copy.deepcopy(options.get("resources") or _AUTOSCALER)}
        )
    pod_sets = [{"name": "head", "count": 1, "template": head}]
    for group in cluster_spec.get("workerGroupSpecs") or ():
        replicas = group.get("replicas")
        count = 1 if replicas is None else int(replicas)
        hosts = int(group.get("numOfHosts") or 1)
        if hosts > 1:
            count *= hosts
        pod_sets.append(
            {
                "name": str(group["groupName"]).lower(),
                "count": count,
                "template": copy.deepcopy(group.get("template") or {}),
            }
        )
    for pod_set in pod_sets:
        _topology_request(pod_set)
    return pod_sets


def _topology_request(pod_set: dict[str, Any]) -> None:
    """Kueue's jobframework copies the TAS annotations of a pod template into ``podSets[].topologyRequest``
    (pkg/controller/jobframework/tas.go)."""
    annotations = ((pod_set.get("template") or {}).get("metadata") or {}).get("annotations") or {}
    for annotation, field in (
        ("kueue.x-k8s.io/podset-required-topology", "required"),
        ("kueue.x-k8s.io/podset-preferred-topology", "preferred"),
    ):
        if annotations.get(annotation):
            pod_set["topologyRequest"] = {field: annotations[annotation]}
            return


def _submitter_template(job: dict[str, Any]) -> dict[str, Any]:
    spec = job.get("spec") or {}
    if spec.get("submitterPodTemplate"):
        return copy.deepcopy(spec["submitterPodTemplate"])
    head_containers = ((spec.get("rayClusterSpec") or {}).get("headGroupSpec") or {}).get("template", {})
    image = ((head_containers.get("spec") or {}).get("containers") or [{}])[0].get("image")
    container: dict[str, Any] = {"name": "ray-job-submitter", "resources": copy.deepcopy(_SUBMITTER)}
    if image:
        container["image"] = image
    return {"spec": {"containers": [container], "restartPolicy": "Never"}}


def job_pod_sets(job: dict[str, Any]) -> list[dict[str, Any]]:
    """The Workload pod sets of a RayCluster or RayJob (``kind`` decides), in Kueue's order.

    Example:
        >>> rc = {"kind": "RayCluster", "spec": {"headGroupSpec": {"template": {}},
        ...       "workerGroupSpecs": [{"groupName": "Worker-Group", "replicas": 2, "numOfHosts": 2}]}}
        >>> [(p["name"], p["count"]) for p in job_pod_sets(rc)]
        [('head', 1), ('worker-group', 4)]
    """
    annotations = (job.get("metadata") or {}).get("annotations") or {}
    spec = job.get("spec") or {}
    if job.get("kind") == "RayJob":
        pod_sets = _cluster_pod_sets(spec.get("rayClusterSpec") or {}, annotations)
        mode = spec.get("submissionMode") or "K8sJobMode"
        if mode == "K8sJobMode":
            submitter = {"name": "submitter", "count": 1, "template": _submitter_template(job)}
            _topology_request(submitter)  # addSubmitterPodSet: from submitterPodTemplate's annotations
            pod_sets.append(submitter)
        elif mode == "SidecarMode":
            pod_sets[0]["template"].setdefault("spec", {}).setdefault("containers", []).append(
                {"name": "ray-job-submitter", "resources": copy.deepcopy(_SUBMITTER)}
            )
        return pod_sets
    return _cluster_pod_sets(spec, annotations)


def build_workload(job: dict[str, Any], priority_classes: dict[str, int]) -> dict[str, Any]:
    """The v1beta2 Workload Kueue creates for ``job`` (a stored RayCluster/RayJob with a uid).

    ``priority_classes`` maps WorkloadPriorityClass names to values; a priority-class label naming
    none of them raises ``KeyError`` (Kueue does not create the Workload then).

    Example:
        >>> job = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "demo",
        ...        "namespace": "ns", "uid": "11111111-2222-3333-4444-555555555555",
        ...        "labels": {QUEUE_LABEL: "q", PRIORITY_CLASS_LABEL: "high"}},
        ...        "spec": {"headGroupSpec": {"template": {}}}}
        >>> wl = build_workload(job, {"high": 1000})
        >>> wl["metadata"]["name"], wl["spec"]["queueName"], wl["spec"]["priority"], wl["spec"]["active"]
        ('raycluster-demo-4e803', 'q', 1000, True)
    """
    meta = job["metadata"]
    kind = job.get("kind", "RayCluster")
    labels = meta.get("labels") or {}
    spec: dict[str, Any] = {"podSets": job_pod_sets(job), "queueName": queue_name(job), "active": True}
    priority_class = labels.get(PRIORITY_CLASS_LABEL)
    max_exec = labels.get(MAX_EXEC_TIME_LABEL, "")
    if max_exec.isdigit() and int(max_exec) > 0:
        spec["maximumExecutionTimeSeconds"] = int(max_exec)
    if priority_class:
        spec["priorityClassRef"] = {
            "group": _KUEUE_GROUP,
            "kind": "WorkloadPriorityClass",
            "name": priority_class,
        }
        spec["priority"] = priority_classes[priority_class]
    else:
        spec["priority"] = 0
    return {
        "apiVersion": f"{_KUEUE_GROUP}/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": workload_name(kind, "ray.io", meta["name"], meta["uid"]),
            "namespace": meta.get("namespace", "default"),
            "labels": {JOB_UID_LABEL: meta["uid"]},
            "finalizers": [RESOURCE_IN_USE_FINALIZER],
            "ownerReferences": [
                {
                    "apiVersion": job.get("apiVersion", _RAY_API_VERSION),
                    "kind": kind,
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
    }


def pod_sets_match(workload: dict[str, Any], job: dict[str, Any]) -> bool:
    """Whether the Workload's pod sets still describe the job (names, counts and requests)."""

    def shape(pod_sets: list[dict[str, Any]]) -> list[tuple[str, int, dict[str, int]]]:
        return [
            (p["name"], int(p.get("count", 1)), pod_requests((p.get("template") or {}).get("spec") or {}))
            for p in pod_sets
        ]

    return shape((workload.get("spec") or {}).get("podSets") or []) == shape(job_pod_sets(job))


def _templates(job: dict[str, Any]) -> list[dict[str, Any]]:
    """The job's pod templates in pod-set order (created empty where missing)."""
    spec = job.setdefault("spec", {})
    is_job = job.get("kind") == "RayJob"
    cluster = spec.setdefault("rayClusterSpec", {}) if is_job else spec
    templates = [cluster.setdefault("headGroupSpec", {}).setdefault("template", {})]
    templates += [g.setdefault("template", {}) for g in cluster.get("workerGroupSpecs") or ()]
    if is_job and (spec.get("submissionMode") or "K8sJobMode") == "K8sJobMode":
        if not spec.get("submitterPodTemplate"):
            spec["submitterPodTemplate"] = _submitter_template(job)
        templates.append(spec["submitterPodTemplate"])
    return templates


def pod_set_updates(admission_checks: list[dict[str, Any]], pod_set: str) -> list[dict[str, Any]]:
    """The ``podSetUpdates`` entries the Workload's admission checks hold for ``pod_set`` (at most one per
    check, in check order, as ``getPodSetsInfoFromStatus`` in ``jobframework/reconciler.go`` reads them).

    Example:
        >>> checks = [{"name": "prov", "podSetUpdates": [
        ...     {"name": "head", "annotations": {"autoscaling.x-k8s.io/consume-provisioning-request": "r-1"}},
        ...     {"name": "workers", "annotations": {"a": "b"}}]}]
        >>> pod_set_updates(checks, "head")[0]["annotations"]
        {'autoscaling.x-k8s.io/consume-provisioning-request': 'r-1'}
    """
    found = []
    for check in admission_checks:
        for update in check.get("podSetUpdates") or ():
            if update.get("name") == pod_set:
                found.append(update)
                break
    return found


def apply_admission(
    job: dict[str, Any],
    admission: dict[str, Any],
    flavors: dict[str, dict[str, Any]],
    admission_checks: list[dict[str, Any]] | tuple[()] = (),
    workload: dict[str, Any] | None = None,
) -> None:
    """Unsuspend ``job`` in place and merge each assigned flavor's nodeLabels and tolerations, then
    the admission checks' ``podSetUpdates`` (labels, annotations, nodeSelector, tolerations), into the
    matching pod template (Kueue's ``startJob``: ``getPodSetsInfoFromStatus`` merges the checks'
    updates into each pod set's info, and RunWithPodSetsInfo applies it with ``podset.Merge``,
    ``pkg/controller/jobframework/reconciler.go`` and ``pkg/podset/podset.go``).

    Example:
        >>> job = {"kind": "RayCluster", "spec": {"suspend": True, "headGroupSpec": {"template": {}}}}
        >>> admission = {"podSetAssignments": [{"name": "head", "flavors": {}}]}
        >>> update = {"name": "head", "annotations": {"example.com/a": "r"}}
        >>> apply_admission(job, admission, {}, [{"name": "prov", "podSetUpdates": [update]}])
        >>> job["spec"]["suspend"], job["spec"]["headGroupSpec"]["template"]["metadata"]["annotations"]
        (False, {'example.com/a': 'r'})
    """
    job.setdefault("spec", {})["suspend"] = False
    by_name = {psa["name"]: psa for psa in admission.get("podSetAssignments") or ()}
    names = [p["name"] for p in job_pod_sets(job)]
    for name, template in zip(names, _templates(job), strict=False):
        psa = by_name.get(name)
        if psa is None:
            continue
        pod = template.setdefault("spec", {})
        if workload is not None:
            _mark_admitted(template, name, workload, str(admission.get("clusterQueue") or ""))
        tolerations: list[dict[str, Any]] = []
        for flavor_name in sorted(set((psa.get("flavors") or {}).values())):
            flavor_spec = (flavors.get(flavor_name) or {}).get("spec") or {}
            if flavor_spec.get("nodeLabels"):
                pod.setdefault("nodeSelector", {}).update(flavor_spec["nodeLabels"])
            tolerations += flavor_spec.get("tolerations") or ()
        for update in pod_set_updates(list(admission_checks), name):
            meta = template.setdefault("metadata", {})
            for field_name in ("labels", "annotations"):
                if update.get(field_name):
                    meta.setdefault(field_name, {}).update(update[field_name])
            if update.get("nodeSelector"):
                pod.setdefault("nodeSelector", {}).update(update["nodeSelector"])
            tolerations += update.get("tolerations") or ()
        for toleration in tolerations:
            if toleration not in pod.setdefault("tolerations", []):
                pod["tolerations"].append(copy.deepcopy(toleration))


def _mark_admitted(template: dict[str, Any], pod_set: str, workload: dict[str, Any], cq: str) -> None:
    """What getPodSetsInfoFromStatus adds to every admitted pod template (TopologyAwareScheduling and
    AssignQueueLabelsForPods on, their v0.19 defaults): the ``kueue.x-k8s.io/workload`` annotation, the
    ``kueue.x-k8s.io/podset`` label and the LocalQueue and ClusterQueue name labels (the latter only when
    it is a DNS-1123 label)."""
    meta = template.setdefault("metadata", {})
    meta.setdefault("annotations", {})[WORKLOAD_ANNOTATION] = (workload.get("metadata") or {}).get("name", "")
    labels = meta.setdefault("labels", {})
    labels[PODSET_LABEL] = pod_set
    labels[LOCAL_QUEUE_LABEL] = (workload.get("spec") or {}).get("queueName", "")
    if len(cq) <= 63 and _DNS1123_LABEL.match(cq):
        labels[CLUSTER_QUEUE_LABEL] = cq


def restore_pod_templates(job: dict[str, Any], workload: dict[str, Any]) -> None:
    """Suspend ``job`` in place and put back the labels, annotations, nodeSelector and tolerations the
    Workload recorded before admission (Kueue's RestorePodSetsInfo, ``podset.RestorePodSpec``): what the
    flavors and the admission checks' ``podSetUpdates`` added goes.

    Example:
        >>> job = {"kind": "RayCluster", "spec": {"headGroupSpec": {"template": {
        ...     "metadata": {"annotations": {"autoscaling.x-k8s.io/consume-provisioning-request": "r"}}}}}}
        >>> wl = {"spec": {"podSets": [{"name": "head", "template": {}}]}}
        >>> restore_pod_templates(job, wl)
        >>> job["spec"]["suspend"], job["spec"]["headGroupSpec"]["template"]
        (True, {'spec': {}})
    """
    job.setdefault("spec", {})["suspend"] = True
    originals = {p["name"]: p for p in (workload.get("spec") or {}).get("podSets") or ()}
    names = [p["name"] for p in job_pod_sets(job)]
    for name, template in zip(names, _templates(job), strict=False):
        original_template = (originals.get(name) or {}).get("template") or {}
        original_meta = original_template.get("metadata") or {}
        meta = template.get("metadata")
        if meta is not None:
            for field_name in ("labels", "annotations"):
                if original_meta.get(field_name):
                    meta[field_name] = copy.deepcopy(original_meta[field_name])
                else:
                    meta.pop(field_name, None)
            if not meta and "metadata" not in original_template:
                template.pop("metadata")
        original = original_template.get("spec") or {}
        pod = template.setdefault("spec", {})
        for field_name in ("nodeSelector", "tolerations"):
            if field_name in original:
                pod[field_name] = copy.deepcopy(original[field_name])
            else:
                pod.pop(field_name, None)
