"""``stop()`` and ``resubmit()`` back to back, as a notebook's consecutive cells run them (issue 38), on a job
that checkpoints to a local directory: the second run resumes from the checkpoint the first one left.

Before, for a job-owned cluster ``resubmit()`` read the job as still RUNNING (the stop had not landed),
returned True, and the job stayed STOPPED. Each run appends the step it started from to ``runs`` in the
checkpoint directory, so the test reads what the runs did, not their logs.
"""

from __future__ import annotations

import json
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rayqueue_sdk import JobPhase, ManagedClusterConfig, RayJob

NS = "your-namespace"
STEPS = 8

TRAIN = textwrap.dedent(
    f"""
    import json, os, time
    ckpt = os.environ["CKPT_DIR"]
    state = os.path.join(ckpt, "state.json")
    start = json.load(open(state))["step"] if os.path.exists(state) else 0
    with open(os.path.join(ckpt, "runs"), "a") as runs:
        runs.write(f"{{start}}\\n")
    print("resumed from", start, flush=True)
    for step in range(start + 1, {STEPS} + 1):
        time.sleep(1.5)
        with open(state + ".tmp", "w") as out:
            json.dump({{"step": step}}, out)
        os.replace(state + ".tmp", state)
        print("step", step, flush=True)
    """
)


def _until(check: Callable[[], Any], what: str, limit: float = 300.0) -> Any:
    deadline = time.monotonic() + limit
    while not (value := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.2)
    return value


def _step(ckpt: Path) -> int:
    try:
        return int(json.loads((ckpt / "state.json").read_text())["step"])
    except (OSError, ValueError, KeyError):  # not written yet, or caught between write and rename
        return 0


def _job(tmp_path: Path, name: str, **where: Any) -> tuple[RayJob, Path]:
    work, ckpt = tmp_path / "work", tmp_path / "ckpt"
    work.mkdir()
    ckpt.mkdir()
    (work / "train.py").write_text(TRAIN)
    job = RayJob(
        job_name=name,
        entrypoint="python train.py",
        namespace=NS,
        runtime_env={"working_dir": str(work), "env_vars": {"CKPT_DIR": str(ckpt)}},
        **where,
    )
    return job, ckpt


def _stop_and_resubmit_back_to_back(job: RayJob, ckpt: Path) -> int:
    """Run until a checkpoint of step 2 or more exists, then stop and resubmit in one breath; returns the
    step checkpointed before the stop."""
    job.submit()
    _until(lambda: _step(ckpt) >= 2, "the first run's second checkpoint")
    assert job.stop() is True
    assert job.resubmit() is True
    return _step(ckpt)


def test_a_job_owned_job_stopped_and_resubmitted_at_once_resumes_from_its_checkpoint(
    tmp_path: Path, logged_in: Any
) -> None:
    job, ckpt = _job(
        tmp_path,
        "resume-owned",
        cluster_config=ManagedClusterConfig(num_workers=0),
        local_queue="batch-jobs-queue",
    )
    try:
        seen = _stop_and_resubmit_back_to_back(job, ckpt)
        final = job.wait(timeout=600)
        assert final.phase is JobPhase.SUCCEEDED, final
        runs = [int(line) for line in (ckpt / "runs").read_text().split()]
        assert runs[0] == 0 and len(runs) == 2
        assert runs[1] == seen >= 2  # the second run started from the first run's last checkpoint
        assert _step(ckpt) == STEPS
    finally:
        job.delete()


def test_a_job_on_an_existing_cluster_stopped_and_resubmitted_at_once_resumes(
    tmp_path: Path, workspace: str
) -> None:
    job, ckpt = _job(tmp_path, "resume-existing", cluster_name=workspace)
    first = None
    try:
        job.submit()
        first = job.job_id
        _until(lambda: _step(ckpt) >= 2, "the first run's second checkpoint")
        assert job.stop() is True
        assert job.resubmit() is True
        seen = _step(ckpt)
        assert job.job_id != first
        final = job.wait(timeout=600)
        assert final.phase is JobPhase.SUCCEEDED, final
        runs = [int(line) for line in (ckpt / "runs").read_text().split()]
        assert runs[0] == 0 and len(runs) == 2
        assert runs[1] >= seen >= 2
        assert _step(ckpt) == STEPS
    finally:
        job.delete()
