#!/usr/bin/env python3
"""Render every seed configuration offline: no cluster, no credentials, no network.

The seeds are the workflows rayqueue_sdk serves (a workspace cluster, quick jobs on it, a job-owned
cluster, two teams sharing quota with priorities). Each configuration below is written exactly as the seed
writes it, with ``codeflare_sdk`` replaced by ``rayqueue_sdk`` (the Kueue admin setups come from
``rayqueue_local.scenarios``), and rendered with ``to_yaml()``: the manifests ``apply()`` would send.

Usage:
    python3 examples/render_seeds.py            # one YAML stream on stdout, narrated in comments
    python3 examples/render_seeds.py OUT_DIR    # one file per object in OUT_DIR, narration on stdout

The stdout stream can be fed to ``kubectl apply -f -`` (each seed is its own scenario: apply one at a time).
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rayqueue_local.scenarios import GPU_TOLERATION, seed000_queues, seed001_queues, seed004_queues
from rayqueue_sdk import Cluster, ClusterConfiguration, ManagedClusterConfig, RayJob
from rayqueue_sdk.job.rayjob import render_rayjob
from rayqueue_sdk.manifests import dump_yaml


def seed000() -> list[tuple[str, Any]]:
    """Seed 000: Kueue + KEDA scale-to-zero proof of concept, two 2-GPU clusters for a 2-GPU quota."""
    admin = seed000_queues()
    out: list[tuple[str, Any]] = [
        (
            "Kueue admin: ClusterQueue with a quota of 2 NVIDIA GPUs, its flavor, LocalQueue demo/user-queue",
            admin,
        )
    ]
    for name, note in (
        ("first-raycluster", "admitted: it fits the 2-GPU quota (1 GPU head + 1 GPU worker)"),
        ("second-raycluster", "the same configuration renamed: it waits in the queue until quota frees up"),
    ):
        cluster = Cluster(
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
        out.append((f"RayCluster {name}: {note}", cluster.to_dict()))
    return out


def seed001(scratch: Path) -> list[tuple[str, Any]]:
    """Seed 001: three workflows (workspace cluster, quick jobs on it, job-owned cluster) with priorities."""
    admin = seed001_queues()
    workspace_cluster = Cluster(
        ClusterConfiguration(
            name="my-workspace-cluster",
            num_workers=2,
            worker_cpu_requests=2,
            worker_memory_requests=8,
            worker_extended_resource_requests={"nvidia.com/gpu": 1},  # 2 GPUs total
            local_queue="ds-workspace-queue",  # The team's development queue
            labels={"kueue.x-k8s.io/priority-class": "rd-priority"},  # The R&D priority
        )
    )
    quick_job = RayJob(
        job_name="quick-dev-test",
        entrypoint="python test_model.py",
        cluster_name="my-workspace-cluster",  # Points to your running cluster
        namespace="your-namespace",
        runtime_env={"working_dir": ".", "pip": "requirements.txt"},  # Uses your current directory
    )
    production_job = RayJob(
        job_name="final-training-run",
        local_queue="batch-jobs-queue",  # Production team's queue
        cluster_config=ManagedClusterConfig(  # Define cluster inline
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
    # The seeds' requirements files live in the user's project; stand-ins are written to a scratch directory.
    for relative in ("requirements.txt", "path/to/requirements.txt"):
        requirements = scratch / relative
        requirements.parent.mkdir(parents=True, exist_ok=True)
        requirements.write_text("torch\nnumpy>=1.26\n", encoding="utf-8")
    return [
        (
            "Kueue admin: production (12 GPUs) and development (8 GPUs) ClusterQueues borrowing from each "
            "other in cohort all-gpus; production reclaims; priorities prod 1000, dev/R&D 100",
            admin,
        ),
        (
            "Workflow 1, RayCluster my-workspace-cluster: a long-running workspace with 2 GPUs, queued in "
            "ds-workspace-queue at rd-priority (namespace chosen at apply time)",
            workspace_cluster.to_dict(),
        ),
        (
            "Workflow 2, job quick-dev-test on the existing workspace cluster: not a Kubernetes object "
            "(Kueue cannot manage it); this is the request Ray's job API receives. The local working_dir is "
            "packaged at submit time; pip lines come from requirements.txt (a stand-in here)",
            render_rayjob(quick_job, base_dir=scratch),
        ),
        (
            "Workflow 3, RayJob final-training-run: an ephemeral 8-GPU cluster owned by the job, queued in "
            "batch-jobs-queue at prod-priority, deleted when the job finishes; pip lines come from "
            "./path/to/requirements.txt (a stand-in here)",
            render_rayjob(production_job, base_dir=scratch),
        ),
    ]


def seed004() -> list[tuple[str, Any]]:
    """Seed 004: team-a (high priority, GPU) and team-b (low priority, CPU) share cohort team-ab."""
    admin = seed004_queues()

    def team_cluster(prod: bool) -> dict[str, Any]:
        return Cluster(
            ClusterConfiguration(
                name="raycluster-prod" if prod else "raycluster-dev",
                namespace="team-a" if prod else "team-b",
                local_queue="local-queue",
                priority_class="prod-priority" if prod else "dev-priority",
                image="quay.io/project-codeflare/ray:2.20.0-py39-cu118",
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
        ).to_dict()

    return [
        (
            "Kueue admin: shared-cq holds the cohort's CPU; team-a-cq owns 1 GPU and preempts lower "
            "priorities; team-b-cq has no GPU",
            admin,
        ),
        (
            "RayCluster raycluster-dev (team-b, dev-priority): takes the whole shared CPU pool",
            team_cluster(False),
        ),
        (
            "RayCluster raycluster-prod (team-a, prod-priority, 1 GPU): preempts raycluster-dev",
            team_cluster(True),
        ),
    ]


def _sections(scratch: Path) -> list[tuple[str, str, list[tuple[str, Any]]]]:
    return [
        ("seed000", "Seed 000: Kueue and KEDA, two Ray clusters for a 2-GPU quota", seed000()),
        ("seed001", "Seed 001: workspace cluster, quick jobs, job-owned clusters", seed001(scratch)),
        ("seed004", "Seed 004: two teams, one cohort, priority preemption", seed004()),
    ]


def _is_k8s(obj: Any) -> bool:
    return isinstance(obj, dict) and "apiVersion" in obj and "kind" in obj


def render_to_stream(write: Callable[[str], Any], scratch: Path) -> None:
    """Write every seed's objects as one YAML stream; narration and non-Kubernetes bodies are comments."""
    for _, title, items in _sections(scratch):
        write(f"# {'=' * 100}\n# {title}\n# {'=' * 100}\n")
        for note, objects in items:
            write(f"# --- {note}\n")
            for obj in objects if isinstance(objects, list) else [objects]:
                text = dump_yaml(obj)
                if _is_k8s(obj):
                    write("---\n" + text)
                else:
                    write("".join(f"#   {line}\n" for line in text.splitlines()))


def render_to_directory(directory: Path, scratch: Path) -> list[Path]:
    """Write one YAML file per Kubernetes object (and the job request) into ``directory``; narrate."""
    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for seed, title, items in _sections(scratch):
        print(f"\n{title}")
        for note, objects in items:
            print(f"  - {note}")
            for obj in objects if isinstance(objects, list) else [objects]:
                if _is_k8s(obj):
                    meta = obj["metadata"]
                    where = f"{meta['namespace']}-" if "namespace" in meta else ""
                    path = directory / f"{seed}-{obj['kind'].lower()}-{where}{meta['name']}.yaml"
                else:
                    path = directory / f"{seed}-job-submission-{obj['submission_id']}.yaml"
                path.write_text(f"# {note}\n" + dump_yaml(obj), encoding="utf-8")
                written.append(path)
                print(f"      {path}")
    return written


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="rayqueue-seeds-") as tmp:
        if len(argv) > 1:
            written = render_to_directory(Path(argv[1]), Path(tmp))
            print(f"\n{len(written)} files written to {argv[1]} (offline: no cluster, no credentials).")
        else:
            render_to_stream(sys.stdout.write, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
