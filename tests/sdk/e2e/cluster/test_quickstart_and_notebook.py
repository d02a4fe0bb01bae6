"""The demo runs: ``examples/quickstart.py`` (what ``scripts/demo.sh`` runs) and the quickstart notebook's
code cells, each in a fresh interpreter with its own local control plane and Ray head."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
NOTEBOOK = ROOT / "demo-notebooks" / "0_quickstart.ipynb"

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


def test_notebook_is_valid_and_its_cells_run() -> None:
    nb = json.loads(NOTEBOOK.read_text())
    assert (nb["nbformat"], nb["metadata"]["kernelspec"]["name"]) == (4, "python3")
    assert all({"cell_type", "metadata", "source", "id"} <= set(c) for c in nb["cells"])
    code_cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code_cells)
    source = "\n\n".join("".join(c["source"]) for c in code_cells)
    assert "view_clusters()" in source and "workspace_cluster.details()" in source
    script = source + "\nprint('NOTEBOOK DONE', results, [s.name for s in browser.statuses])\n"
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=NOTEBOOK.parent,
        capture_output=True,
        text=True,
        timeout=600,
        env=_env(),
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert "NOTEBOOK DONE [14, 77, 194] []" in done.stdout


def _env() -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("JPY_", "RAY_ADDRESS"))}
    env.pop("KUBECONFIG", None)
    return env
