"""A real local Ray head (one, to keep the suite short): private ports, readiness, a GPU job through
Ray's JobSubmissionClient, memory; then its owner is SIGKILLed and nothing of the head remains.

A normal ``stop()`` leaving nothing is checked in test_kuberay_ray_scenarios (deactivation).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from rayqueue_local.runtime.processes import session_pids

pytestmark = pytest.mark.ray

OWNER = textwrap.dedent(
    """
    import json, os, time
    from ray.job_submission import JobSubmissionClient
    from rayqueue_local.runtime.raylocal import RayHead, RayHeadSpec
    from rayqueue_local.runtime.startslots import StartSlots

    head = RayHead(RayHeadSpec(num_cpus=64, num_gpus=2, label="owner-test"))
    with StartSlots().held():  # a machine start slot, as a plane takes one (runtime/startslots)
        head.start()
        head.wait_ready()
    client = JobSubmissionClient(head.dashboard_url)
    script = ("import ray; ray.init(); r = ray.cluster_resources(); print('CPU', r['CPU'], 'GPU', r['GPU']); "
              "print('answer', ray.get(ray.remote(num_gpus=1)(lambda: 42).remote())); "
              "print('node', ray.nodes()[0]['NodeManagerAddress'])")
    job_id = client.submit_job(entrypoint=f'python -c "{script}"')
    while not client.get_job_status(job_id).is_terminal():
        time.sleep(0.2)
    print(json.dumps({
        "sid": head.process.sid,
        "proxy_sid": head.client_proxy.sid,
        "temp_dir": str(head.temp_dir),
        "endpoints": head.endpoints(),
        "status": str(client.get_job_status(job_id)),
        "logs": client.get_job_logs(job_id),
        "memory": head.memory(),
    }), flush=True)
    time.sleep(600)
    """
)


def environment_of(pid: int) -> dict[str, str]:
    """A process's environment, from /proc (empty if it is gone)."""
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    return dict(item.decode(errors="replace").partition("=")[::2] for item in raw.split(b"\0") if item)


def command_of(pid: int) -> str:
    """A process's command line, from /proc."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:300]
    except OSError:
        return "(gone)"


def test_head_runs_a_gpu_job_and_dies_with_its_owner():
    owner = subprocess.Popen([sys.executable, "-c", OWNER], stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    report = json.loads(owner.stdout.readline())
    sid = report["sid"]
    try:
        assert report["status"] == "SUCCEEDED", report["logs"]
        cpus = float(min(64, os.cpu_count() or 1))
        assert f"CPU {cpus} GPU 2.0" in report["logs"]  # CPUs capped to this machine, GPUs advertised
        assert "answer 42" in report["logs"]
        assert "node 127.0.0.1" in report["logs"]  # loopback only, never the machine's network address
        assert set(report["endpoints"]) == {"client", "dashboard", "gcs-server", "metrics"}
        assert "8265" not in report["endpoints"].values()  # private ports, not Ray's defaults
        assert report["memory"]["processes"] >= 5 and report["memory"]["pss"] > 50 * 2**20
        assert len(session_pids(sid)) >= 5
        # every process of the head and of its client proxy runs with gRPC's fork handlers off (see
        # raylocal: with them on, a child forked to exec can crash first)
        processes = session_pids(sid) + session_pids(report["proxy_sid"])
        # /proc/<pid>/environ of those still there; a process that renamed itself "ray::..." (setproctitle)
        # may have written its title over that memory, so its environment cannot be read this way
        environments = {
            pid: env
            for pid in processes
            if (env := environment_of(pid)) and not command_of(pid).startswith("ray::")
        }
        without = {
            pid: command_of(pid)
            for pid, env in environments.items()
            if env.get("GRPC_ENABLE_FORK_SUPPORT") != "0"
        }
        assert len(environments) >= 6 and without == {}, without
    finally:
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()
    deadline = time.monotonic() + 30
    while (session_pids(sid) or os.path.exists(report["temp_dir"])) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert session_pids(sid) == []
    assert not os.path.exists(report["temp_dir"])
