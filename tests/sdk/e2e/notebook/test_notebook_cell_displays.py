"""What a notebook cell shows, in a real Jupyter kernel (nbclient + ipykernel), read from the saved outputs:

- ``Cluster(...)`` shows its box with Apply, Down and "Wait for the cluster" before any credentials or
  server exist (so showing it reads nothing from the API), and the buttons act when clicked;
- ``status()`` of a cluster that does not exist is a status that says so, with the fix;
- a bare ``apply()`` is the cluster's card, not the stored object; ``apply(); wait_ready(); status()`` in
  one cell is one box, and so is ``wait_ready()`` alone;
- ``RayJob.status()`` is a short card, not a dataclass repr;
- nothing anywhere reads "(Unknown)".

The notebook is built here and runs against a local control plane without Ray heads (its clusters are
ready once admitted), started inside the kernel after the first cells.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from notebook_helpers import WIDGET_VIEW, NotebookRun, displays, errors, execute_notebook, plain, stdout

pytestmark = pytest.mark.slow  # a kernel and a control plane

OFFLINE = """\
import os
os.environ["KUBECONFIG"] = "/nonexistent/kubeconfig"  # no credentials: any API call would raise
from rayqueue_sdk import Cluster, ClusterConfiguration

def small(name, queue="team"):
    return ClusterConfiguration(name=name, namespace="default", local_queue=queue, num_workers=1,
                                worker_cpu_requests=1, worker_memory_requests=1)
"""

SETUP = """\
from rayqueue_local import LocalControlPlane
from rayqueue_sdk import ManagedClusterConfig, RayJob, TokenAuthentication
from rayqueue_sdk.manifests import kueue as k

cp = LocalControlPlane(crd_dir={crds!r}, ray_enabled=False, keda_enabled=False, prometheus_enabled=False)
cp.start()
cp.apply([
    k.resource_flavor("default-flavor"),
    k.cluster_queue("cq-team", resource_groups=[k.resource_group(
        k.flavor_quotas("default-flavor", {{"cpu": 20, "memory": "64Gi"}}))]),
    k.local_queue("team", "default", "cq-team"),
    k.cluster_queue("cq-parked", resource_groups=[k.resource_group(
        k.flavor_quotas("default-flavor", {{"cpu": 0, "memory": 0}}))]),
    k.local_queue("parked", "default", "cq-parked"),
])
auth = TokenAuthentication(token=cp.add_user("data-scientist", ["default"]), server=cp.server,
                           ca_cert_path=str(cp.ca_cert_path))
auth.login()
"""

CELLS = {
    "offline": OFFLINE,
    "box": 'ws = Cluster(small("ws"))\nws',
    "built": 'built = Cluster(small("built"))',
    "setup": SETUP,
    "missing": "ws.status()",
    "missing-raises": (
        "from rayqueue_sdk import ClusterNotFoundError\n"
        "try:\n"
        "    ws.status(missing_ok=False)\n"
        "except ClusterNotFoundError as err:\n"
        '    print("raised", err.available)'
    ),
    "apply": "ws.apply()",
    "wait": "ws.wait_ready(timeout=120, dashboard_check=False)",
    "one-cell": (
        'ws2 = Cluster(small("ws2"))\nws2.apply()\nws2.wait_ready(timeout=120, dashboard_check=False)\n'
        "ws2.status()"
    ),
    "click": (
        "import functools\n"
        "# no Ray heads here, so no dashboard answers: the box's wait checks the cluster only\n"
        "built.wait_ready = functools.partial(built.wait_ready, timeout=120, dashboard_check=False)\n"
        "box = built._card\n"
        "box.wait_check.value = True\n"
        "box.apply_button.click()\n"
        'print(box.message.value, "|", box.bundle()["text/plain"].splitlines()[0])\n'
        "box.down_button.click()\n"
        "box.confirm_button.click()\n"
        'print(box.message.value, "|", box.bundle()["text/plain"].splitlines()[0])'
    ),
    "job": (
        'job = RayJob(job_name="nightly", namespace="default", local_queue="parked",\n'
        "             cluster_config=ManagedClusterConfig(num_workers=1, worker_cpu_requests=1,\n"
        "                                                 worker_memory_requests=1),\n"
        "             entrypoint=\"python -c 'print(1)'\")\n"
        "job.submit()\n"
        "job.status()"
    ),
    "cleanup": "job.delete()\nws.down(), ws2.down()\nauth.logout()\ncp.stop()",
}


@pytest.fixture(scope="module")
def run(crd_dir: Path, artefacts: Path) -> NotebookRun:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for cell_id, source in CELLS.items():
        cell = nbformat.v4.new_code_cell(source.format(crds=str(crd_dir)) if cell_id == "setup" else source)
        cell["id"] = cell_id
        nb.cells.append(cell)
    return execute_notebook(nb, artefacts / "cell_displays.executed.ipynb", allow_errors=True)


def one_box(run: NotebookRun, cell_id: str) -> dict[str, Any]:
    """The cell's one display, with its text/plain and text/html (the cell ran without an error)."""
    outputs = run.at_end_of_cell[cell_id]
    assert not errors(outputs), (cell_id, errors(outputs))
    shown = displays(outputs)
    assert len(shown) == 1, (cell_id, [plain(o) for o in shown])
    assert {"text/plain", "text/html"} <= set(shown[0]["data"]), cell_id
    return shown[0]


