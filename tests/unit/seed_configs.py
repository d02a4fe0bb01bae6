"""The seed configurations (seeds 000, 001, 004), written as the seeds write them, for the unit tests.

Each function returns what the seed builds, with ``codeflare_sdk`` replaced by ``rayqueue_sdk``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rayqueue_sdk import Cluster, ClusterConfiguration, ManagedClusterConfig, RayJob
from rayqueue_sdk.manifests import kueue as k

GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
SEED_004_IMAGE = "quay.io/project-codeflare/ray:2.20.0-py39-cu118"


def workspace_cluster() -> Cluster:
    """Seed 001, workflow 1: the long-running workspace cluster."""
    return Cluster(
        ClusterConfiguration(
            name="my-workspace-cluster",
            num_workers=2,
            worker_cpu_requests=2,
            worker_memory_requests=8,
            worker_extended_resource_requests={"nvidia.com/gpu": 1},  # 2 GPUs total
            local_queue="ds-workspace-queue",
            labels={"kueue.x-k8s.io/priority-class": "rd-priority"},
        )
    )


def seed000_cluster(name: str) -> Cluster:
    """Seed 000: first-raycluster (and second-raycluster, the same configuration renamed)."""
    return Cluster(
        ClusterConfiguration(
            name=name,
            namespace="demo",
            head_cpu_requests=2,
            head_cpu_limits=2,
            head_memory_requests=8,
            head_memory_limits=8,
            head_extended_resource_requests={"nvidia.com/gpu": 1},
            worker_extended_resource_requests={"nvidia.com/gpu": 1},
            num_workers=1,
            worker_cpu_requests=2,
            worker_cpu_limits=2,
            worker_memory_requests=8,
            worker_memory_limits=8,
            local_queue="user-queue",  # Specify the LocalQueue name
        )
    )


def quick_job() -> RayJob:
    """Seed 001, workflow 2: a job on the existing workspace cluster."""
    return RayJob(
        job_name="quick-dev-test",
        entrypoint="python test_model.py",
        cluster_name="my-workspace-cluster",
        namespace="your-namespace",
        runtime_env={"working_dir": ".", "pip": "requirements.txt"},
    )


def production_job() -> RayJob:
    """Seed 001, workflow 3: the ephemeral job-owned cluster (needs ./path/to/requirements.txt)."""
    return RayJob(
        job_name="final-training-run",
        local_queue="batch-jobs-queue",
        cluster_config=ManagedClusterConfig(
            num_workers=4,
            worker_cpu_requests=8,
            worker_cpu_limits=8,
            worker_memory_requests=16,
            worker_memory_limits=16,
            worker_accelerators={"nvidia.com/gpu": 2},  # 8 GPUs total
        ),
        entrypoint="python train_model_full.py",
        runtime_env={
            "working_dir": "https://github.com/your-org/your-repo/archive/main.zip",
            "pip": "./path/to/requirements.txt",
        },
        labels={"kueue.x-k8s.io/priority-class": "prod-priority"},
    )


def write_requirements(root: Path, relative: str = "path/to/requirements.txt") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# training deps\ntorch\nnumpy>=1.26  # pinned below 2 elsewhere\n\n", encoding="utf-8")
    return path


def seed004_cluster(team: str) -> Cluster:
    """Seed 004: team-a's raycluster-prod (GPU worker, prod-priority) or team-b's raycluster-dev."""
    prod = team == "team-a"
    return Cluster(
        ClusterConfiguration(
            name="raycluster-prod" if prod else "raycluster-dev",
            namespace=team,
            local_queue="local-queue",
            priority_class="prod-priority" if prod else "dev-priority",
            image=SEED_004_IMAGE,
            head_cpu_requests="2",
            head_cpu_limits="2",
            head_memory_requests="3G",
            head_memory_limits="3G",
            num_workers=1,
            worker_cpu_requests="2",
            worker_cpu_limits="2",
            worker_memory_requests="3G",
            worker_memory_limits="3G",
            worker_extended_resource_requests={"nvidia.com/gpu": "1"} if prod else {},
            worker_tolerations=[GPU_TOLERATION] if prod else None,
        )
    )


def seed000_admin() -> list[dict[str, Any]]:
    """Seed 000's ClusterQueue, ResourceFlavor and LocalQueue (2 GPUs of quota)."""
    return [
        k.resource_flavor("default-flavor"),
        k.cluster_queue(
            "cluster-queue",
            resource_groups=[
                k.resource_group(
                    k.flavor_quotas(
                        "default-flavor", {"cpu": 9, "memory": "36Gi", "pods": 5, "nvidia.com/gpu": 2}
                    )
                )
            ],
        ),
        k.local_queue("user-queue", "demo", "cluster-queue"),
    ]


