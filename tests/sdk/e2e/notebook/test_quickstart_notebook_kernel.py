"""The quickstart notebook in a real Jupyter kernel (nbclient + ipykernel), top to bottom, and what its
outputs say: the cluster admitted and ready, a cluster that does not fit queued at position 0, the Ray
tasks' results, the job SUCCEEDED, both clusters gone at the end. Then the saved notebook and its
``jupyter nbconvert --to html`` export keep the cards as HTML."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from notebook_helpers import QUICKSTART, WIDGET_VIEW, NotebookRun, displays, kernel_env, plain, stdout


def widget_models(nb: Any) -> list[dict[str, Any]]:
    """The widget models' states as saved in the notebook's metadata (what the kernel last sent)."""
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    return [m["state"] for m in state.values()]


def test_quickstart_notebook_is_valid_and_saved_without_outputs() -> None:
    nb = nbformat.read(QUICKSTART, as_version=4)
    nbformat.validate(nb)
    assert (nb.nbformat, nb.metadata["kernelspec"]["name"]) == (4, "python3")
    assert all({"cell_type", "metadata", "source", "id"} <= set(c) for c in nb.cells)
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in code_cells)
    source = "\n\n".join(c.source for c in code_cells)
    assert "view_clusters()" in source and "workspace_cluster.details()" in source
    assert "logging.basicConfig" not in source  # the cards say what happens, without any logging setup


@pytest.mark.ray
def test_quickstart_in_a_kernel_admits_runs_the_job_and_cleans_up(quickstart_run: NotebookRun) -> None:
    at = quickstart_run.at_end_of_cell
    assert plain(displays(at["cell-02"])[0]).startswith("'https://127.0.0.1:")

    # the workspace cluster's card, as wait_ready() left it: ready, one output with the widget and HTML
    (card,) = displays(at["cell-06"])
    assert {WIDGET_VIEW, "text/html", "text/plain"} <= set(card["data"])
    assert plain(card).startswith("default/my-workspace-cluster: ready")
    assert "workers 2/2" in plain(card) and ">ready</span>" in card["data"]["text/html"]
    assert "display_id" in card.get("transient", {}) or card["output_type"] == "display_data"

    details, value = displays(at["cell-07"])
    assert "ready" in plain(details) and "shape (2 GPUs)" in plain(details)
    assert plain(value).startswith("(2, [")

    # the cluster that does not fit: queued at position 0, Kueue's reason on the card and in the error
    (big,) = displays(at["cell-18"])
    assert plain(big).startswith("default/big-experiment: queued")
    assert "position 0" in plain(big) and "insufficient" in plain(big)
    assert "big-experiment: gave up waiting" in stdout(at["cell-18"])
    assert "position 0 in queue" in stdout(at["cell-18"])

    # view_clusters() assigned and then the cell's last expression: displayed once
    (table,) = displays(at["cell-09"])
    assert "my-workspace-cluster" in plain(table) and "big-experiment" in plain(table)
    assert "queued (Pending)" in table["data"]["text/html"]

    # Ray tasks, and the job through the cluster's job client
    assert "[14, 77, 194] 2.0" in stdout(at["cell-11"])
    job_out = stdout(at["cell-13"])
    assert "SUCCEEDED" in job_out and "GPUs seen by the job: 2.0" in job_out

    # both clusters gone; the saved notebook keeps the last state of every display
    assert plain(displays(at["cell-15"])[-1]) == "[]"
    saved = quickstart_run.notebook
    assert "no Ray clusters" in plain(displays(quickstart_run.cell("cell-09").outputs)[0])
    assert plain(displays(quickstart_run.cell("cell-06").outputs)[0]).startswith(
        "default/my-workspace-cluster: deleted"
    )
    assert not [o for c in saved.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]


@pytest.mark.ray
def test_quickstart_user_sees_which_buttons_it_may_use(quickstart_run: NotebookRun) -> None:
    """The quickstart's own user may delete its RayClusters but not patch Kueue Workloads: the server
    said so (SelfSubjectAccessReview), and the buttons show it."""
    buttons = {m.get("description"): m for m in widget_models(quickstart_run.notebook)}
    for name in ("Deactivate", "Resume"):
        assert buttons[name]["disabled"] is True
        assert "may not patch workloads.kueue.x-k8s.io in namespace 'default'" in buttons[name]["tooltip"]
    # Down is allowed: its tooltip is the action's own (disabled at the end only because no cluster is left)
    assert buttons["Down"]["tooltip"].startswith("Delete the picked RayCluster")


@pytest.mark.ray
def test_saved_quickstart_and_its_html_export_keep_the_cards(
    quickstart_run: NotebookRun, artefacts: Path
) -> None:
    assert quickstart_run.path is not None
    saved = nbformat.read(quickstart_run.path, as_version=4)
    widget_outputs = [
        o for c in saved.cells for o in c.get("outputs", []) if WIDGET_VIEW in o.get("data", {})
    ]
    assert len(widget_outputs) >= 4  # workspace card, details, big-experiment card, the browser
    assert all({"text/html", "text/plain"} <= set(o["data"]) for o in widget_outputs)
    details_html = displays(next(c for c in saved.cells if c.get("id") == "cell-07").outputs)[0]["data"]
    assert "my-workspace-cluster" in details_html["text/html"]

    # JupyterLab saves no widget state unless asked: nbconvert then renders each output's text/html
    bare = artefacts / "0_quickstart.no-widget-state.ipynb"
    saved.metadata.pop("widgets", None)
    nbformat.write(saved, bare)
    for path in (quickstart_run.path, bare):
        done = subprocess.run(
            [sys.executable, "-m", "nbconvert", "--to", "html", "--output-dir", str(artefacts), str(path)],
            capture_output=True,
            text=True,
            timeout=300,
            env=kernel_env(),
        )
        assert done.returncode == 0, done.stderr[-3000:]
    html = (artefacts / "0_quickstart.no-widget-state.html").read_text()
    assert '<div class="rayqueue-details">' in html and "my-workspace-cluster" in html
    assert "no Ray clusters" not in html or "Ray clusters in default" in html
    assert "Ray clusters in default" in html and "big-experiment: queued" not in html
    with_state = (artefacts / "0_quickstart.executed.html").read_text()
    assert "application/vnd.jupyter.widget-state+json" in with_state and "my-workspace-cluster" in with_state
    assert json.dumps("rayqueue-details")[1:-1] in with_state
