"""``rayqueue job ...`` in a real subprocess, with exit codes a CI pipeline can test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

NS = "your-namespace"


def rayqueue(cp: Any, *args: str, timeout: float = 300) -> tuple[int, Any, str]:
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    args = (*args, "--kubeconfig", str(cp.kubeconfig_path))
    proc = subprocess.run(
        [sys.executable, "-m", "rayqueue_sdk.cli.main", "job", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    out = proc.stdout.strip().splitlines()
    payload = json.loads(out[-1]) if out and "--json" in args else proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, payload, proc.stderr


def test_submit_wait_logs_status_on_the_workspace(ray_plane: Any, workspace: str) -> None:
    code, out, err = rayqueue(
        ray_plane, "submit", "ci-job", "-n", NS, "--cluster", workspace,
        "--env", "ANSWER=42", "-e", "python -c 'import os; print(\"answer\", os.environ[\"ANSWER\"])'",
        "--wait", "--timeout", "300", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert out["phase"] == "succeeded"
    job_id = out["job_id"]
    assert job_id.startswith("ci-job-")
    code, out, _ = rayqueue(ray_plane, "logs", "ci-job", "-n", NS, "--cluster", workspace, "--job-id", job_id)
    assert code == 0 and "answer 42" in out
    code, out, _ = rayqueue(
        ray_plane, "status", "ci-job", "-n", NS, "--cluster", workspace, "--job-id", job_id, "--json"
    )
    assert code == 0 and out["phase"] == "succeeded" and out["job_id"] == job_id


def test_failing_job_exits_8_with_the_log_tail(ray_plane: Any, workspace: str) -> None:
    code, out, _ = rayqueue(
        ray_plane, "submit", "ci-fail", "-n", NS, "--cluster", workspace,
        "-e", "python -c 'print(\"about to fail\"); raise SystemExit(3)'", "--wait", "--json",
    )  # fmt: skip
    assert code == 8
    assert out["error"] == "JobFailedError" and "about to fail" in out["log_tail"]


def test_timeout_exits_4_and_stop_exits_0(ray_plane: Any, workspace: str) -> None:
    code, out, err = rayqueue(
        ray_plane, "submit", "ci-slow", "-n", NS, "--cluster", workspace,
        "-e", "python -c 'import time; time.sleep(300)'", "--json",
    )  # fmt: skip
    assert code == 0, err
    job_id = out["job_id"]
    base = ("-n", NS, "--cluster", workspace, "--job-id", job_id)
    code, out, _ = rayqueue(ray_plane, "wait", "ci-slow", *base, "--timeout", "1", "--json")
    assert code == 4 and out["error"] == "AdmissionTimeout"
    code, out, _ = rayqueue(ray_plane, "stop", "ci-slow", *base, "--json")
    assert code == 0 and out == {"stopped": True}
    code, out, _ = rayqueue(ray_plane, "wait", "ci-slow", *base, "--json")
    assert code == 8 and "STOPPED" in out["message"]
    code, out, _ = rayqueue(ray_plane, "delete", "ci-slow", *base, "--json")
    assert code == 0 and out == {"deleted": True}


def test_unknown_cluster_and_queue_exit_3_listing_what_exists(ray_plane: Any, workspace: str) -> None:
    code, out, _ = rayqueue(
        ray_plane, "submit", "x", "-n", NS, "--cluster", "nope", "-e", "python x.py", "--json"
    )
    assert code == 3 and out["available"] == [workspace]
    code, out, _ = rayqueue(
        ray_plane, "submit", "x", "-n", NS, "--queue", "nope", "-e", "python x.py", "--json"
    )
    assert code == 3 and out["available"] == ["batch-jobs-queue", "ds-workspace-queue"]


def test_bad_input_exits_2(ray_plane: Any) -> None:
    code, out, _ = rayqueue(
        ray_plane, "submit", "x" * 48, "-n", NS, "--queue", "q", "-e", "python x.py", "--json"
    )
    assert code == 2 and out["error"] == "ConfigError"
    code, _, err = rayqueue(ray_plane, "status", "x", "-n", NS, "--cluster", "ws")
    assert code == 2 and "job_id" in err


def test_logs_follow_streams_until_the_job_ends(ray_plane: Any, workspace: str) -> None:
    script = "import time\nfor i in range(3):\n    print('step', i, flush=True); time.sleep(0.5)"
    code, out, err = rayqueue(
        ray_plane,
        "submit",
        "ci-follow",
        "-n",
        NS,
        "--cluster",
        workspace,
        "-e",
        f'python -c "{script}"',
        "--json",
    )
    assert code == 0, err
    code, text, err = rayqueue(
        ray_plane,
        "logs",
        "ci-follow",
        "-n",
        NS,
        "--cluster",
        workspace,
        "--job-id",
        out["job_id"],
        "--follow",
    )
    assert code == 0, err
    assert [line for line in text.splitlines() if line.startswith("step")] == ["step 0", "step 1", "step 2"]
