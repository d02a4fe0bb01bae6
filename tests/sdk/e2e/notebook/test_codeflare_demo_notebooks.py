"""CodeFlare's own demo notebooks (codeflare-sdk 0.40.1's wheel), run in a real Jupyter kernel against
the local control plane with real Ray heads, with only ``codeflare_sdk`` -> ``rayqueue_sdk`` changed plus
what this machine forces (listed, with reasons, in ``codeflare_demos.FORCED_EDITS``).

One control plane for the module, set up as an admin would for the peer's notebooks: a namespace, a
ClusterQueue, and a LocalQueue named ``default`` (annotated ``kueue.x-k8s.io/default-queue: "true"``
too, the peer's way of marking it), so the notebooks that leave ``local_queue`` out land in it. The
notebooks log in as a user limited to that namespace: the auth cells with its token, the plane's server
and CA; the kernel's ``KUBECONFIG`` is that user's context (what ``oc login`` writes). Each test asserts
what its notebook is for (a cluster ready, a job SUCCEEDED, a remote task's result, a widget shown),
from the cells' outputs and the plane's objects.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from codeflare_demos import STAND_IN_OUTPUT, Plane, prepare
from nbclient.exceptions import CellExecutionError
from notebook_helpers import WIDGET_VIEW, NotebookRun, displays, execute_notebook, plain, stdout

from rayqueue_local.apiserver.kubeconfig import merge_context
from rayqueue_local.controlplane import LocalControlPlane

pytestmark = pytest.mark.ray  # real Ray heads (hence slow)

NAMESPACE = "cf-demos"
KUEUE = "kueue.x-k8s.io/v1beta2"


def admin_setup(namespace: str) -> list[dict[str, Any]]:
    """What an admin sets up for a team: a flavor, a ClusterQueue, the namespace's default LocalQueue."""
    quotas = {"cpu": 32, "memory": "256Gi", "nvidia.com/gpu": 0}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        {"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}, "spec": {}},
        {
            "apiVersion": KUEUE,
            "kind": "ClusterQueue",
            "metadata": {"name": "cq-demos"},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": list(quotas),
                        "flavors": [
                            {
                                "name": "default-flavor",
                                "resources": [{"name": k, "nominalQuota": v} for k, v in quotas.items()],
                            }
                        ],
                    }
                ],
            },
        },
        {
            "apiVersion": KUEUE,
            "kind": "LocalQueue",
            "metadata": {
                "name": "default",
                "namespace": namespace,
                "annotations": {"kueue.x-k8s.io/default-queue": "true"},
            },
            "spec": {"clusterQueue": "cq-demos"},
        },
    ]


class PeerPlane:
    def __init__(self, cp: LocalControlPlane, token: str, kubeconfig: Path) -> None:
        self.cp, self.token, self.kubeconfig = cp, token, kubeconfig

    def plane(self, dashboard: str = "") -> Plane:
        return Plane(self.cp.server, self.token, str(self.cp.ca_cert_path), NAMESPACE, dashboard)

    def live(self, plural: str) -> list[dict[str, Any]]:
        """The namespace's objects of ``plural`` (e.g. ``rayclusters.ray.io``) not being deleted."""
        objs = self.cp.store.list(plural, NAMESPACE)
        return [o for o in objs if not o["metadata"].get("deletionTimestamp")]


@pytest.fixture(scope="module")
def peer_plane(crd_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PeerPlane]:
    with LocalControlPlane(crd_dir=crd_dir, keda_enabled=False, prometheus_enabled=False) as cp:
        cp.apply(admin_setup(NAMESPACE))
        token = cp.add_user("cf-user", [NAMESPACE])
        kubeconfig = tmp_path_factory.mktemp("cf-kube") / "config"
        merge_context(
            kubeconfig,
            "cf-demos",
            server=cp.server,
            ca_path=cp.ca_cert_path,
            user="cf-user",
            token=token,
            namespace=NAMESPACE,
        )
        yield PeerPlane(cp, token, kubeconfig)


