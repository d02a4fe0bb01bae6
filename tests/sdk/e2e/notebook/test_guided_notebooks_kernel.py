"""The guided notebooks (demo-notebooks/1, 2, 3, 5, 7) top to bottom in a real Jupyter kernel (nbclient +
ipykernel), each against the local control plane it starts, and what their outputs say: the workspace
cluster admitted and its jobs SUCCEEDED (1), the job-owned job SUCCEEDED, its cluster gone and its logs read
after (2), team B admitted, then preempted with Kueue's reason, then back (3), the admin's queues applied and
a cluster admitted through the right ClusterQueue (5), a checkpointing Ray Train job preempted and resumed
from its last checkpoint in S3, ``status()`` saying from where (7). Every notebook is saved without outputs.

Notebook 7 is the suite's one run of seed 004's checkpoint story (it was also a pure-Python test, the same
three job-owned clusters again for four minutes; its checks are here now).

Notebooks 3 and 5 run with simulated Ray heads (``ray_enabled=False`` in the notebook); 1, 2 and 7 start
real local Ray heads (marked ``ray``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from notebook_helpers import ROOT, WIDGET_VIEW, NotebookRun, displays, errors, execute_notebook, plain, stdout

pytestmark = pytest.mark.slow  # each runs a kernel and a control plane

NOTEBOOKS = ROOT / "demo-notebooks"
GUIDED = [
    "1_workspace_and_jobs",
    "2_job_owned",
    "3_two_teams_preemption",
    "5_admin_setup",
    "7_checkpoints_and_preemption",
]


def run(name: str, artefacts: Path) -> NotebookRun:
    done = execute_notebook(NOTEBOOKS / f"{name}.ipynb", artefacts / f"{name}.executed.ipynb")
    for cell_id, outputs in done.at_end_of_cell.items():
        assert not errors(outputs), (cell_id, errors(outputs))
    return done


def lines(outputs: list[dict[str, Any]]) -> list[str]:
    """What a cell printed on stdout (the control plane's own log lines go to stderr)."""
    return "".join(o.get("text", "") for o in outputs if o.get("name") == "stdout").splitlines()


@pytest.mark.parametrize("name", GUIDED)
def test_saved_without_outputs_and_without_logging_setup(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in code)
    assert all(c.get("id") for c in nb.cells)
    source = "\n".join(c.source for c in code)
    assert "logging.basicConfig" not in source and "cp.stop()" in code[-1].source  # cleaned up at the end
    prose = " ".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert len(prose.split()) > 150  # explained for a data scientist, not a bare script


def test_admin_setup_applies_the_queues_and_a_cluster_is_admitted_through_them(artefacts: Path) -> None:
    done = run("5_admin_setup", artefacts)
    at = done.at_end_of_cell
    assert "cohortName: all-gpus" in stdout(at["cell-04"]) and "nominalQuota: 8" in stdout(at["cell-04"])
    assert "borrowingLimit" in stdout(at["cell-06"]) and "configerror" in stdout(at["cell-06"])
    applied = stdout(at["cell-08"])
    for obj in ("Cohort/all-gpus", "ClusterQueue/cq-production", "LocalQueue/ds-workspace-queue"):
        assert obj in applied
    assert plain(displays(at["cell-10"])[-1]) == (
        "[('batch-jobs-queue', 'cq-production'),\n ('ds-workspace-queue', 'cq-development')]"
    )
    assert lines(at["cell-11"]) == ["ready through cq-development with dev-priority"]
    assert lines(at["cell-13"]) == ["['batch-jobs-queue', 'ds-workspace-queue']"]
    assert lines(at["cell-15"]) == ["deleted: True"]


def test_two_teams_admitted_then_preempted_with_kueues_reason_then_back(artefacts: Path) -> None:
    done = run("3_two_teams_preemption", artefacts)
    at = done.at_end_of_cell
    assert lines(at["cell-06"]) == ["team B: ready through team-b-cq"]
    assert lines(at["cell-08"]) == ["team A: ready through team-a-cq"]
    phase, reason, position = lines(at["cell-10"])[0].removeprefix("team B: ").split(" | ")
    assert phase in ("preempted", "queued") and position == "0"
    assert reason in ("InCohortReclamation", "InCohortReclaimWhileBorrowing")
    assert lines(at["cell-10"])[1].startswith("Preempted to accommodate a workload")
    # the queue view, while team B waits: one display (widget, text, HTML), team B's pending cluster in it
    (queues,) = displays(at["cell-10b"])
    assert {"text/plain", "text/html"} <= set(queues["data"])
    assert "raycluster-dev" in plain(queues) and "team-b" in plain(queues), plain(queues)
    assert lines(at["cell-12"]) == ["team B: ready again, through team-b-cq"]
    # The wait in the last cell: one progress line, ending ready.
    (line,) = displays(at["cell-12"])
    assert plain(line).startswith("team-b/raycluster-dev: ready")
    # team B's card (shown by apply() in cell 6) went through the preemption and ended ready.
    (card,) = displays(done.cell("cell-06").outputs)
    assert WIDGET_VIEW in card["data"] and "text/html" in card["data"]


@pytest.mark.ray
def test_job_owned_job_succeeds_its_cluster_goes_and_its_logs_stay(artefacts: Path) -> None:
    done = run("2_job_owned", artefacts)
    at = done.at_end_of_cell
    assert plain(displays(at["cell-07"])[0]) == "'final-training-run'"
    # the job view, as wait() left it: succeeded, with the job's last lines and the card's HTML
    (card,) = displays(at["cell-10"])
    assert {WIDGET_VIEW, "text/plain", "text/html"} <= set(card["data"])
    assert plain(card).startswith("your-namespace/final-training-run: succeeded")
    # (Ray may close a followed log stream before the job's very last lines: check an earlier one)
    assert "stage nightly" in plain(card) and "rayqueue-job" in card["data"]["text/html"]
    # its Stop button, as the kernel last set it: disabled once the job is over
    widgets = done.notebook.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    (stop,) = [m["state"] for m in widgets.values() if m["state"].get("description") == "Stop"]
    assert stop["disabled"] is True and stop["tooltip"] == "the job is succeeded"
    assert lines(at["cell-10"])[-1].startswith("job: succeeded on cluster final-training-run-")
    assert lines(at["cell-12"]) == ["clusters left: []"]
    assert "stage nightly" in stdout(at["cell-13"])  # read from the submitter pod, the cluster gone
    assert lines(at["cell-15"]) == ["deleted: True"]


@pytest.mark.ray
def test_workspace_cluster_interactive_work_and_jobs_on_it(artefacts: Path) -> None:
    done = run("1_workspace_and_jobs", artefacts)
    at = done.at_end_of_cell
    assert lines(at["cell-05"])[-1] == "ready through cq-development"
    (card,) = displays(at["cell-05"])  # apply() and wait_ready() in one cell: the card is the one output
    assert plain(card).startswith("your-namespace/my-workspace-cluster: ready")
    assert lines(at["cell-07"]) == ["results [14, 77]"]
    assert plain(displays(at["cell-09"])[-1]).startswith("'quick-dev-test-")
    job = lines(at["cell-10"])
    assert job[0] == "job: succeeded" and "sample accuracy 0.5" in job
    printed = "\n".join(lines(at["cell-12"]))
    assert "job client: SUCCEEDED" in printed and "hello from the job client" in printed
    assert lines(at["cell-14"]) == ["deleted: True"]


@pytest.mark.ray
def test_checkpoints_survive_preemption_and_the_status_says_where_it_resumed(artefacts: Path) -> None:
    done = run("7_checkpoints_and_preemption", artefacts)
    at = done.at_end_of_cell
    first = lines(at["cell-05"])
    assert "NO CHECKPOINT FOUND" in first[0] and first[-1] == "checkpoints in S3: True"
    assert first[-2] == "resumed from: None"  # the first run started fresh
    phase, _reason = lines(at["cell-07"])[0].split(" | ")
    assert (
        phase in ("preempted", "requeued", "queued") and lines(at["cell-07"])[-1] == "production: succeeded"
    )
    finished, resumed, resuming, complete, *explanation = lines(at["cell-09"])
    assert finished == "succeeded" and complete == "training complete: True"
    assert resumed.startswith("resumed from the Ray Train run at ray-checkpoints/ray-checkpoints/notebook/")
    assert "(epoch " in resumed and "(epoch 0)" not in resumed  # from a checkpoint the first run wrote
    assert resuming.startswith("RESUMING FROM CHECKPOINT - Starting at epoch ")
    assert resumed in "\n".join(explanation)  # status() says it in its own words too
    assert lines(at["cell-11"]) == ["deleted: True"]
