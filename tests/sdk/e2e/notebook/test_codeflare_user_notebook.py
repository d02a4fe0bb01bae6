"""demo-notebooks/6_codeflare_user.ipynb, written as a CodeFlare user writes a notebook (set_api_client with a
plain kubernetes ApiClient, write_to_file=False, RayJobClient with a bearer token, a RayJob submitted to a
cluster that is still starting, a job-owned RayJob given a ClusterConfiguration, resubmit), top to bottom
in a real Jupyter kernel against the local control plane it starts, with real Ray heads.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from notebook_helpers import ROOT, displays, errors, execute_notebook, plain, stdout

pytestmark = pytest.mark.ray  # the notebook starts real Ray heads (hence slow)

NOTEBOOK = ROOT / "demo-notebooks" / "6_codeflare_user.ipynb"


def test_saved_without_outputs() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in code)
    assert "codeflare_sdk" not in "\n".join(c.source for c in code)
    assert "cp.stop()" in code[-1].source


def test_codeflare_user_notebook_runs_every_job_to_success(artefacts: Path) -> None:
    done = execute_notebook(NOTEBOOK, artefacts / "6_codeflare_user.executed.ipynb")
    at = done.at_end_of_cell
    for cell_id, outputs in at.items():
        assert not errors(outputs), (cell_id, errors(outputs))
    ready = stdout(at["cell-11"]) + "".join(plain(d) for d in displays(at["cell-11"]))
    assert "ready" in ready.lower(), ready
    assert "cpus:" in stdout(at["cell-13"])  # the job's own output, streamed through RayJobClient
    assert stdout(at["cell-18"]).splitlines() == [
        "quick-check (existing cluster): SUCCEEDED",
        "RayJobClient job: SUCCEEDED",
        "cf-user-nightly (own cluster): SUCCEEDED",
        "cf-user-nightly (resubmitted): SUCCEEDED",
    ]