def run_peer(path: str, peer: PeerPlane, tmp_path: Path, artefacts: Path, dashboard: str = "") -> NotebookRun:
    """The peer's notebook ``path``, rewritten, executed top to bottom (stopping at the first error, which
    fails the test with the cell and the error)."""
    notebook = prepare(path, peer.plane(dashboard), tmp_path / "nb")
    saved = artefacts / f"codeflare-{notebook.stem}.executed.ipynb"
    try:
        return execute_notebook(notebook, saved, env={"KUBECONFIG": str(peer.kubeconfig)})
    except CellExecutionError as err:
        cell = str(err).split("------------------")[1].strip() if "------------------" in str(err) else "?"
        pytest.fail(f"{path}: the cell\n{cell}\nraised {err.ename}: {err.evalue}", pytrace=False)


def cell_text(run: NotebookRun, starts: str) -> str:
    """Everything the (first) code cell whose source starts with ``starts`` showed: printed text and the
    ``text/plain`` of its displays."""
    cell = next(c for c in run.notebook.cells if c.cell_type == "code" and c.source.startswith(starts))
    outputs = run.at_end_of_cell[cell.id]
    return stdout(outputs) + "\n".join(plain(d) for d in displays(outputs))


def result(run: NotebookRun, starts: str) -> str:
    """The ``text/plain`` of the value the code cell whose source starts with ``starts`` ended with."""
    cell = next(c for c in run.notebook.cells if c.cell_type == "code" and c.source.startswith(starts))
    (value,) = [o for o in run.at_end_of_cell[cell.id] if o.get("output_type") == "execute_result"]
    return plain(value)


def probe(run: NotebookRun, cell_id: str = "probe") -> str:
    line = stdout(run.at_end_of_cell[cell_id]).strip()
    assert line.startswith("PROBE "), line
    return line.removeprefix("PROBE ")


def test_0_basic_ray_brings_a_cluster_up_and_down(
    peer_plane: PeerPlane, tmp_path: Path, artefacts: Path
) -> None:
    run = run_peer("guided-demos/0_basic_ray.ipynb", peer_plane, tmp_path, artefacts)
    statuses = [c for c in run.notebook.cells if c.cell_type == "code" and c.source == "cluster.status()"]
    after_wait = stdout(run.at_end_of_cell[statuses[-1].id]) + "".join(
        plain(d) for d in displays(run.at_end_of_cell[statuses[-1].id])
    )
    assert "ready" in after_wait.lower(), after_wait
    assert "raytest" in cell_text(run, "cluster.details()")
    assert "raytest" not in [c["metadata"]["name"] for c in peer_plane.live("rayclusters.ray.io")]


def test_1_cluster_job_client_runs_a_job_through_the_clusters_job_client(
    peer_plane: PeerPlane, tmp_path: Path, artefacts: Path
) -> None:
    run = run_peer("guided-demos/1_cluster_job_client.ipynb", peer_plane, tmp_path, artefacts)
    assert "jobtest" in cell_text(run, "cluster.details()")
    assert STAND_IN_OUTPUT in cell_text(run, "# Iterate through the logs of a job")
    assert probe(run) == "SUCCEEDED"
    assert "raysubmit_" in cell_text(run, "# List all existing jobs")


def test_2_basic_interactive_runs_a_remote_task_through_ray_client(
    peer_plane: PeerPlane, tmp_path: Path, artefacts: Path
) -> None:
    run = run_peer("guided-demos/2_basic_interactive.ipynb", peer_plane, tmp_path, artefacts)
    assert "Ray cluster is up and running:  True" in cell_text(run, "# before proceeding")
    assert result(run, "#call the above cell") == str(sum(i * i for i in range(1000)))


def test_3_widget_example_shows_the_widgets(peer_plane: PeerPlane, tmp_path: Path, artefacts: Path) -> None:
    run = run_peer("guided-demos/3_widget_example.ipynb", peer_plane, tmp_path, artefacts)
    by_source = {c.source: run.at_end_of_cell[c.id] for c in run.notebook.cells if c.cell_type == "code"}
    create = next(v for k, v in by_source.items() if k.startswith("# Create and configure our cluster"))
    assert any(WIDGET_VIEW in d["data"] for d in displays(create)), "Cluster(...) shows no Apply/Down buttons"
    (view,) = displays(by_source["view_clusters()"])
    assert WIDGET_VIEW in view["data"] and {"text/plain", "text/html"} <= set(view["data"])
    shown = by_source["cluster.status()"]
    status = stdout(shown) + "".join(plain(d) for d in displays(shown))
    assert "widgettest" in status and "not found" in status.lower(), status


