"""Builders for Kueue ``v1beta2`` admin objects: ResourceFlavor, ClusterQueue, LocalQueue, Cohort, priority,
AdmissionCheck and ProvisioningRequestConfig, Topology, and the fair-sharing fields
(``fairSharing.weight``, ``admissionScope``).

These are for demos, tests and the local control plane (an administrator's job on a real installation).
Each builder checks what Kueue's CRD rules would reject (CEL rules included: every flavor lists the
resources of its group; ``borrowingLimit`` only with a cohort; ``reclaimWithinCohort: Never`` excludes
borrowing preemption) and raises :class:`~rayqueue_sdk.errors.ConfigError`.

Example:
    >>> cq = cluster_queue("cluster-queue", resource_groups=[resource_group(
    ...     flavor_quotas("default-flavor", {"cpu": 9, "memory": "36Gi", "pods": 5, "nvidia.com/gpu": 2}))])
    >>> cq["spec"]["resourceGroups"][0]["coveredResources"]
    ['cpu', 'memory', 'pods', 'nvidia.com/gpu']
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.manifests.quantities import parse_quantity
from rayqueue_sdk.manifests.rules import check_dns_label, check_labels

__all__ = [
    "API_VERSION",
    "PROVISIONING_CONTROLLER",
    "admission_check",
    "admission_check_rule",
    "PREFERRED_TOPOLOGY_ANNOTATION",
    "REQUIRED_TOPOLOGY_ANNOTATION",
    "TOPOLOGY_LEVELS",
    "TOPOLOGY_MODES",
    "cluster_queue",
    "cohort",
    "flavor_quotas",
    "local_queue",
    "preemption",
    "provisioning_request_config",
    "resource_flavor",
    "resource_group",
    "topology",
    "topology_annotation",
    "workload_priority_class",
]

#: The Kueue API version the builders write.
API_VERSION = "kueue.x-k8s.io/v1beta2"
_WITHIN_CQ = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
_RECLAIM = ("Never", "LowerPriority", "Any")
_BORROW = ("Never", "LowerPriority")
_STRATEGIES = ("BestEffortFIFO", "StrictFIFO")
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_ADMISSION_MODES = ("UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing")

#: Pod-template annotation asking Kueue's topology-aware scheduling for one domain of a level (or waiting).
REQUIRED_TOPOLOGY_ANNOTATION = "kueue.x-k8s.io/podset-required-topology"
#: Pod-template annotation asking for one domain of a level when there is one (spreading otherwise).
PREFERRED_TOPOLOGY_ANNOTATION = "kueue.x-k8s.io/podset-preferred-topology"
#: Short level names and the node labels they stand for (those of Kueue's topology-aware scheduling docs).
TOPOLOGY_LEVELS: dict[str, str] = {
    "block": "cloud.provider.com/topology-block",
    "rack": "cloud.provider.com/topology-rack",
    "hostname": "kubernetes.io/hostname",
}
#: ``required``: admitted only when one domain of the level has room; ``preferred``: one domain if possible.
TOPOLOGY_MODES = ("required", "preferred")
_LABEL_KEY = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z"
)


def resource_flavor(
    name: str,
    *,
    node_labels: Mapping[str, str] | None = None,
    tolerations: Sequence[Mapping[str, Any]] | None = None,
    node_taints: Sequence[Mapping[str, Any]] | None = None,
    topology_name: str | None = None,
) -> dict[str, Any]:
    """A ResourceFlavor (cluster-scoped): node labels and tolerations Kueue adds to admitted pods;
    ``topology_name`` names a :func:`topology` for topology-aware scheduling (then ``node_labels`` are needed,
    as Kueue's CRD rule says).

    Example:
        >>> rf = resource_flavor("gpu-flavor", node_labels={"nvidia.com/gpu.present": "true"},
        ...     tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])
        >>> rf["spec"]["nodeLabels"]
        {'nvidia.com/gpu.present': 'true'}
    """
    _check_name(name, "name")
    spec: dict[str, Any] = {}
    if node_labels:
        check_labels(node_labels, "node_labels")
        spec["nodeLabels"] = dict(node_labels)
    for field, items in (("tolerations", tolerations), ("node_taints", node_taints)):
        for i, item in enumerate(items or ()):
            effect = item.get("effect")
            if field == "node_taints" and effect not in _EFFECTS:
                raise ConfigError(f"{field}[{i}].effect", effect, " | ".join(_EFFECTS))
            if not item.get("key") and item.get("operator", "Equal") != "Exists" and field == "tolerations":
                raise ConfigError(
                    f"{field}[{i}].operator", item.get("operator"), "'Exists' when key is empty"
                )
    if tolerations:
        spec["tolerations"] = [dict(t) for t in tolerations]
    if node_taints:
        spec["nodeTaints"] = [dict(t) for t in node_taints]
    if topology_name is not None:
        _check_name(topology_name, "topology_name")
        if not node_labels:
            raise ConfigError(
                "node_labels",
                node_labels,
                "at least one node label when topology_name is set",
                problem="Kueue requires nodeLabels on a flavor with a topologyName",
            )
        spec["topologyName"] = topology_name
    return {"apiVersion": API_VERSION, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


def flavor_quotas(
    flavor: str,
    nominal: Mapping[str, int | str],
    *,
    borrowing_limits: Mapping[str, int | str] | None = None,
    lending_limits: Mapping[str, int | str] | None = None,
) -> dict[str, Any]:
    """One flavor's quotas inside a resource group: ``nominalQuota`` (and optional limits) per resource.

    Example:
        >>> fq = flavor_quotas("gpu-flavor", {"nvidia.com/gpu": "0"}, borrowing_limits={"nvidia.com/gpu": 0})
        >>> fq["resources"]
        [{'name': 'nvidia.com/gpu', 'nominalQuota': '0', 'borrowingLimit': 0}]
    """
    _check_name(flavor, "flavor")
    resources = []
    for resource, quota in nominal.items():
        entry: dict[str, Any] = {"name": resource, "nominalQuota": _quota(quota, f"nominal[{resource!r}]")}
        for field, limits, key in (
            ("borrowing_limits", borrowing_limits, "borrowingLimit"),
            ("lending_limits", lending_limits, "lendingLimit"),
        ):
            if limits and resource in limits:
                entry[key] = _quota(limits[resource], f"{field}[{resource!r}]")
        resources.append(entry)
    for field, limits in (("borrowing_limits", borrowing_limits), ("lending_limits", lending_limits)):
        extra = sorted(set(limits or {}) - set(nominal))
        if extra:
            raise ConfigError(field, extra, f"resources with a nominal quota: {sorted(nominal)}")
    return {"name": flavor, "resources": resources}


def resource_group(*flavors: Mapping[str, Any]) -> dict[str, Any]:
    """A resource group: flavors (tried in order) that each cover the same resources.

    Example:
        >>> rg = resource_group(flavor_quotas("default-flavor", {"cpu": 6, "memory": "16Gi"}))
        >>> rg["coveredResources"]
        ['cpu', 'memory']
    """
    if not flavors:
        raise ConfigError("flavors", [], "at least one flavor_quotas(...)")
    covered = [r["name"] for r in flavors[0]["resources"]]
    for i, fl in enumerate(flavors):
        names = [r["name"] for r in fl["resources"]]
        if sorted(names) != sorted(covered):
            raise ConfigError(
                f"flavors[{i}]",
                names,
                f"the same resources as the first flavor: {covered}",
                problem="Kueue needs every flavor of a group to list the group's resources",
            )
    ordered = [
        {"name": fl["name"], "resources": sorted(fl["resources"], key=lambda r: covered.index(r["name"]))}
        for fl in flavors
    ]
    return {"coveredResources": covered, "flavors": ordered}


def preemption(
    *,
    within_cluster_queue: str = "Never",
    reclaim_within_cohort: str = "Never",
    borrow_within_cohort: str = "Never",
    max_priority_threshold: int | None = None,
) -> dict[str, Any]:
    """A ClusterQueue ``preemption`` block.

    Example:
        >>> p = preemption(reclaim_within_cohort="Any", borrow_within_cohort="LowerPriority",
        ...                max_priority_threshold=100)
        >>> p["reclaimWithinCohort"], p["borrowWithinCohort"]
        ('Any', {'policy': 'LowerPriority', 'maxPriorityThreshold': 100})
    """
    for field, value, allowed in (
        ("within_cluster_queue", within_cluster_queue, _WITHIN_CQ),
        ("reclaim_within_cohort", reclaim_within_cohort, _RECLAIM),
        ("borrow_within_cohort", borrow_within_cohort, _BORROW),
    ):
        if value not in allowed:
            raise ConfigError(field, value, " | ".join(allowed))
    if reclaim_within_cohort == "Never" and borrow_within_cohort != "Never":
        raise ConfigError(
            "borrow_within_cohort",
            borrow_within_cohort,
            "'Never' when reclaim_within_cohort is 'Never'",
            problem="Kueue rejects borrowing preemption without reclamation",
        )
    block: dict[str, Any] = {
        "withinClusterQueue": within_cluster_queue,
        "reclaimWithinCohort": reclaim_within_cohort,
    }
    if borrow_within_cohort != "Never" or max_priority_threshold is not None:
        borrow: dict[str, Any] = {"policy": borrow_within_cohort}
        if max_priority_threshold is not None:
            if isinstance(max_priority_threshold, bool) or not isinstance(max_priority_threshold, int):
                raise ConfigError(
                    "max_priority_threshold", max_priority_threshold, "an integer priority value"
                )
            borrow["maxPriorityThreshold"] = max_priority_threshold
        block["borrowWithinCohort"] = borrow
    return block


def cluster_queue(
    name: str,
    *,
    resource_groups: Sequence[Mapping[str, Any]],
    cohort: str | None = None,
    namespace_selector: Mapping[str, Any] | None = None,
    preemption: Mapping[str, Any] | None = None,
    queueing_strategy: str = "BestEffortFIFO",
    admission_checks: Sequence[Mapping[str, Any]] | None = None,
    fair_sharing_weight: int | str | None = None,
    admission_mode: str | None = None,
) -> dict[str, Any]:
    """A ClusterQueue (cluster-scoped). ``namespace_selector=None`` means every namespace (``{}``).
    ``fair_sharing_weight`` is ``spec.fairSharing.weight`` (cohort fair sharing); ``admission_mode`` is
    ``spec.admissionScope.admissionMode`` (``UsageBasedAdmissionFairSharing``: Admission Fair Sharing on).

    ``admission_checks`` (entries from :func:`admission_check_rule`) become
    ``spec.admissionChecksStrategy.admissionChecks``: Kueue admits a workload only once each check
    is Ready (https://kueue.sigs.k8s.io/docs/concepts/admission_check/).

    Example:
        >>> cq = cluster_queue("team-a-cq", cohort="team-ab", resource_groups=[resource_group(
        ...     flavor_quotas("gpu-flavor", {"nvidia.com/gpu": 1}))],
        ...     namespace_selector={"matchLabels": {"kubernetes.io/metadata.name": "team-a"}})
        >>> cq["spec"]["cohortName"], cq["spec"]["queueingStrategy"]
        ('team-ab', 'BestEffortFIFO')
    """
    _check_name(name, "name")
    if queueing_strategy not in _STRATEGIES:
        raise ConfigError("queueing_strategy", queueing_strategy, " | ".join(_STRATEGIES))
    if cohort is not None:
        _check_name(cohort, "cohort")
    else:
        for group in resource_groups:
            for fl in group["flavors"]:
                for res in fl["resources"]:
                    if "borrowingLimit" in res:
                        raise ConfigError(
                            f"borrowing_limits[{res['name']!r}]",
                            res["borrowingLimit"],
                            "no borrowing limit without a cohort",
                            problem="Kueue needs borrowingLimit to be nil when the cohort is empty",
                        )
    spec: dict[str, Any] = {}
    if cohort is not None:
        spec["cohortName"] = cohort
    spec["namespaceSelector"] = dict(namespace_selector or {})
    spec["queueingStrategy"] = queueing_strategy
    if preemption is not None:
        spec["preemption"] = dict(preemption)
    spec["resourceGroups"] = [dict(g) for g in resource_groups]
    if admission_checks:
        flavors = {fl["name"] for g in resource_groups for fl in g["flavors"]}
        for i, rule in enumerate(admission_checks):
            unknown = sorted(set(rule.get("onFlavors") or ()) - flavors)
            if unknown:
                raise ConfigError(
                    f"admission_checks[{i}].onFlavors", unknown, f"flavors of this queue: {sorted(flavors)}"
                )
        spec["admissionChecksStrategy"] = {"admissionChecks": [dict(r) for r in admission_checks]}
    if fair_sharing_weight is not None:
        spec["fairSharing"] = _fair_sharing(fair_sharing_weight)
    if admission_mode is not None:
        if admission_mode not in _ADMISSION_MODES:
            raise ConfigError("admission_mode", admission_mode, " | ".join(_ADMISSION_MODES))
        spec["admissionScope"] = {"admissionMode": admission_mode}
    return {"apiVersion": API_VERSION, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def admission_check_rule(name: str, *, on_flavors: Sequence[str] = ()) -> dict[str, Any]:
    """One entry of a ClusterQueue's ``admissionChecksStrategy``: check ``name``, for workloads given one
    of ``on_flavors`` (every flavor when empty).

    Example:
        >>> admission_check_rule("sample-prov", on_flavors=["default-flavor"])
        {'name': 'sample-prov', 'onFlavors': ['default-flavor']}
    """
    _check_name(name, "admission_check")
    rule: dict[str, Any] = {"name": name}
    if on_flavors:
        for flavor in on_flavors:
            _check_name(flavor, "on_flavors")
        rule["onFlavors"] = list(on_flavors)
    return rule


#: ``spec.controllerName`` of Kueue's built-in ProvisioningRequest admission check.
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"


def admission_check(
    name: str,
    *,
    controller_name: str = PROVISIONING_CONTROLLER,
    parameters: str | None = None,
    parameters_kind: str = "ProvisioningRequestConfig",
    parameters_api_group: str = "kueue.x-k8s.io",
) -> dict[str, Any]:
    """An AdmissionCheck (cluster-scoped), by default Kueue's ProvisioningRequest check configured by the
    ProvisioningRequestConfig named ``parameters``
    (https://kueue.sigs.k8s.io/docs/admission-check-controllers/provisioning/).

    Example:
        >>> ac = admission_check("sample-prov", parameters="prov-test-config")
        >>> ac["spec"]  # doctest: +NORMALIZE_WHITESPACE
        {'controllerName': 'kueue.x-k8s.io/provisioning-request',
         'parameters': {'apiGroup': 'kueue.x-k8s.io', 'kind': 'ProvisioningRequestConfig',
                        'name': 'prov-test-config'}}
    """
    _check_name(name, "name")
    if not isinstance(controller_name, str) or not 0 < len(controller_name) <= 253:
        raise ConfigError("controller_name", controller_name, "a controller name of 1..253 characters")
    spec: dict[str, Any] = {"controllerName": controller_name}
    if parameters is not None:
        check_dns_label(parameters, "parameters")
        if not re.fullmatch(r"(?i)[a-z]([-a-z0-9]*[a-z0-9])?", str(parameters_kind)):
            raise ConfigError(
                "parameters_kind", parameters_kind, "a Kind name such as ProvisioningRequestConfig"
            )
        _check_name(parameters_api_group, "parameters_api_group")
        spec["parameters"] = {"apiGroup": parameters_api_group, "kind": parameters_kind, "name": parameters}
    return {"apiVersion": API_VERSION, "kind": "AdmissionCheck", "metadata": {"name": name}, "spec": spec}


def provisioning_request_config(
    name: str,
    *,
    provisioning_class_name: str,
    managed_resources: Sequence[str] = (),
    backoff_limit_count: int | None = None,
    backoff_base_seconds: int | None = None,
    backoff_max_seconds: int | None = None,
    parameters: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A ProvisioningRequestConfig (cluster-scoped): the class of ProvisioningRequest Kueue creates, the
    resources that need one (``managed_resources``; all when empty) and how often a failed one is
    retried (``retryStrategy``; Kueue's defaults are 3 retries, 60 s base, 1800 s max backoff)
    (https://kueue.sigs.k8s.io/docs/admission-check-controllers/provisioning/).

    Example:
        >>> prc = provisioning_request_config("prov-test-config",
        ...     provisioning_class_name="best-effort-atomic-scale-up.autoscaling.x-k8s.io",
        ...     managed_resources=["cpu"], backoff_limit_count=2)
        >>> prc["spec"]["managedResources"], prc["spec"]["retryStrategy"]
        (['cpu'], {'backoffLimitCount': 2})
    """
    _check_name(name, "name")
    _check_name(provisioning_class_name, "provisioning_class_name")
    spec: dict[str, Any] = {"provisioningClassName": provisioning_class_name}
    if managed_resources:
        if len(set(managed_resources)) != len(managed_resources) or len(managed_resources) > 100:
            raise ConfigError(
                "managed_resources", list(managed_resources), "at most 100 distinct resource names"
            )
        spec["managedResources"] = list(managed_resources)
    if parameters:
        if len(parameters) > 100 or any(len(str(v)) > 255 for v in parameters.values()):
            raise ConfigError("parameters", dict(parameters), "at most 100 values of at most 255 characters")
        spec["parameters"] = {str(k): str(v) for k, v in parameters.items()}
    retry: dict[str, int] = {}
    for field, key, value in (
        ("backoff_limit_count", "backoffLimitCount", backoff_limit_count),
        ("backoff_base_seconds", "backoffBaseSeconds", backoff_base_seconds),
        ("backoff_max_seconds", "backoffMaxSeconds", backoff_max_seconds),
    ):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2**31 - 1:
            raise ConfigError(field, value, "a whole number >= 0")
        retry[key] = value
    if retry:
        spec["retryStrategy"] = retry
    return {
        "apiVersion": API_VERSION,
        "kind": "ProvisioningRequestConfig",
        "metadata": {"name": name},
        "spec": spec,
    }


def local_queue(
    name: str, namespace: str, cluster_queue: str, *, fair_sharing_weight: int | str | None = None
) -> dict[str, Any]:
    """A LocalQueue (namespaced) pointing at a ClusterQueue; ``fair_sharing_weight`` is its weight under
    Admission Fair Sharing (``spec.fairSharing.weight``).

    Example:
        >>> local_queue("user-queue", "demo", "cluster-queue")["spec"]
        {'clusterQueue': 'cluster-queue'}
        >>> local_queue("user-queue", "demo", "cluster-queue", fair_sharing_weight="2")["spec"]["fairSharing"]
        {'weight': '2'}
    """
    check_dns_label(name, "name", "LocalQueue name")
    check_dns_label(namespace, "namespace")
    _check_name(cluster_queue, "cluster_queue")
    spec: dict[str, Any] = {"clusterQueue": cluster_queue}
    if fair_sharing_weight is not None:
        spec["fairSharing"] = _fair_sharing(fair_sharing_weight)
    return {
        "apiVersion": API_VERSION,
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def workload_priority_class(name: str, value: int, description: str | None = None) -> dict[str, Any]:
    """A WorkloadPriorityClass: a top-level ``value`` (higher wins) and no ``spec``.

    Example:
        >>> workload_priority_class("prod-priority", 1000, "Priority class for prod jobs")["value"]
        1000
    """
    check_dns_label(name, "name", "priority class name")
    if isinstance(value, bool) or not isinstance(value, int) or not -(2**31) <= value < 2**31:
        raise ConfigError("value", value, "a 32-bit integer (higher is more important)")
    obj: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "WorkloadPriorityClass",
        "metadata": {"name": name},
        "value": value,
    }
    if description is not None:
        obj["description"] = description
    return obj


def cohort(
    name: str,
    *,
    parent: str | None = None,
    resource_groups: Sequence[Mapping[str, Any]] | None = None,
    fair_sharing_weight: int | str | None = None,
) -> dict[str, Any]:
    """A Cohort (cluster-scoped): ClusterQueues naming it share unused quota; it may hold quota itself.

    Example:
        >>> cohort("all-gpus", parent="org")["spec"]
        {'parentName': 'org'}
    """
    _check_name(name, "name")
    spec: dict[str, Any] = {}
    if parent is not None:
        _check_name(parent, "parent")
        spec["parentName"] = parent
    if resource_groups:
        spec["resourceGroups"] = [dict(g) for g in resource_groups]
    if fair_sharing_weight is not None:
        spec["fairSharing"] = _fair_sharing(fair_sharing_weight)
    return {"apiVersion": API_VERSION, "kind": "Cohort", "metadata": {"name": name}, "spec": spec}


def topology(name: str, levels: Sequence[str]) -> dict[str, Any]:
    """A Topology (cluster-scoped): node labels from the widest level to the narrowest (at most 16 levels,
    each a label key, no repeats; ``kubernetes.io/hostname`` only as the last level, as Kueue's CRD rules
    say).

    Example:
        >>> levels = topology("default", ["example.com/rack", "kubernetes.io/hostname"])["spec"]["levels"]
        >>> levels
        [{'nodeLabel': 'example.com/rack'}, {'nodeLabel': 'kubernetes.io/hostname'}]
    """
    _check_name(name, "name")
    if isinstance(levels, str) or not 1 <= len(levels) <= 16:
        raise ConfigError("levels", levels, "a list of 1 to 16 node label keys")
    for i, level in enumerate(levels):
        check_labels({level: ""}, f"levels[{i}]")
        if level == "kubernetes.io/hostname" and i != len(levels) - 1:
            raise ConfigError(f"levels[{i}]", level, "kubernetes.io/hostname only as the last level")
    if len(set(levels)) != len(levels):
        raise ConfigError("levels", list(levels), "distinct node label keys")
    return {
        "apiVersion": API_VERSION,
        "kind": "Topology",
        "metadata": {"name": name},
        "spec": {"levels": [{"nodeLabel": level} for level in levels]},
    }


def topology_annotation(
    level: str | None, mode: str = "required", *, field: str = "topology", mode_field: str = "topology_mode"
) -> dict[str, str]:
    """The pod-template annotation for a topology ``level`` (a short name of :data:`TOPOLOGY_LEVELS` or a
    prefixed node label key) in ``mode`` (``required`` or ``preferred``); ``{}`` for ``level=None``.
    Kueue reads it from the pod template and copies it into the Workload's ``podSets[].topologyRequest``
    (https://kueue.sigs.k8s.io/docs/concepts/topology_aware_scheduling/).

    Example:
        >>> topology_annotation("rack")
        {'kueue.x-k8s.io/podset-required-topology': 'cloud.provider.com/topology-rack'}
        >>> topology_annotation("example.com/zone", "preferred")
        {'kueue.x-k8s.io/podset-preferred-topology': 'example.com/zone'}
        >>> topology_annotation("Rack")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: topology: not a topology level (got 'Rack'); allowed: one of ...
    """
    if mode not in TOPOLOGY_MODES:
        raise ConfigError(mode_field, mode, " | ".join(TOPOLOGY_MODES))
    if level is None:
        return {}
    if isinstance(level, str) and level in TOPOLOGY_LEVELS:
        key = TOPOLOGY_LEVELS[level]
    elif isinstance(level, str) and len(level) <= 316 and _LABEL_KEY.match(level):
        key = level
    else:
        raise ConfigError(
            field,
            level,
            "one of 'block', 'rack', 'hostname', or a node label key with a prefix such as "
            "'cloud.provider.com/topology-rack' (a level of the flavor's Topology)",
            problem="not a topology level",
        )
    annotation = REQUIRED_TOPOLOGY_ANNOTATION if mode == "required" else PREFERRED_TOPOLOGY_ANNOTATION
    return {annotation: key}


def _fair_sharing(weight: Any) -> dict[str, Any]:
    return {"weight": _quota(weight, "fair_sharing_weight")}


def _check_name(name: Any, field: str) -> None:
    if not isinstance(name, str) or len(name) > 253 or not _SUBDOMAIN.match(name):
        raise ConfigError(field, name, "a DNS subdomain: lower-case letters, digits, '-' and '.'")


def _quota(value: Any, field: str) -> int | str:
    allowed = "a quantity >= 0 such as 9, '36Gi' or '1'"
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ConfigError(field, value, allowed, problem="not a quantity")
    try:
        amount = parse_quantity(value)
    except ValueError:
        raise ConfigError(field, value, allowed, problem="not a quantity") from None
    if amount < 0:
        raise ConfigError(field, value, allowed, problem="negative quota")
    return value