def seed001_admin() -> list[dict[str, Any]]:
    """Seed 001's admin setup: production (12 GPUs) and development (8 GPUs) sharing the all-gpus cohort."""
    objects: list[dict[str, Any]] = [k.resource_flavor("default-flavor"), k.cohort("all-gpus")]
    for name, gpus in (("cq-production", 12), ("cq-development", 8)):
        objects.append(
            k.cluster_queue(
                name,
                cohort="all-gpus",
                preemption=k.preemption(reclaim_within_cohort="Any", within_cluster_queue="LowerPriority"),
                resource_groups=[
                    k.resource_group(
                        k.flavor_quotas(
                            "default-flavor", {"cpu": 96, "memory": "768Gi", "nvidia.com/gpu": gpus}
                        )
                    )
                ],
            )
        )
    objects += [
        k.local_queue("batch-jobs-queue", "your-namespace", "cq-production"),
        k.local_queue("ds-workspace-queue", "your-namespace", "cq-development"),
        k.local_queue("lq-rd-workspace", "your-namespace", "cq-development"),
        k.workload_priority_class("prod-priority", 1000, "Production jobs"),
        k.workload_priority_class("dev-priority", 100, "Development jobs"),
        k.workload_priority_class("rd-priority", 100, "R&D workspace clusters"),
    ]
    return objects


def seed004_admin() -> list[dict[str, Any]]:
    """Seed 004's flavors, three ClusterQueues in cohort team-ab, two LocalQueues and two priorities."""
    shared_preemption = k.preemption(
        reclaim_within_cohort="Any",
        borrow_within_cohort="LowerPriority",
        max_priority_threshold=100,
        within_cluster_queue="Never",
    )
    team_a_preemption = k.preemption(
        reclaim_within_cohort="Any",
        borrow_within_cohort="LowerPriority",
        max_priority_threshold=100,
        within_cluster_queue="LowerPriority",
    )

    def only(ns: str) -> dict[str, Any]:
        return {"matchLabels": {"kubernetes.io/metadata.name": ns}}

    return [
        k.resource_flavor("default-flavor"),
        k.resource_flavor(
            "gpu-flavor", node_labels={"nvidia.com/gpu.present": "true"}, tolerations=[GPU_TOLERATION]
        ),
        k.cluster_queue(
            "shared-cq",
            cohort="team-ab",
            preemption=shared_preemption,
            resource_groups=[
                k.resource_group(k.flavor_quotas("default-flavor", {"cpu": 6, "memory": "16Gi"}))
            ],
        ),
        k.cluster_queue(
            "team-a-cq",
            cohort="team-ab",
            preemption=team_a_preemption,
            namespace_selector=only("team-a"),
            queueing_strategy="BestEffortFIFO",
            resource_groups=[
                k.resource_group(k.flavor_quotas("default-flavor", {"cpu": 0, "memory": 0})),
                k.resource_group(k.flavor_quotas("gpu-flavor", {"nvidia.com/gpu": "1"})),
            ],
        ),
        k.cluster_queue(
            "team-b-cq",
            cohort="team-ab",
            namespace_selector=only("team-b"),
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
        k.local_queue("local-queue", "team-a", "team-a-cq"),
        k.local_queue("local-queue", "team-b", "team-b-cq"),
        k.workload_priority_class("prod-priority", 1000, "Priority class for prod jobs"),
        k.workload_priority_class("dev-priority", 100, "Priority class for development jobs"),
    ]