def test_4_rayjob_on_an_existing_cluster_submitted_right_after_apply(
    peer_plane: PeerPlane, tmp_path: Path, artefacts: Path
) -> None:
    run = run_peer("guided-demos/4_rayjob_existing_cluster.ipynb", peer_plane, tmp_path, artefacts)
    assert probe(run) == "SUCCEEDED"
    assert "rayjob-cluster" not in [c["metadata"]["name"] for c in peer_plane.live("rayclusters.ray.io")]


def test_5_submit_rayjob_cr_runs_a_job_owned_cluster_in_the_default_queue(
    peer_plane: PeerPlane, tmp_path: Path, artefacts: Path
) -> None:
    run = run_peer("guided-demos/5_submit_rayjob_cr.ipynb", peer_plane, tmp_path, artefacts)
    assert probe(run) == "SUCCEEDED"
    (job,) = [j for j in peer_plane.live("rayjobs.ray.io") if j["metadata"]["name"] == "demo-rayjob"]
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "default"


def test_local_interactive_runs_remote_tasks_through_the_local_client_url(
    peer_plane: PeerPlane, tmp_path: Path, artefacts: Path
) -> None:
    run = run_peer("additional-demos/local_interactive.ipynb", peer_plane, tmp_path, artefacts)
    ten = range(10)
    part = sum(math.sin(i) * math.cos(j) * math.tan(k) for i in ten for j in ten for k in ten)
    assert float(result(run, "ray.get(ref)")) == pytest.approx(30 * part)


def test_ray_job_client_submits_with_the_users_bearer_token(
    peer_plane: PeerPlane, tmp_path: Path, artefacts: Path
) -> None:
    run = run_peer("additional-demos/ray_job_client.ipynb", peer_plane, tmp_path, artefacts)
    assert STAND_IN_OUTPUT in cell_text(run, "# Iterate through the logs of a job")
    assert probe(run) == "SUCCEEDED"
    assert probe(run, "probe-2") == "SUCCEEDED"  # the second job, with a client built without headers


def test_remote_ray_job_client_submits_to_a_dashboard_it_was_given(
    peer_plane: PeerPlane, tmp_path: Path, artefacts: Path
) -> None:
    from rayqueue_sdk import Cluster, ClusterConfiguration, TokenAuthentication

    auth = TokenAuthentication(
        token=peer_plane.token, server=peer_plane.cp.server, ca_cert_path=str(peer_plane.cp.ca_cert_path)
    )
    creator = Cluster(
        ClusterConfiguration(name="shared-dashboard", namespace=NAMESPACE, num_workers=0), client=auth
    )
    creator.apply()
    try:
        creator.wait_ready(show=False)
        run = run_peer(
            "additional-demos/remote_ray_job_client.ipynb",
            peer_plane,
            tmp_path,
            artefacts,
            dashboard=creator.cluster_dashboard_uri(),
        )
    finally:
        creator.down()
    assert probe(run) == "SUCCEEDED"
    assert any(s in cell_text(run, "# Get the job's status") for s in ("PENDING", "RUNNING", "SUCCEEDED"))


def test_6_autoscaling_scales_up_under_load_and_back_down_as_an_elastic_workload(
    peer_plane: PeerPlane, tmp_path: Path, artefacts: Path
) -> None:
    """The peer's notebook asks for in-tree autoscaling (1 to 2 workers) and lands in the namespace's
    default queue: left unset, ``elastic`` makes it Kueue's elastic job, so Ray's own autoscaler grows it
    under load (a new Workload slice, admitted) and shrinks it when idle (the admitted slice shrinks)."""
    run = run_peer("guided-demos/6_autoscaling.ipynb", peer_plane, tmp_path, artefacts)
    assert "Initial worker count matches min_workers=1: 1" in cell_text(run, "def count_workers")
    assert "Scale-up observed: 2 worker(s)" in cell_text(run, "scaled_up = ")
    down = cell_text(run, "wait_for_autoscaling_load(load_handle)")
    assert "Final job status: SUCCEEDED" in down and "Scale-down observed: 1 worker(s)" in down
    # Kueue's side, oldest first: the first slice (head, 1 worker) replaced by the scale-up's slice
    # (head, 2 workers), whose admitted count came back to 1 on the scale-down.
    first, *_, last = probe(run).split()
    assert first == "1,1:WorkloadSliceReplaced", probe(run)
    assert last == "1,1:admitted", probe(run)
    assert "autoscale-demo" not in [c["metadata"]["name"] for c in peer_plane.live("rayclusters.ray.io")]
