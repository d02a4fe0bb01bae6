"""The demo runs: ``examples/quickstart.py`` (what ``scripts/demo.sh`` runs), in a fresh interpreter with
its own local control plane and Ray head. The quickstart notebook runs in a real Jupyter kernel in
tests/sdk/e2e/notebook/test_quickstart_notebook_kernel.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]

pytestmark = pytest.mark.ray


def test_demo_script_runs_the_quickstart() -> None:
    text = (ROOT / "scripts" / "demo.sh").read_text()
    assert "examples/quickstart.py" in text and "render_seeds" not in text


def test_quickstart_runs_end_to_end() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py")],
        capture_output=True,
        text=True,
        timeout=600,
        env={"COLUMNS": "120", **_env()},
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    assert "ready (2/2 workers ready)" in out
    assert "results [14, 77, 194] on a cluster with 2 GPUs" in out
    assert "GPUs seen by the job: 2.0" in out and "SUCCEEDED" in out
    assert "clusters left: []" in out


def test_quickstart_exits_non_zero_when_its_job_fails() -> None:
    """``--entrypoint`` swaps step 6's job for one that fails: every step still runs (the cluster goes
    down), the job's status and logs are printed, and the exit status is 1 (``demo.sh`` execs it)."""
    failing = "python -c \"print('about to fail'); raise SystemExit(3)\""
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py"), "--entrypoint", failing],
        capture_output=True,
        text=True,
        timeout=600,
        env={"COLUMNS": "120", **_env()},
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1, out[-4000:]
    assert ": FAILED" in out and "about to fail" in out
    assert "The job ended FAILED, not SUCCEEDED: exit status 1" in out
    assert "clusters left: []" in out


def _env() -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("JPY_", "RAY_ADDRESS"))}
    env.pop("KUBECONFIG", None)
    return env
