"""The seed configurations (seeds 000, 001, 004), written as the seeds write them, for the unit tests.

Each function returns what the seed builds, with ``codeflare_sdk`` replaced by ``rayqueue_sdk``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rayqueue_local.scenarios import GPU_TOLERATION, seed000_queues, seed001_queues, seed004_queues
from rayqueue_sdk import Cluster, ClusterConfiguration, ManagedClusterConfig, RayJob

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
    return seed000_queues()


def seed001_admin() -> list[dict[str, Any]]:
    """Seed 001's admin setup: production (12 GPUs) and development (8 GPUs) sharing the all-gpus cohort."""
    return seed001_queues(rd_workspace=True)


def seed004_admin() -> list[dict[str, Any]]:
    """Seed 004's flavors, three ClusterQueues in cohort team-ab, two LocalQueues and two priorities."""
    return seed004_queues()