def fits(text: str) -> None:
    assert all(len(line) <= 80 for line in text.splitlines()), text


def test_a_cluster_shows_its_buttons_with_no_server_and_no_credentials(run: NotebookRun) -> None:
    assert not errors(run.at_end_of_cell["offline"])
    box = one_box(run, "box")
    assert WIDGET_VIEW in box["data"]
    text = plain(box)
    assert text.startswith("default/ws: not read from the server yet"), text
    assert "queue team" in text and "cluster.apply()" in text
    fits(text)
    # built (not the cell's value) in a notebook: shown too, as the peer's is
    assert WIDGET_VIEW in one_box(run, "built")["data"]
    # the buttons are in the saved widget state
    state = run.notebook.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    models = [m["state"] for m in state.values()]
    buttons = {m.get("description") for m in models if m.get("_model_name") == "ButtonModel"}
    assert {"Apply", "Down", "Confirm down", "Cancel"} <= buttons, buttons
    assert any(
        m.get("_model_name") == "CheckboxModel" and m.get("description") == "Wait for the cluster"
        for m in models
    )


def test_status_of_a_cluster_that_does_not_exist_says_so_with_the_fix(run: NotebookRun) -> None:
    box = one_box(run, "missing")
    text = plain(box)
    assert text.startswith("default/ws: not found"), text
    assert "call cluster.apply() to create it" in text and "call cluster.apply()" in box["data"]["text/html"]
    assert stdout(run.at_end_of_cell["missing-raises"]).strip() == "raised []"  # the typed error on request


def test_a_bare_apply_is_the_card_not_the_stored_object(run: NotebookRun) -> None:
    box = one_box(run, "apply")
    text = plain(box)
    assert text.startswith("default/ws: "), text
    assert "apiVersion" not in text and "metadata" not in text and len(text.splitlines()) <= 8, text
    assert "rayqueue-card" in box["data"]["text/html"] and WIDGET_VIEW in box["data"]


def test_apply_wait_ready_and_status_in_one_cell_are_one_box(run: NotebookRun) -> None:
    box = one_box(run, "one-cell")
    assert plain(box).startswith("default/ws2: ready"), plain(box)
    assert WIDGET_VIEW in box["data"]  # the cluster's box, not a second status card
    fits(plain(box))


def test_wait_ready_alone_is_one_box_that_ends_as_the_card(run: NotebookRun) -> None:
    box = one_box(run, "wait")
    text = plain(box)
    assert text.startswith("default/ws: ready") and "waited" in text, text
    assert "rayqueue-card" in box["data"]["text/html"]


def test_the_buttons_apply_wait_and_take_down_when_clicked(run: NotebookRun) -> None:
    assert not errors(run.at_end_of_cell["click"]), errors(run.at_end_of_cell["click"])
    applied, downed = stdout(run.at_end_of_cell["click"]).strip().splitlines()
    assert applied == "apply: default/built ready | default/built: ready", applied
    assert downed == "down: default/built deleted | default/built: deleted", downed
    # a click updates the box in place (up in the "built" cell) and adds no output of its own
    assert displays(run.at_end_of_cell["click"]) == []


def test_a_jobs_status_is_a_short_card(run: NotebookRun) -> None:
    box = one_box(run, "job")
    text = plain(box)
    assert text.startswith("default/nightly: queued"), text
    assert "RayJobStatus(" not in text and "Verdict" not in text and "error_kind" not in text
    assert "rayqueue-job" in box["data"]["text/html"]
    fits(text)


def test_no_output_reads_unknown(run: NotebookRun) -> None:
    assert not errors(run.at_end_of_cell["cleanup"]), errors(run.at_end_of_cell["cleanup"])
    saved = json.dumps([c.get("outputs", []) for c in run.notebook.cells])
    assert "(Unknown)" not in saved
    assert "(Unknown)" not in json.dumps(run.at_end_of_cell)
