"""The scenarios are plain data in rayqueue_local; the SDK's Kueue builders must produce the same objects.

rayqueue_local does not import rayqueue_sdk, so the scenario dicts are written out by hand. This test
builds each scenario again with :mod:`rayqueue_sdk.manifests.kueue` (which also runs the builders'
CRD-rule checks) and asserts equality, so the two cannot drift apart.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rayqueue_local import scenarios as s
from rayqueue_sdk.manifests import kueue as k

LOCAL_SRC = Path(s.__file__).resolve().parent


def sdk_seed000(namespace: str = "demo", *, cluster_queue: str = "cluster-queue") -> list[dict[str, Any]]:
    return [
        k.resource_flavor("default-flavor"),
        k.cluster_queue(
            cluster_queue,
            resource_groups=[
                k.resource_group(
                    k.flavor_quotas(
                        "default-flavor", {"cpu": 9, "memory": "36Gi", "pods": 5, "nvidia.com/gpu": 2}
                    )
                )
            ],
        ),
        k.local_queue("user-queue", namespace, cluster_queue),
    ]


def sdk_seed001(
    namespace: str = "your-namespace", *, pods: int | None = None, rd_workspace: bool = False
) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = [k.resource_flavor("default-flavor"), k.cohort("all-gpus")]
    for name, gpus in (("cq-production", 12), ("cq-development", 8)):
        quotas: dict[str, Any] = {"cpu": 96, "memory": "768Gi"}
        if pods is not None:
            quotas["pods"] = pods
        quotas["nvidia.com/gpu"] = gpus
        objects.append(
            k.cluster_queue(
                name,
                cohort="all-gpus",
                preemption=k.preemption(reclaim_within_cohort="Any", within_cluster_queue="LowerPriority"),
                resource_groups=[k.resource_group(k.flavor_quotas("default-flavor", quotas))],
            )
        )
    objects += [
        k.local_queue("batch-jobs-queue", namespace, "cq-production"),
        k.local_queue("ds-workspace-queue", namespace, "cq-development"),
    ]
    if rd_workspace:
        objects.append(k.local_queue("lq-rd-workspace", namespace, "cq-development"))
    objects += [
        k.workload_priority_class("prod-priority", 1000, "Production jobs"),
        k.workload_priority_class("dev-priority", 100, "Development jobs"),
        k.workload_priority_class("rd-priority", 100, "R&D workspace clusters"),
    ]
    return objects


def sdk_seed002(
    namespace: str = "default",
    *,
    cluster_queue: str = "cluster-queue",
    memory: str | None = "144Gi",
    backoff_base_seconds: int | None = None,
    backoff_max_seconds: int | None = None,
) -> list[dict[str, Any]]:
    quotas: dict[str, Any] = {"cpu": 36}
    if memory is not None:
        quotas["memory"] = memory
    return [
        k.resource_flavor("default-flavor"),
        k.provisioning_request_config(
            "prov-test-config",
            provisioning_class_name="best-effort-atomic-scale-up.autoscaling.x-k8s.io",
            managed_resources=["cpu"],
            backoff_limit_count=2,
            backoff_base_seconds=backoff_base_seconds,
            backoff_max_seconds=backoff_max_seconds,
        ),
        k.admission_check("sample-prov", parameters="prov-test-config"),
        k.cluster_queue(
            cluster_queue,
            resource_groups=[k.resource_group(k.flavor_quotas("default-flavor", quotas))],
            admission_checks=[k.admission_check_rule("sample-prov", on_flavors=["default-flavor"])],
        ),
        k.local_queue("user-queue", namespace, cluster_queue),
    ]


def sdk_seed004(
    team_a: str = "team-a",
    team_b: str = "team-b",
    *,
    cohort: str = "team-ab",
    shared_queue: str = "shared-cq",
) -> list[dict[str, Any]]:
    def only(ns: str) -> dict[str, Any]:
        return {"matchLabels": {"kubernetes.io/metadata.name": ns}}

    def preempt(within: str) -> dict[str, Any]:
        return k.preemption(
            reclaim_within_cohort="Any",
            borrow_within_cohort="LowerPriority",
            max_priority_threshold=100,
            within_cluster_queue=within,
        )

    toleration = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    return [
        k.resource_flavor("default-flavor"),
        k.resource_flavor(
            "gpu-flavor", node_labels={"nvidia.com/gpu.present": "true"}, tolerations=[toleration]
        ),
        k.cluster_queue(
            shared_queue,
            cohort=cohort,
            preemption=preempt("Never"),
            resource_groups=[
                k.resource_group(k.flavor_quotas("default-flavor", {"cpu": 6, "memory": "16Gi"}))
            ],
        ),
        k.cluster_queue(
            f"{team_a}-cq",
            cohort=cohort,
            preemption=preempt("LowerPriority"),
            namespace_selector=only(team_a),
            queueing_strategy="BestEffortFIFO",
            resource_groups=[
                k.resource_group(k.flavor_quotas("default-flavor", {"cpu": 0, "memory": 0})),
                k.resource_group(k.flavor_quotas("gpu-flavor", {"nvidia.com/gpu": "1"})),
            ],
        ),
        k.cluster_queue(
            f"{team_b}-cq",
            cohort=cohort,
            namespace_selector=only(team_b),
            queueing_strategy="BestEffortFIFO",
            resource_groups=[
                k.resource_group(
                    k.flavor_quotas(
                        "gpu-flavor", {"nvidia.com/gpu": "0"}, borrowing_limits={"nvidia.com/gpu": "0"}
                    )
                ),
                k.resource_group(k.flavor_quotas("default-flavor", {"cpu": 0, "memory": 0})),
            ],
        ),
        k.local_queue("local-queue", team_a, f"{team_a}-cq"),
        k.local_queue("local-queue", team_b, f"{team_b}-cq"),
        k.workload_priority_class("prod-priority", 1000, "Priority class for prod jobs"),
        k.workload_priority_class("dev-priority", 100, "Priority class for development jobs"),
    ]


def sdk_seed003(
    team_a: str = "team-a", team_b: str = "team-b", *, cohort: str = "ml-teams", gpus: int = 4
) -> list[dict[str, Any]]:
    """Seed 003 from the SDK's builders; the Nodes are plain data (the SDK builds no Nodes)."""
    objects = [
        k.topology("default", list(s.SEED003_LEVELS)),
        k.resource_flavor("default-flavor"),
        k.resource_flavor("tas-gpu", node_labels={"nvidia.com/gpu.present": "true"}, topology_name="default"),
        k.cohort(cohort),
    ]
    for team in (team_a, team_b):
        objects.append(
            k.cluster_queue(
                f"{team}-cq",
                cohort=cohort,
                preemption=k.preemption(reclaim_within_cohort="Any"),
                resource_groups=[
                    k.resource_group(k.flavor_quotas("default-flavor", {"cpu": 32, "memory": "128Gi"})),
                    k.resource_group(k.flavor_quotas("tas-gpu", {"nvidia.com/gpu": gpus})),
                ],
                fair_sharing_weight=1,
                admission_mode="UsageBasedAdmissionFairSharing",
            )
        )
    objects += [k.local_queue("team-queue", team, f"{team}-cq") for team in (team_a, team_b)]
    return [*s.seed003_nodes(), *objects]


