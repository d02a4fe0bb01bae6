"""Seed 001, workflow 1, as written (only the import changed), with a limited user token.

The data scientist logs in with a token (no namespace: the cluster goes to ``default``, where the
team's queue is), applies the workspace cluster, waits, connects with ``ray.init(cluster_uri())`` and
runs real remote tasks (in a subprocess, so this process stays free of Ray), then takes it down.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from cluster_helpers import team_queue

from rayqueue_local.controlplane import LocalControlPlane

pytestmark = pytest.mark.ray


def test_workspace_cluster_as_written(plane: LocalControlPlane, monkeypatch: pytest.MonkeyPatch) -> None:
    plane.apply(team_queue("default", "ds-workspace-queue", cpu=16, memory="64Gi", gpus=4))
    TOKEN, SERVER = plane.add_user("data-scientist", ["default"]), plane.server  # noqa: N806
    monkeypatch.setenv("RAYQUEUE_CA_CERT_PATH", str(plane.ca_cert_path))  # the CA a real cluster would have

    # --- seed 001, workflow 1 ------------------------------------------------------------------
    from rayqueue_sdk import Cluster, ClusterConfiguration, TokenAuthentication

    # Authenticate to RHOAI
    auth = TokenAuthentication(token=TOKEN, server=SERVER, skip_tls=False)
    auth.login()

    # Define your workspace cluster
    workspace_cluster = Cluster(
        ClusterConfiguration(
            name="my-workspace-cluster",
            num_workers=2,
            worker_cpu_requests=2,
            worker_memory_requests=8,
            worker_extended_resource_requests={"nvidia.com/gpu": 1},  # 2 GPUs total
            local_queue="ds-workspace-queue",  # The team's development queue
            labels={"kueue.x-k8s.io/priority-class": "rd-priority"},  # The R&D priority
        )
    )

    # Start your cluster
    workspace_cluster.apply()
    workspace_cluster.wait_ready()
    # ---------------------------------------------------------------------------------------------

    status = workspace_cluster.status()
    assert status.ready and status.namespace == "default"
    assert (status.queue, status.priority_class) == ("ds-workspace-queue", "rd-priority")
    assert (status.workers_ready, status.workers_desired) == (2, 2)
    assert TOKEN not in repr(auth) + repr(workspace_cluster) + str(status.to_dict())

    # Connect to Ray for interactive work (the seed's cell, run in a fresh interpreter)
    script = textwrap.dedent(
        f"""
        import ray
        ray.init({workspace_cluster.cluster_uri()!r})

        @ray.remote(num_gpus=1)
        def train_model(data):
            return sum(data)  # Your ML code here

        data = [[1, 2], [3, 4], [5, 6]]
        results = ray.get([train_model.remote(batch) for batch in data])
        print("results", results, "GPUs", ray.cluster_resources().get("GPU"))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:] + client_server_logs()
    assert "results [3, 7, 11] GPUs 2.0" in done.stdout

    # When you're done for the day (or week), clean up:
    workspace_cluster.down()  # Resources immediately returned to the queue
    assert [c for c in workspace_cluster_list(workspace_cluster)] == []
    assert workspace_cluster.down() is False  # idempotent
    auth.logout()


def client_server_logs() -> str:
    """The newest local Ray heads' client-server logs (for a failure message)."""
    import glob
    import os

    files = sorted(glob.glob("/tmp/rqray-*/session_latest/logs/ray_client_server*.err"), key=os.path.getmtime)
    return "".join(f"\n== {f}\n" + open(f, errors="replace").read()[-2000:] for f in files[-3:])


def workspace_cluster_list(cluster: object) -> list[str]:
    from rayqueue_sdk import list_clusters

    return [s.name for s in list_clusters("default")]
