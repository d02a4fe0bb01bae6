"""Seed 004's story with checkpoints: a low-priority RayJob that checkpoints to S3 is preempted by a
high-priority one; when Kueue admits it again, Ray Train resumes it from its last checkpoint (its own
``storage_path`` and run name), and ``status()`` / ``logs()`` say that it resumed and from where.

The object store is moto's S3 on loopback (``s3_store``); the training script is the CPU stand-in of
codeflare-sdk's ``train_with_checkpoints.py`` in ``examples/checkpointing`` (same checkpoint logic and log
lines, no torch), given the S3 endpoint and credentials as the environment variables it reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rayqueue_sdk import JobPhase, ManagedClusterConfig, RayJob

pytestmark = pytest.mark.ray

NS = "your-namespace"
EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "checkpointing"


def _poll(fetch: Callable[[], Any], done: Callable[[Any], bool], timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    value = fetch()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(0.5)
        value = fetch()
    return value


def _logs(job: RayJob) -> str:
    try:
        return job.logs()
    except Exception:  # not started yet, or between clusters: no logs to read now
        return ""


def test_a_preempted_checkpointing_job_resumes_from_its_last_checkpoint(
    logged_in: Any, s3_store: Any
) -> None:
    gpus = ManagedClusterConfig(num_workers=2, worker_accelerators={"nvidia.com/gpu": 6})  # the 12 GPUs
    env = {**s3_store.env(), "RAY_CHECKPOINT_PREFIX": "seed004", "EPOCHS": "6", "EPOCH_SECONDS": "4"}
    victim = RayJob(
        job_name="ckpt-low-prio",
        entrypoint="python train_with_checkpoints.py",
        cluster_config=gpus,
        local_queue="batch-jobs-queue",
        priority_class="rd-priority",
        namespace=NS,
        runtime_env={"working_dir": str(EXAMPLE), "env_vars": env},
    )
    preemptor = RayJob(
        job_name="ckpt-prod-run",
        entrypoint="python -c 'print(1)'",
        cluster_config=gpus,
        local_queue="batch-jobs-queue",
        priority_class="prod-priority",
        namespace=NS,
    )
    victim.submit()
    try:
        # Two epochs checkpointed to S3 before the preemption.
        first = _poll(lambda: _logs(victim), lambda text: "Epoch 1/5" in text, 600)
        assert "NO CHECKPOINT FOUND" in first and "Epoch 1/5" in first
        assert s3_store.object_keys("ray-checkpoints/seed004/mnist-checkpointing-run/")
        assert victim.status().resumed_from is None  # the first run started fresh

        preemptor.submit()
        preempted = _poll(victim.status, lambda s: s.phase is not JobPhase.RUNNING, 300)
        assert preempted.phase in (JobPhase.PREEMPTED, JobPhase.REQUEUED, JobPhase.QUEUED)
        assert preemptor.wait(timeout=600).phase is JobPhase.SUCCEEDED
        preemptor.delete()  # its quota goes back; Kueue admits the victim again

        done = victim.wait(timeout=900)
        assert done.phase is JobPhase.SUCCEEDED
        logs = victim.logs()
        assert "RESUMING FROM CHECKPOINT - Starting at epoch" in logs and "TRAINING COMPLETE" in logs
        resumed = victim.status()
        assert resumed.resumed_from is not None
        assert "seed004/mnist-checkpointing-run" in resumed.resumed_from
        assert "epoch " in resumed.resumed_from and "epoch 0)" not in resumed.resumed_from
        assert resumed.resumed_from in resumed.explanation
    finally:
        preemptor.delete()
        victim.delete()