def sdk_team(namespace: str = "default", gpus: int = 4) -> list[dict[str, Any]]:
    return [
        k.resource_flavor("default-flavor"),
        k.cluster_queue(
            "cq-development",
            resource_groups=[
                k.resource_group(
                    k.flavor_quotas("default-flavor", {"cpu": 16, "memory": "64Gi", "nvidia.com/gpu": gpus})
                )
            ],
        ),
        k.local_queue("ds-workspace-queue", namespace, "cq-development"),
        k.workload_priority_class("rd-priority", 100, "R&D workspace clusters"),
    ]


CASES = [
    (s.seed000_queues, sdk_seed000, {}),
    (s.seed000_queues, sdk_seed000, {"namespace": "ns1", "cluster_queue": "cq-x"}),
    (s.seed001_queues, sdk_seed001, {}),
    (s.seed001_queues, sdk_seed001, {"namespace": "n", "pods": 7, "rd_workspace": True}),
    (s.seed002_queues, sdk_seed002, {}),
    (s.seed002_queues, sdk_seed002, {"namespace": "n", "memory": None, "backoff_base_seconds": 1}),
    (s.seed002_queues, sdk_seed002, {"cluster_queue": "cq", "backoff_max_seconds": 4}),
    (s.seed003_scenario, sdk_seed003, {}),
    (s.seed003_scenario, sdk_seed003, {"team_a": "x", "team_b": "y", "cohort": "c", "gpus": 8}),
    (s.seed004_queues, sdk_seed004, {}),
    (s.seed004_queues, sdk_seed004, {"team_a": "x", "team_b": "y", "cohort": "c", "shared_queue": "s"}),
    (s.team_queue, sdk_team, {}),
    (s.team_queue, sdk_team, {"namespace": "t", "gpus": 1}),
]


@pytest.mark.parametrize(("local", "sdk", "kwargs"), CASES, ids=lambda c: getattr(c, "__name__", repr(c)))
def test_scenario_equals_sdk_builders(local: Any, sdk: Any, kwargs: dict[str, Any]) -> None:
    assert local(**kwargs) == sdk(**kwargs)


def test_every_scenario_is_covered() -> None:
    covered = {local for local, _, _ in CASES}
    assert set(s.SCENARIOS.values()) <= covered


def test_seed003_objects_validate_against_the_crds(crd_dir: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    yaml = pytest.importorskip("yaml")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    schemas = {}
    for plural in ("topologies", "resourceflavors", "cohorts", "clusterqueues", "localqueues"):
        crd = yaml.load((crd_dir / "kueue" / f"kueue.x-k8s.io_{plural}.yaml").read_text(), Loader=loader)
        version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1beta2")
        schemas[crd["spec"]["names"]["kind"]] = version["schema"]["openAPIV3Schema"]
    objects = sdk_seed003()
    for obj in objects:
        if obj["kind"] != "Node":
            jsonschema.Draft7Validator(schemas[obj["kind"]]).validate(obj)
    assert {o["kind"] for o in objects} >= {"Topology", "ResourceFlavor", "Cohort", "ClusterQueue", "Node"}


def test_gpu_toleration_is_seed004s() -> None:
    gpu_flavor = next(o for o in s.seed004_queues() if o["metadata"]["name"] == "gpu-flavor")
    assert gpu_flavor["spec"]["tolerations"] == [s.GPU_TOLERATION]


def test_scenario_objects_namespaces_first() -> None:
    kinds = [o["kind"] for o in s.scenario_objects("seed-004")]
    assert kinds[:2] == ["Namespace", "Namespace"] and "Namespace" not in kinds[2:]


def test_rayqueue_local_never_imports_the_sdk() -> None:
    offenders = [
        f"{path.relative_to(LOCAL_SRC)}:{n}"
        for path in sorted(LOCAL_SRC.rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "rayqueue_sdk" in line and ("import" in line)
    ]
    assert offenders == []
    code = "import sys, rayqueue_local.scenarios, rayqueue_local.cli; print('rayqueue_sdk' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
