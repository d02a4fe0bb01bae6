"""The seeds' Kueue admin setups as ready-made scenarios: the objects a platform admin applies once.

Each function returns Kueue ``v1beta2`` objects as plain dicts (ResourceFlavors, Cohorts, ClusterQueues,
LocalQueues, WorkloadPriorityClasses, AdmissionChecks, ProvisioningRequestConfigs), in an order that
applies cleanly. They are written out here as
data (the emulator does not depend on the SDK); a test checks that the SDK's Kueue builders produce
the same objects. Namespaces are not included: ``rayqueue local up --scenario NAME`` creates them as
needed (:func:`scenario_objects`). Seed 003 also declares v1 Nodes with topology labels
(:func:`seed003_nodes`), as a cluster with topology-aware scheduling has. Pure: no I/O.

Example:
    >>> sorted(SCENARIOS)
    ['seed-000', 'seed-001', 'seed-002', 'seed-003', 'seed-004', 'team']
    >>> [o["kind"] for o in SCENARIOS["seed-000"]()]
    ['ResourceFlavor', 'ClusterQueue', 'LocalQueue']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "GPU_TOLERATION",
    "KUEUE_API_VERSION",
    "SCENARIOS",
    "SCENARIO_OPTIONS",
    "SEED003_LEVELS",
    "scenario_objects",
    "seed000_queues",
    "seed001_queues",
    "seed002_queues",
    "seed003_nodes",
    "seed003_queues",
    "seed003_scenario",
    "seed004_queues",
    "team_queue",
]

KUEUE_API_VERSION = "kueue.x-k8s.io/v1beta2"
"""The Kueue API version of every scenario object."""

GPU_TOLERATION: dict[str, str] = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
"""The toleration of seed 004's GPU flavor (and of its GPU workers)."""


def _cluster_scoped(kind: str, name: str, **body: Any) -> dict[str, Any]:
    return {"apiVersion": KUEUE_API_VERSION, "kind": kind, "metadata": {"name": name}, **body}


def _flavor(name: str, **spec: Any) -> dict[str, Any]:
    return _cluster_scoped("ResourceFlavor", name, spec=spec)


def _local_queue(name: str, namespace: str, cluster_queue: str) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE_API_VERSION,
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"clusterQueue": cluster_queue},
    }


def _priority(name: str, value: int, description: str) -> dict[str, Any]:
    return _cluster_scoped("WorkloadPriorityClass", name, value=value, description=description)


