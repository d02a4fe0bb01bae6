"""examples/ci/nightly.sh, run for real against the docs' local control plane: it submits a job-owned job
through a Kueue queue, streams its logs and exits with rayqueue's exit code (0 success, 8 the job failed,
3 a missing queue), the codes the pipeline files in examples/ci gate on."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from rayqueue_local.scenarios import seed001_queues

REPO = Path(__file__).resolve().parents[2]
CI = REPO / "examples" / "ci"
NS = "ci-nightly"


@pytest.fixture(scope="module")
def ci_plane(docs_plane: Any) -> Any:
    docs_plane.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}])
    docs_plane.apply(seed001_queues(NS, pods=40))
    return docs_plane


def nightly(plane: Any, tmp_path: Path, **settings: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "RAYQUEUE": f"{sys.executable} -m rayqueue_sdk.cli.main",
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO / "local" / "src")]),
        "RAYQUEUE_SERVER": plane.server,
        "RAYQUEUE_TOKEN": plane.token,
        "RAYQUEUE_CA_CERT": str(plane.ca_cert_path),
        "NAMESPACE": NS,
        "LOCAL_QUEUE": "batch-jobs-queue",
        "TIMEOUT": "300",
        **settings,
    }
    env.pop("KUBECONFIG", None)
    return subprocess.run(
        [shutil.which("bash") or "bash", str(CI / "nightly.sh")],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_succeeding_nightly_job_streams_its_logs_and_exits_0(ci_plane: Any, tmp_path: Path) -> None:
    proc = nightly(ci_plane, tmp_path, JOB_NAME="nightly-ok", PRIORITY_CLASS="prod-priority",
                   ENTRYPOINT="python -c \"print('epoch', 1); print('epoch', 2)\"")  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "epoch 1" in proc.stdout and "epoch 2" in proc.stdout
    assert "job nightly-ok succeeded" in proc.stdout
    assert ci_plane.token not in proc.stdout + proc.stderr  # the token is never echoed


def test_a_failing_nightly_job_exits_8_with_the_log_tail(ci_plane: Any, tmp_path: Path) -> None:
    proc = nightly(ci_plane, tmp_path, JOB_NAME="nightly-fail",
                   ENTRYPOINT="python -c \"print('diverged'); raise SystemExit(3)\"")  # fmt: skip
    assert proc.returncode == 8, proc.stderr[-3000:]
    assert "diverged" in proc.stdout + proc.stderr and "failed" in proc.stderr


def test_a_missing_queue_exits_3_before_anything_runs(ci_plane: Any, tmp_path: Path) -> None:
    proc = nightly(ci_plane, tmp_path, JOB_NAME="nightly-noq", LOCAL_QUEUE="no-such-queue")
    assert proc.returncode == 3
    assert "batch-jobs-queue" in proc.stderr  # the error lists the queues that exist
    assert "troubleshooting.md#queuenotfounderror" in proc.stderr


def test_the_pipeline_files_run_the_script_and_gate_on_its_exit_codes() -> None:
    github = yaml.safe_load((CI / "github-actions.yml").read_text())
    steps = github["jobs"]["train"]["steps"]
    assert any(s.get("run") == "bash examples/ci/nightly.sh" for s in steps)
    assert "schedule" in github[True] or "schedule" in github.get("on", {})  # YAML 1.1 reads `on` as True
    gitlab = yaml.safe_load((CI / "gitlab-ci.yml").read_text())
    job = gitlab["nightly-training"]
    assert "bash examples/ci/nightly.sh" in job["script"] and job["allow_failure"]["exit_codes"] == [4]
