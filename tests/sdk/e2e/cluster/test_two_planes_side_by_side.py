"""Two local control planes on one machine, each with a ready cluster, used at once (issue 13, item 2).

CI and a notebook, or two users, run planes side by side: every port a plane starts (API server, Ray
GCS, dashboard, client server, metrics, the heads' worker ranges) must be its own. The session plane
and a second one each get a ready RayCluster; ``ray.init(cluster.cluster_uri())`` then connects to
both (each in its own interpreter, as two notebooks would) and each connection must land on its own
cluster's GCS. A job whose entrypoint says plain ``python`` runs with the interpreter that started
the plane, whether or not that environment is activated (``PATH`` here does not include it first).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cluster_helpers import team_queue

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import Cluster, ClusterConfiguration
from rayqueue_sdk.kube.client import build_api_client

pytestmark = pytest.mark.ray

CONNECT = textwrap.dedent(
    """
    import json, sys, ray
    ray.init(sys.argv[1])
    value = ray.get(ray.remote(lambda: 6 * 7).remote())
    print(json.dumps({"gcs": ray.get_runtime_context().gcs_address, "value": value}))
    """
)


def ready_cluster(cp: LocalControlPlane, ns: str, name: str) -> Cluster:
    cp.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    cp.apply(team_queue(ns, "q", cpu=8, memory="16Gi", gpus=0))
    api = build_api_client(cp.server, token=cp.token, ca_cert_path=str(cp.ca_cert_path))
    cluster = Cluster(
        ClusterConfiguration(name=name, namespace=ns, num_workers=0, local_queue="q"), client=api
    )
    cluster.apply()
    return cluster


def test_two_planes_each_serve_their_own_ready_cluster(plane: LocalControlPlane, crd_dir: Path) -> None:
    second = LocalControlPlane(crd_dir=crd_dir, keda_enabled=False, prometheus_enabled=False)
    with second:
        assert second.server != plane.server
        clusters = [ready_cluster(plane, "side-a", "left"), ready_cluster(second, "side-b", "right")]
        try:
            for cluster in clusters:
                cluster.wait_ready(timeout=300)
            assert all(c.status().ready for c in clusters)
            uris = [c.cluster_uri() for c in clusters]
            assert uris[0] != uris[1]

            # Both connections are open at the same time: two interpreters, two clusters.
            procs = [
                subprocess.Popen(
                    [sys.executable, "-c", CONNECT, uri],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for uri in uris
            ]
            outputs = [p.communicate(timeout=300) for p in procs]
            for proc, (_out, err) in zip(procs, outputs, strict=True):
                assert proc.returncode == 0, err[-3000:]
            seen = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
            assert [s["value"] for s in seen] == [42, 42]
            for s, cp, cluster in zip(seen, (plane, second), clusters, strict=True):
                rc = cp.store.get("rayclusters.ray.io", cluster.namespace, cluster.name)
                assert s["gcs"] == "127.0.0.1:" + rc["status"]["endpoints"]["gcs-server"], s

            # `python` in a job is the plane's interpreter, with PATH not pointing at it.
            env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
            env["PATH"] = "/usr/bin:/bin"
            client = clusters[1].job_client
            job = client.submit_job(entrypoint="python -c 'import sys; print(sys.executable)'")
            status = client.get_job_status(job)
            while not status.is_terminal():
                status = client.get_job_status(job)
            logs = client.get_job_logs(job)
            assert str(status) == "SUCCEEDED", logs
            assert os.path.realpath(logs.strip().splitlines()[-1]) == os.path.realpath(sys.executable)
        finally:
            for cluster in clusters:
                cluster.down()