def _cluster_queue(
    name: str,
    groups: list[dict[str, Any]],
    *,
    cohort: str | None = None,
    selector: dict[str, Any] | None = None,
    preemption: dict[str, str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A BestEffortFIFO ClusterQueue of resource ``groups``, for every namespace unless ``selector``."""
    spec: dict[str, Any] = {"cohortName": cohort} if cohort else {}
    spec |= {"namespaceSelector": {} if selector is None else selector, "queueingStrategy": "BestEffortFIFO"}
    spec |= {"preemption": preemption} if preemption else {}
    return _cluster_scoped("ClusterQueue", name, spec={**spec, "resourceGroups": groups, **extra})


def _group(flavor: str, quotas: dict[str, int | str], **limits: dict[str, int | str]) -> dict[str, Any]:
    """A resource group of one flavor; ``limits`` maps a field (``borrowingLimit``) to per-resource values."""
    resources = []
    for resource, nominal in quotas.items():
        entry: dict[str, Any] = {"name": resource, "nominalQuota": nominal}
        for field, values in limits.items():
            if resource in values:
                entry[field] = values[resource]
        resources.append(entry)
    return {"coveredResources": list(quotas), "flavors": [{"name": flavor, "resources": resources}]}


def seed000_queues(namespace: str = "demo", *, cluster_queue: str = "cluster-queue") -> list[dict[str, Any]]:
    """Seed 000: a ClusterQueue with 2 GPUs of quota, its flavor and LocalQueue ``user-queue``.

    Example:
        >>> flavor, cq, lq = seed000_queues()
        >>> cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][-1]
        {'name': 'nvidia.com/gpu', 'nominalQuota': 2}
        >>> (lq["metadata"]["namespace"], lq["spec"]["clusterQueue"])
        ('demo', 'cluster-queue')
    """
    quotas: dict[str, int | str] = {"cpu": 9, "memory": "36Gi", "pods": 5, "nvidia.com/gpu": 2}
    return [
        _flavor("default-flavor"),
        _cluster_queue(cluster_queue, [_group("default-flavor", quotas)]),
        _local_queue("user-queue", namespace, cluster_queue),
    ]


def seed001_queues(
    namespace: str = "your-namespace", *, pods: int | None = None, rd_workspace: bool = False
) -> list[dict[str, Any]]:
    """Seed 001: production (12 GPUs) and development (8 GPUs) ClusterQueues in cohort ``all-gpus``.

    Both reclaim within the cohort and preempt lower priorities in their own queue. LocalQueues
    ``batch-jobs-queue`` (production) and ``ds-workspace-queue`` (development) in ``namespace``, plus
    ``lq-rd-workspace`` (development) with ``rd_workspace=True``; priorities prod 1000, dev 100, R&D 100.
    ``pods`` adds a pod quota to both ClusterQueues.

    Example:
        >>> objects = seed001_queues()
        >>> [o["metadata"]["name"] for o in objects if o["kind"] == "ClusterQueue"]
        ['cq-production', 'cq-development']
        >>> [o["metadata"]["name"] for o in objects if o["kind"] == "LocalQueue"]
        ['batch-jobs-queue', 'ds-workspace-queue']
        >>> [o["metadata"]["name"] for o in seed001_queues(rd_workspace=True) if o["kind"] == "LocalQueue"]
        ['batch-jobs-queue', 'ds-workspace-queue', 'lq-rd-workspace']
    """
    objects: list[dict[str, Any]] = [
        _flavor("default-flavor"),
        _cluster_scoped("Cohort", "all-gpus", spec={}),
    ]
    for name, gpus in (("cq-production", 12), ("cq-development", 8)):
        quotas: dict[str, int | str] = {"cpu": 96, "memory": "768Gi"}
        if pods is not None:
            quotas["pods"] = pods
        quotas["nvidia.com/gpu"] = gpus
        objects.append(
            _cluster_queue(
                name,
                [_group("default-flavor", quotas)],
                cohort="all-gpus",
                preemption={"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
            )
        )
    objects += [
        _local_queue("batch-jobs-queue", namespace, "cq-production"),
        _local_queue("ds-workspace-queue", namespace, "cq-development"),
    ]
    if rd_workspace:
        objects.append(_local_queue("lq-rd-workspace", namespace, "cq-development"))
    objects += [
        _priority("prod-priority", 1000, "Production jobs"),
        _priority("dev-priority", 100, "Development jobs"),
        _priority("rd-priority", 100, "R&D workspace clusters"),
    ]
    return objects


def seed002_queues(
    namespace: str = "default",
    *,
    cluster_queue: str = "cluster-queue",
    memory: str | None = "144Gi",
    backoff_base_seconds: int | None = None,
    backoff_max_seconds: int | None = None,
) -> list[dict[str, Any]]:
    """Seed 002: gang autoscaling with Kueue and ProvisioningRequest (36 CPUs behind check ``sample-prov``).

    As the seed writes it: ResourceFlavor ``default-flavor``; a ClusterQueue with 36 CPUs whose
    ``admissionChecksStrategy`` puts AdmissionCheck ``sample-prov`` on ``default-flavor``; the check
    (``controllerName: kueue.x-k8s.io/provisioning-request``) configured by ProvisioningRequestConfig
    ``prov-test-config`` (class ``best-effort-atomic-scale-up.autoscaling.x-k8s.io``, managed resource
    ``cpu``, ``retryStrategy.backoffLimitCount: 2``); LocalQueue ``user-queue``. Filled in where the seed
    leaves gaps: the ClusterQueue's name (``cluster_queue``), the check's ``parameters.apiGroup``
    (required by the CRD), and a ``memory`` quota (``None`` leaves it out) because a RayCluster requests
    memory too and Kueue admits nothing that asks for a resource its ClusterQueue does not cover.
    ``backoff_base_seconds`` / ``backoff_max_seconds`` shorten the retry backoff (Kueue's defaults are
    60 s and 1800 s) for tests.

    Example:
        >>> objects = seed002_queues()
        >>> [o["kind"] for o in objects]  # doctest: +NORMALIZE_WHITESPACE
        ['ResourceFlavor', 'ProvisioningRequestConfig', 'AdmissionCheck', 'ClusterQueue', 'LocalQueue']
        >>> objects[3]["spec"]["admissionChecksStrategy"]
        {'admissionChecks': [{'name': 'sample-prov', 'onFlavors': ['default-flavor']}]}
    """
    quotas: dict[str, int | str] = {"cpu": 36}
    if memory is not None:
        quotas["memory"] = memory
    retry: dict[str, int] = {"backoffLimitCount": 2}
    if backoff_base_seconds is not None:
        retry["backoffBaseSeconds"] = backoff_base_seconds
    if backoff_max_seconds is not None:
        retry["backoffMaxSeconds"] = backoff_max_seconds
    return [
        _flavor("default-flavor"),
        _cluster_scoped(
            "ProvisioningRequestConfig",
            "prov-test-config",
            spec={
                "provisioningClassName": "best-effort-atomic-scale-up.autoscaling.x-k8s.io",
                "managedResources": ["cpu"],
                "retryStrategy": retry,
            },
        ),
        _cluster_scoped(
            "AdmissionCheck",
            "sample-prov",
            spec={
                "controllerName": "kueue.x-k8s.io/provisioning-request",
                "parameters": {
                    "apiGroup": "kueue.x-k8s.io",
                    "kind": "ProvisioningRequestConfig",
                    "name": "prov-test-config",
                },
            },
        ),
        _cluster_queue(
            cluster_queue,
            [_group("default-flavor", quotas)],
            admissionChecksStrategy={
                "admissionChecks": [{"name": "sample-prov", "onFlavors": ["default-flavor"]}]
            },
        ),
        _local_queue("user-queue", namespace, cluster_queue),
    ]


SEED003_LEVELS = (
    "cloud.provider.com/topology-block",
    "cloud.provider.com/topology-rack",
    "kubernetes.io/hostname",
)
"""Seed 003's Topology levels (the node labels of Kueue's TAS documentation)."""


def seed003_nodes(racks: int = 2, nodes_per_rack: int = 2, gpus_per_node: int = 2) -> list[dict[str, Any]]:
    """Seed 003's GPU nodes: one block, ``racks`` racks of ``nodes_per_rack`` nodes with ``gpus_per_node``
    GPUs, 16 CPUs and 64Gi each, labelled with the topology levels and ``nvidia.com/gpu.present``.

    Example:
        >>> nodes = seed003_nodes()
        >>> len(nodes), nodes[2]["metadata"]["labels"]["cloud.provider.com/topology-rack"]
        (4, 'rack-2')
    """
    nodes = []
    for rack in range(1, racks + 1):
        for index in range(1, nodes_per_rack + 1):
            name = f"gpu-node-{rack}-{index}"
            allocatable = {"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": str(gpus_per_node), "pods": "110"}
            labels = dict(zip(SEED003_LEVELS, ("block-1", f"rack-{rack}", name), strict=True))
            labels["nvidia.com/gpu.present"] = "true"
            nodes.append(
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {"name": name, "labels": labels},
                    "spec": {},
                    "status": {"capacity": dict(allocatable), "allocatable": allocatable},
                }
            )
    return nodes


def seed003_queues(
    team_a: str = "team-a", team_b: str = "team-b", *, cohort: str = "ml-teams", gpus: int = 4
) -> list[dict[str, Any]]:
    """Seed 003: two teams with equal quotas (``gpus`` GPUs, 32 CPUs, 128Gi each) in cohort ``cohort``, for
    Kueue's fair sharing: each ClusterQueue has ``fairSharing.weight: 1``, reclaims within the cohort and uses
    Admission Fair Sharing among its LocalQueues; LocalQueue ``team-queue`` in each team's namespace. The GPUs
    are in the topology-aware flavor ``tas-gpu`` (Topology ``default``: block, rack, hostname). Run the local
    plane with ``fair_sharing=True, admission_fair_sharing=True`` (Kueue's ``fairSharing.enable`` and
    ``admissionFairSharing``); :func:`seed003_nodes` are the nodes (:func:`seed003_scenario` has both).

    Example:
        >>> objects = seed003_queues()
        >>> [o["kind"] for o in objects][:3]
        ['Topology', 'ResourceFlavor', 'ResourceFlavor']
        >>> cq = next(o for o in objects if o["metadata"]["name"] == "team-a-cq")
        >>> cq["spec"]["fairSharing"], cq["spec"]["admissionScope"]
        ({'weight': 1}, {'admissionMode': 'UsageBasedAdmissionFairSharing'})
    """
    objects: list[dict[str, Any]] = [
        _cluster_scoped(
            "Topology", "default", spec={"levels": [{"nodeLabel": level} for level in SEED003_LEVELS]}
        ),
        _flavor("default-flavor"),
        _flavor("tas-gpu", nodeLabels={"nvidia.com/gpu.present": "true"}, topologyName="default"),
        _cluster_scoped("Cohort", cohort, spec={}),
    ]
    for team in (team_a, team_b):
        objects.append(
            _cluster_queue(
                f"{team}-cq",
                [
                    _group("default-flavor", {"cpu": 32, "memory": "128Gi"}),
                    _group("tas-gpu", {"nvidia.com/gpu": gpus}),
                ],
                cohort=cohort,
                preemption={"withinClusterQueue": "Never", "reclaimWithinCohort": "Any"},
                fairSharing={"weight": 1},
                admissionScope={"admissionMode": "UsageBasedAdmissionFairSharing"},
            )
        )
    objects += [_local_queue("team-queue", team, f"{team}-cq") for team in (team_a, team_b)]
    return objects


def seed003_scenario(
    team_a: str = "team-a", team_b: str = "team-b", *, cohort: str = "ml-teams", gpus: int = 4
) -> list[dict[str, Any]]:
    """Seed 003 as ``local up --scenario seed-003`` applies it: :func:`seed003_nodes`, then
    :func:`seed003_queues`.

    Example:
        >>> [o["kind"] for o in seed003_scenario()].count("Node")
        4
    """
    return [*seed003_nodes(), *seed003_queues(team_a, team_b, cohort=cohort, gpus=gpus)]


def seed004_queues(
    team_a: str = "team-a",
    team_b: str = "team-b",
    *,
    cohort: str = "team-ab",
    shared_queue: str = "shared-cq",
) -> list[dict[str, Any]]:
    """Seed 004: team-a (high priority, 1 GPU) and team-b (low priority, no GPU) share cohort ``team-ab``.

    ``shared_queue`` holds the cohort's CPU; ``<team_a>-cq`` and ``<team_b>-cq`` admit only their own
    namespace, each through LocalQueue ``local-queue``; priorities prod 1000 and dev 100.

    Example:
        >>> by_name = {o["metadata"]["name"]: o for o in seed004_queues() if o["kind"] == "ClusterQueue"}
        >>> sorted(by_name)
        ['shared-cq', 'team-a-cq', 'team-b-cq']
        >>> by_name["team-a-cq"]["spec"]["preemption"]["withinClusterQueue"]
        'LowerPriority'
    """

    def only(ns: str) -> dict[str, Any]:
        return {"matchLabels": {"kubernetes.io/metadata.name": ns}}

    def preempt(within: str) -> dict[str, Any]:
        return {
            "withinClusterQueue": within,
            "reclaimWithinCohort": "Any",
            "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100},
        }

    no_cpu: dict[str, int | str] = {"cpu": 0, "memory": 0}
    return [
        _flavor("default-flavor"),
        _flavor(
            "gpu-flavor", nodeLabels={"nvidia.com/gpu.present": "true"}, tolerations=[dict(GPU_TOLERATION)]
        ),
        _cluster_queue(
            shared_queue,
            [_group("default-flavor", {"cpu": 6, "memory": "16Gi"})],
            cohort=cohort,
            preemption=preempt("Never"),
        ),
        _cluster_queue(
            f"{team_a}-cq",
            [_group("default-flavor", no_cpu), _group("gpu-flavor", {"nvidia.com/gpu": "1"})],
            cohort=cohort,
            selector=only(team_a),
            preemption=preempt("LowerPriority"),
        ),
        _cluster_queue(
            f"{team_b}-cq",
            [
                _group("gpu-flavor", {"nvidia.com/gpu": "0"}, borrowingLimit={"nvidia.com/gpu": "0"}),
                _group("default-flavor", no_cpu),
            ],
            cohort=cohort,
            selector=only(team_b),
        ),
        _local_queue("local-queue", team_a, f"{team_a}-cq"),
        _local_queue("local-queue", team_b, f"{team_b}-cq"),
        _priority("prod-priority", 1000, "Priority class for prod jobs"),
        _priority("dev-priority", 100, "Priority class for development jobs"),
    ]


def team_queue(namespace: str = "default", gpus: int = 4) -> list[dict[str, Any]]:
    """The quickstart's team queue: ClusterQueue ``cq-development`` (16 CPUs, 64Gi, ``gpus`` GPUs),
    LocalQueue ``ds-workspace-queue`` in ``namespace`` and the ``rd-priority`` WorkloadPriorityClass.

    Example:
        >>> [(o["kind"], o["metadata"]["name"]) for o in team_queue()]  # doctest: +NORMALIZE_WHITESPACE
        [('ResourceFlavor', 'default-flavor'), ('ClusterQueue', 'cq-development'),
         ('LocalQueue', 'ds-workspace-queue'), ('WorkloadPriorityClass', 'rd-priority')]
    """
    quotas: dict[str, int | str] = {"cpu": 16, "memory": "64Gi", "nvidia.com/gpu": gpus}
    return [
        _flavor("default-flavor"),
        _cluster_queue("cq-development", [_group("default-flavor", quotas)]),
        _local_queue("ds-workspace-queue", namespace, "cq-development"),
        _priority("rd-priority", 100, "R&D workspace clusters"),
    ]


SCENARIOS: dict[str, Callable[[], list[dict[str, Any]]]] = {
    "seed-000": seed000_queues,
    "seed-001": seed001_queues,
    "seed-002": seed002_queues,
    "seed-003": seed003_scenario,
    "seed-004": seed004_queues,
    "team": team_queue,
}
"""Every scenario by name (``rayqueue local up --scenario NAME``), each called with its defaults."""


SCENARIO_OPTIONS: dict[str, dict[str, Any]] = {
    "seed-003": {"fair_sharing": True, "admission_fair_sharing": True},
}
"""The control-plane options a scenario needs (Kueue's manager configuration, which is not an object a
scenario can apply): ``local up --scenario NAME`` starts with them; ``--set`` still wins.
"""


def scenario_objects(name: str) -> list[dict[str, Any]]:
    """The objects ``local up --scenario NAME`` applies: the namespaces the scenario uses, then its objects.

    Example:
        >>> [(o["kind"], o["metadata"]["name"]) for o in scenario_objects("team")][:2]
        [('Namespace', 'default'), ('ResourceFlavor', 'default-flavor')]
    """
    objects = SCENARIOS[name]()
    namespaces = dict.fromkeys(o["metadata"]["namespace"] for o in objects if "namespace" in o["metadata"])
    return [
        *({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}} for ns in namespaces),
        *objects,
    ]
