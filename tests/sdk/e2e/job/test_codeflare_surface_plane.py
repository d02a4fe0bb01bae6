"""codeflare-sdk's surface against the local control plane and the workspace's real Ray head, as the peer's
notebooks use it with ``codeflare_sdk`` replaced by ``rayqueue_sdk``: a plain kubernetes ``ApiClient`` set
with ``set_api_client``, ``get_cluster(..., verify_tls=False)``, ``write_to_file``, ``local_client_url()``,
``RayJobClient`` with headers and ``verify``, ``RayJob.resubmit()``, the ``Codeflare`` entry point.

One shared Ray head (the ``workspace`` fixture); the job-owned case stays queued, so it starts none.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from rayqueue_local import LocalControlPlane
from rayqueue_sdk import (
    ClusterConfiguration,
    Codeflare,
    CodeFlareClusterStatus,
    JobPhase,
    NotFoundError,
    RayJob,
    RayJobClient,
    SDKConfig,
    TokenAuthentication,
    get_cluster,
    list_all_clusters,
    set_api_client,
)
from rayqueue_sdk.common.kubernetes_cluster import get_api_client

NS = "your-namespace"


def plain_client(plane: LocalControlPlane) -> Any:
    """An ApiClient made with the kubernetes package alone (as kube-authkit's get_k8s_client makes one)."""
    from kubernetes import client as k8s

    cfg = k8s.Configuration()
    cfg.host = plane.server
    cfg.ssl_ca_cert = str(plane.ca_cert_path)
    cfg.api_key = {"authorization": f"Bearer {plane.token}"}
    return k8s.ApiClient(configuration=cfg)


def until(check: Any, what: str, limit: float = 300.0, seen: Any = None) -> Any:
    """Poll ``check()`` until it returns something truthy (bounded: a hang fails with ``what`` and, with
    ``seen``, what ``seen()`` says then)."""
    deadline = time.monotonic() + limit
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}" + (f"; last seen: {seen()!r}" if seen else ""))
        time.sleep(0.5)


