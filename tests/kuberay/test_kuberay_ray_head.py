"""A real local Ray head: ports, readiness, a job through Ray's JobSubmissionClient, exact stop."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request

import pytest

from rayqueue_sdk.local.processes import session_pids
from rayqueue_sdk.local.raylocal import RayHead, RayHeadSpec

pytestmark = pytest.mark.ray


def wait_job(client, job_id: str, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    status = client.get_job_status(job_id)
    while not status.is_terminal() and time.monotonic() < deadline:
        time.sleep(0.2)
        status = client.get_job_status(job_id)
    return status


def test_head_runs_a_gpu_job_reports_memory_and_stops_exactly():
    from ray.job_submission import JobStatus, JobSubmissionClient

    head = RayHead(RayHeadSpec(num_cpus=64, num_gpus=2, label="test-head"))
    head.start()
    try:
        head.wait_ready()
        assert head.running
        endpoints = head.endpoints()
        assert set(endpoints) == {"client", "dashboard", "gcs-server", "metrics"}
        with urllib.request.urlopen(head.dashboard_url + "/api/version", timeout=5) as resp:
            assert b"ray_version" in resp.read()

        client = JobSubmissionClient(head.dashboard_url)
        script = (
            "import ray; ray.init(); r = ray.cluster_resources(); "
            "print('CPU', r['CPU'], 'GPU', r['GPU']); "
            "print('answer', ray.get(ray.remote(num_gpus=1)(lambda: 42).remote()))"
        )
        job_id = client.submit_job(entrypoint=f'python -c "{script}"')
        assert wait_job(client, job_id) == JobStatus.SUCCEEDED
        logs = client.get_job_logs(job_id)
        assert f"CPU {float(min(64, os.cpu_count() or 1))} GPU 2.0" in logs  # CPUs capped, GPUs advertised
        assert "answer 42" in logs

        mem = head.memory()
        assert mem["processes"] >= 5 and mem["rss"] > 100 * 2**20
        sid = head.process.sid if head.process else -1
    finally:
        left = head.stop()
    assert left == []
    assert session_pids(sid) == []
    assert not head.running


def test_owner_killed_with_a_running_head_leaves_no_ray_process():
    owner_code = textwrap.dedent(
        """
        import time
        from rayqueue_sdk.local.raylocal import RayHead, RayHeadSpec
        head = RayHead(RayHeadSpec(num_cpus=1, label="orphan-test"))
        head.start(); head.wait_ready()
        print(head.process.sid, head.temp_dir, flush=True)
        time.sleep(600)
        """
    )
    owner = subprocess.Popen([sys.executable, "-c", owner_code], stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    sid_text, temp_dir = owner.stdout.readline().split()
    sid = int(sid_text)
    assert len(session_pids(sid)) >= 5

    os.kill(owner.pid, signal.SIGKILL)
    owner.wait()
    deadline = time.monotonic() + 30
    while (session_pids(sid) or os.path.exists(temp_dir)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert session_pids(sid) == []
    assert not os.path.exists(temp_dir)
