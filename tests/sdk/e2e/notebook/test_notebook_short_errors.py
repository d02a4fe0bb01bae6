"""Expected errors in a real Jupyter kernel (nbclient + ipykernel): a short message with the fix instead
of a traceback, while the exception object keeps everything; and the one progress line of ``wait_ready()``.

IPython renders an exception through its ``_render_traceback_`` when it has one; the SDK's expected errors
(queue not found, admission timeout, preemption, a failed job, ...) do, unexpected ones (an ``ApiError``
500) do not and keep the full traceback. The notebook is built here and runs against a local control plane
without Ray heads (the clusters wait in a zero-quota queue).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from notebook_helpers import NotebookRun, displays, errors, execute_notebook, plain, stdout

pytestmark = pytest.mark.slow  # a kernel and a control plane (~15 s)

ANSI = re.compile(r"\x1b\[[0-9;]*m")

SETUP = """\
from rayqueue_local import LocalControlPlane
from rayqueue_sdk import (ApiError, Cluster, ClusterConfiguration, JobFailedError, PreemptedError,
                          QueueNotFoundError, TokenAuthentication)
from rayqueue_sdk.manifests import kueue as k

cp = LocalControlPlane(crd_dir={crds!r}, ray_enabled=False, keda_enabled=False, prometheus_enabled=False)
cp.start()
cp.apply([
    k.resource_flavor("default-flavor"),
    k.cluster_queue("cq-parked", resource_groups=[k.resource_group(
        k.flavor_quotas("default-flavor", {{"cpu": 0, "memory": 0}}))]),
    k.local_queue("parked", "default", "cq-parked"),
])
auth = TokenAuthentication(token=cp.add_user("data-scientist", ["default"]), server=cp.server,
                           ca_cert_path=str(cp.ca_cert_path))
auth.login()
"""

CELLS = {
    "setup": SETUP,
    "no-queue": 'Cluster(ClusterConfiguration(name="ws", local_queue="gpu-queue")).apply()',
    "apply": (
        'parked = Cluster(ClusterConfiguration(name="parked-ws", local_queue="parked"))\n_ = parked.apply()'
    ),
    "wait": "parked.wait_ready(queue_timeout=2, timeout=120, dashboard_check=False)",
    "job-failed": (
        'log = "\\n".join(f"step {i}" for i in range(200)) + "\\nValueError: boom"\n'
        'raise JobFailedError("raysubmit_1", "FAILED", "AppFailed", log)'
    ),
    "preempted": (
        'raise PreemptedError("raycluster-dev", "InCohortReclamation", '
        '"Preempted to accommodate a workload due to reclamation within the cohort")'
    ),
    "caught": (
        "try:\n"
        '    Cluster(ClusterConfiguration(name="ws", local_queue="gpu-queue")).apply()\n'
        "except QueueNotFoundError as err:\n"
        "    caught = err\n"
        'print(caught.available, caught.__traceback__ is not None, "troubleshooting.md" in str(caught))'
    ),
    "unexpected": 'raise ApiError(500, "InternalError", "etcd is down")',
    "cleanup": "parked.down()\nauth.logout()\ncp.stop()",
}


@pytest.fixture(scope="module")
def run(crd_dir: Path, artefacts: Path) -> NotebookRun:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for cell_id, source in CELLS.items():
        cell = nbformat.v4.new_code_cell(source.format(crds=str(crd_dir)) if cell_id == "setup" else source)
        cell["id"] = cell_id
        nb.cells.append(cell)
    return execute_notebook(nb, artefacts / "short_errors.executed.ipynb", allow_errors=True)


def shown(run: NotebookRun, cell_id: str) -> tuple[str, list[str]]:
    """The error's class and the lines the notebook shows for it (colours removed)."""
    (error,) = errors(run.at_end_of_cell[cell_id])
    return error["ename"], [ANSI.sub("", line) for line in error["traceback"]]


def short(lines: list[str]) -> None:
    text = "\n".join(lines)
    assert "Traceback (most recent call last)" not in text and "Cell In[" not in text, text
    assert "File " not in text and "site-packages" not in text, text


def test_expected_errors_are_a_short_message_with_the_fix(run: NotebookRun) -> None:
    assert not errors(run.at_end_of_cell["setup"]) and not errors(run.at_end_of_cell["apply"])

    name, lines = shown(run, "no-queue")
    short(lines)
    assert name == "QueueNotFoundError" and len(lines) == 3
    assert lines[0].startswith("QueueNotFoundError: 404 NotFound: LocalQueue 'gpu-queue' does not exist")
    assert "available: parked" in lines[0]
    assert lines[1].startswith("Fix: set local_queue= to one of the LocalQueues listed")
    assert lines[2].startswith("More: docs/troubleshooting.md#queuenotfounderror")

    name, lines = shown(run, "wait")
    short(lines)
    assert name == "AdmissionTimeout" and "parked-ws: gave up waiting for admission after 2s" in lines[0]
    assert any(line.startswith("Fix: wait longer") for line in lines)

    name, lines = shown(run, "preempted")
    short(lines)
    assert name == "PreemptedError" and "InCohortReclamation" in lines[0]
    assert any("requeues yours" in line for line in lines)

    # A failed job: its last log lines, not 200 of them, and the fix.
    name, lines = shown(run, "job-failed")
    short(lines)
    assert name == "JobFailedError" and len(lines) <= 17
    assert lines[0].startswith("JobFailedError: job raysubmit_1 ended FAILED (AppFailed)")
    assert "ValueError: boom" in lines and any("lines left out" in line for line in lines)
    assert any(line.startswith("Fix: read the log lines above") for line in lines)


def test_the_exception_object_keeps_everything_and_unexpected_errors_keep_the_traceback(
    run: NotebookRun,
) -> None:
    assert stdout(run.at_end_of_cell["caught"]).strip() == "['parked'] True True"
    name, lines = shown(run, "unexpected")
    assert name == "ApiError" and any("Cell In[" in line or "Traceback" in line for line in lines)
    assert not errors(run.at_end_of_cell["cleanup"])


def test_wait_ready_shows_one_progress_line_that_ends_on_the_error(run: NotebookRun) -> None:
    outputs = run.at_end_of_cell["wait"]
    (line,) = displays(outputs)
    assert {"text/plain", "text/html"} <= set(line["data"])
    text = plain(line)
    assert text.startswith("default/parked-ws: failed: parked-ws: gave up waiting for admission"), text
    assert "rayqueue-progress" in line["data"]["text/html"]
    # No logging box: nothing on stderr.
    assert not [o for o in outputs if o.get("output_type") == "stream" and o.get("name") == "stderr"]
    # apply() showed the card in its own cell, once.
    (card,) = displays(run.at_end_of_cell["apply"])
    assert plain(card).startswith("default/parked-ws: queued")