def test_a_plain_kubernetes_client_set_with_set_api_client_drives_the_sdk(
    ray_plane: LocalControlPlane, workspace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kubernetes import client as k8s

    api = plain_client(ray_plane)
    set_api_client(api)
    assert get_api_client() is api
    monkeypatch.setenv("HOME", str(tmp_path))

    cluster = get_cluster(workspace, namespace=NS, verify_tls=False, write_to_file=True)
    assert cluster.session.api is api and cluster.config.verify_tls is False
    status, ready = cluster.status()
    assert status is CodeFlareClusterStatus.READY and ready is True

    written = tmp_path / ".codeflare" / "resources" / f"{workspace}.yaml"
    assert cluster.resource_yaml == str(written)
    assert yaml.safe_load(written.read_text())["metadata"]["name"] == workspace

    assert cluster.local_client_url() == cluster.cluster_uri()
    assert cluster.local_client_url().startswith("ray://")

    # the notebooks' own kubernetes calls go through the same client
    pods = k8s.CoreV1Api(get_api_client()).list_namespaced_pod(
        NS, label_selector=f"ray.io/cluster={workspace}"
    )
    assert pods.items


async def _collect(lines: AsyncIterator[str]) -> str:
    return "".join([chunk async for chunk in lines])


def test_ray_job_client_with_headers_and_verify_runs_a_job_on_the_head(workspace: str) -> None:
    cluster = get_cluster(workspace, NS)
    dashboard = cluster.cluster_dashboard_uri()
    client = RayJobClient(
        address=dashboard, headers={"Authorization": "Bearer from-the-notebook"}, verify=True
    )
    sid = client.submit_job(entrypoint="python -c \"print('hello from RayJobClient')\"")
    final = until(
        lambda: (s := client.get_job_status(sid)) in ("SUCCEEDED", "FAILED", "STOPPED") and s, "the Ray job"
    )
    assert final == "SUCCEEDED", client.get_job_logs(sid)
    assert "hello from RayJobClient" in client.get_job_logs(sid)
    assert client.get_job_info(sid).submission_id == sid
    assert sid in [job.submission_id for job in client.list_jobs()]
    assert "hello from RayJobClient" in asyncio.run(_collect(client.tail_job_logs(sid)))
    assert client.stop_job(sid) == (False, f"Failed to stop Job, {sid} could have already completed.")
    assert client.delete_job(sid) == (True, f"Successfully deleted Job {sid}")

    from_sdk = RayJobClient(cluster=cluster)  # address, token and TLS from the SDK, as cluster.job_client
    assert from_sdk.get_address() == dashboard
    assert sid not in [job.submission_id for job in from_sdk.list_jobs()]


def test_resubmit_on_an_existing_cluster_runs_the_job_again(workspace: str) -> None:
    job = RayJob(job_name="again", entrypoint="python -c 'print(7)'", cluster_name=workspace, namespace=NS)
    job.submit()
    job.wait(timeout=300)
    first = job.job_id
    assert job.resubmit() is True
    assert job.job_id != first
    job.wait(timeout=300)
    status, done = job.status()
    assert status is JobPhase.SUCCEEDED and done is True


def test_resubmit_requeues_a_job_owned_job_that_stop_deactivated(ray_plane: LocalControlPlane) -> None:
    """A job that cannot fit stays queued (no Ray head); stop() deactivates its Workload; resubmit() puts
    it back in the queue, as codeflare's resubmit un-suspends a suspended RayJob."""
    job = RayJob(
        job_name="too-big",
        entrypoint="python -c 'print(1)'",
        cluster_config=ClusterConfiguration(
            num_workers=1, worker_extended_resource_requests={"nvidia.com/gpu": 64}
        ),
        namespace=NS,
        local_queue="batch-jobs-queue",
    )
    job.submit()
    try:
        until(lambda: job.status().phase is JobPhase.QUEUED and job.status().explanation, "Kueue's Workload")
        assert job.stop() is True
        # (one two-worker run gave up here after 300 s, a run alone took 2.5 s: say what was seen)
        until(lambda: job.status().phase is JobPhase.DEACTIVATED, "the deactivation", seen=job.status)
        assert job.resubmit() is True
        until(lambda: job.status().phase is JobPhase.QUEUED, "the job to be queued again")
    finally:
        job.delete()
    until(lambda: job.status().phase is JobPhase.DELETED, "the deletion")
    with pytest.raises(NotFoundError, match="submit"):
        job.resubmit()


def test_resubmit_runs_an_ended_job_owned_job_again_under_its_name(logged_in: Any) -> None:
    """codeflare 0.40's form (a ClusterConfiguration as the job's cluster, api_client=): the job runs on its
    own cluster, ends, and resubmit() runs it again under the same name once the old one is gone."""
    job = RayJob(
        job_name="twice",
        entrypoint="python -c \"print('run', flush=True)\"",
        cluster_config=ClusterConfiguration(num_workers=0, local_queue="batch-jobs-queue"),
        namespace=NS,
        api_client=logged_in,
    )
    job.submit()
    try:
        assert job.wait(timeout=300).phase is JobPhase.SUCCEEDED
        assert job.resubmit() is True
        status, done = job.wait(timeout=300)
        assert status is JobPhase.SUCCEEDED and done
    finally:
        job.delete()


def test_the_codeflare_entry_point_reads_the_workspace(
    ray_plane: LocalControlPlane, workspace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    auth = TokenAuthentication(
        token=ray_plane.token, server=ray_plane.server, ca_cert_path=str(ray_plane.ca_cert_path)
    )
    cf = Codeflare(config=SDKConfig(auth=auth, namespace=NS))
    same = cf.clusters.get(name=workspace)
    status, ready = same.status()
    assert status is CodeFlareClusterStatus.READY and ready
    assert workspace in [st.name for st in cf.clusters.list()]
    assert workspace not in [st.name for st in cf.clusters.list_queued()]
    assert [st.name for st in list_all_clusters(NS)] == [st.name for st in cf.clusters.list()]
    assert workspace in capsys.readouterr().out
