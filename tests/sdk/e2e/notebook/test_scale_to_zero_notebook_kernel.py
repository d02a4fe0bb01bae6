"""The scale-to-zero notebook (seed 000 in the SDK's words) in a real Jupyter kernel (nbclient +
ipykernel), top to bottom: it starts its own local control plane (Kueue with Workload ``/scale``, real Ray
heads, KEDA, a real Prometheus), and its outputs say that the first cluster was scaled to zero with its
quota released, that the second was admitted and became ready, and that ``resume()`` queued the first
again."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from notebook_helpers import ROOT, NotebookRun, displays, execute_notebook, plain, stdout

NOTEBOOK = ROOT / "demo-notebooks" / "4_scale_to_zero.ipynb"


def test_scale_to_zero_notebook_is_valid_and_saved_without_outputs() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    assert (nb.nbformat, nb.metadata["kernelspec"]["name"]) == (4, "python3")
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in code_cells)
    source = "\n\n".join(c.source for c in code_cells)
    assert ".scale_to_zero(" in source and ".resume()" in source and "cp.stop()" in source


@pytest.fixture(scope="module")
def scale_to_zero_run(artefacts: Path) -> NotebookRun:
    """The notebook, executed once for the module in a real kernel."""
    return execute_notebook(NOTEBOOK, artefacts / "4_scale_to_zero.executed.ipynb")


@pytest.mark.ray
@pytest.mark.prometheus
@pytest.mark.timeout(900)  # two Ray heads one after the other, in a kernel, on a shared machine
def test_scale_to_zero_notebook_gives_the_quota_to_the_second_cluster(scale_to_zero_run: NotebookRun) -> None:
    at = scale_to_zero_run.at_end_of_cell
    assert plain(displays(at["cell-02"])[0]).startswith("'http://127.0.0.1:")  # Prometheus

    # the first is ready; the second waits for the quota
    assert plain(displays(at["cell-06"])[0]).startswith("demo/first-raycluster: ready")
    waiting = stdout(at["cell-07"])
    assert "second-raycluster: gave up waiting" in waiting and "position 0" in waiting

    # the policy: KEDA mode, its objects, and the line in the status
    policy = stdout(at["cell-09"])
    assert "keda mode" in policy and "ScaledObject/first-raycluster-idle" in policy
    status = plain(displays(at["cell-09"])[-1])
    assert status.startswith("demo/first-raycluster: ready") and "scale to zero: keda mode: idle" in status

    # scaled to zero, with the quota released and the way back named
    gone = stdout(at["cell-11"])
    assert "scaled to zero at" in gone and "quota released" in gone and "cluster.resume()" in gone

    # the second cluster admitted and ready, with no manual step
    (line,) = displays(at["cell-13"])  # wait_ready()'s progress line, ended on the ready state
    assert plain(line).startswith("demo/second-raycluster: ready")

    # the first cluster's address: a clear error
    assert "scaled to zero" in stdout(at["cell-15"]) and "call cluster.resume()" in stdout(at["cell-15"])

    # resume: queued again, behind the second
    assert stdout(at["cell-17"]).startswith("demo/first-raycluster: queued")

    saved = scale_to_zero_run.notebook
    assert not [o for c in saved.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
