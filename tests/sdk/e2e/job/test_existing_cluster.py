"""Seed 001 workflow 2: quick iteration on the running workspace cluster, through Ray's job client.

Also: re-submission gets a new submission id, a failing job raises JobFailedError with its log tail,
logs(follow=True) streams lines as they are printed, also from inside a running asyncio loop.
"""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

import pytest

from rayqueue_sdk import JobFailedError, JobPhase, RayJob, RayJobStatus

NS = "your-namespace"

TEST_MODEL = textwrap.dedent(
    """
    import os
    import ray

    ray.init()

    @ray.remote
    def train_model(batch):
        return sum(batch) * int(os.environ.get("SCALE", "1"))

    data = [[1, 2], [3, 4]]
    results = ray.get([train_model.remote(batch) for batch in data])
    print("results", results)
    print("helper says", open("helper.txt").read().strip())
    """
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The data scientist's current directory: test_model.py, a helper file, requirements.txt."""
    (tmp_path / "test_model.py").write_text(TEST_MODEL, encoding="utf-8")
    (tmp_path / "helper.txt").write_text("shipped with working_dir\n", encoding="utf-8")
    # Already satisfied by the cluster's image here: nothing to install (no network in CI).
    (tmp_path / "requirements.txt").write_text("# ray is in the image\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_seed001_workflow2_submit_status_logs(workspace: str, project: Path) -> None:
    from rayqueue_sdk import RayJob  # the seed's import, with codeflare_sdk replaced

    # Define a job that runs on your EXISTING workspace cluster
    quick_job = RayJob(
        job_name="quick-dev-test",
        entrypoint="python test_model.py",
        cluster_name="my-workspace-cluster",  # Points to your running cluster
        namespace="your-namespace",
        runtime_env={
            "working_dir": ".",  # Uses your current directory
            "pip": "requirements.txt",  # Installs dependencies
        },
    )
    # Submit the job (instant - no cluster startup wait)
    quick_job.submit()
    # Check status
    status = quick_job.status()
    # Get logs
    quick_job.logs()

    assert quick_job.job_id is not None and quick_job.job_id.startswith("quick-dev-test-")
    assert isinstance(status, RayJobStatus)
    assert status.phase in (JobPhase.STARTING, JobPhase.RUNNING, JobPhase.SUCCEEDED)
    assert status.cluster_name == "my-workspace-cluster" and status.job_id == quick_job.job_id
    final = quick_job.wait(timeout=300)
    assert final.phase is JobPhase.SUCCEEDED
    logs = quick_job.logs()
    assert "results [3, 7]" in logs
    assert "helper says shipped with working_dir" in logs


def test_resubmission_gets_a_new_submission_id(workspace: str, project: Path) -> None:
    job = RayJob(
        job_name="quick-dev-test",
        entrypoint="python -c 'print(1)'",
        cluster_name=workspace,
        namespace="your-namespace",
    )
    first = job.submit()
    second = job.submit()
    assert first != second and job.job_id == second
    assert job.wait(timeout=300).phase is JobPhase.SUCCEEDED


def test_env_vars_reach_the_job(workspace: str, project: Path) -> None:
    job = RayJob(
        job_name="env-test",
        entrypoint="python test_model.py",
        cluster_name=workspace,
        namespace="your-namespace",
        runtime_env={"working_dir": ".", "env_vars": {"SCALE": "10"}},
    )
    job.submit()
    job.wait(timeout=300)
    assert "results [30, 70]" in job.logs()


def test_failing_job_raises_job_failed_error_with_log_tail(workspace: str, project: Path) -> None:
    (project / "broken.py").write_text(
        "print('loading data')\nraise ValueError('bad learning rate: -1')\n", encoding="utf-8"
    )
    job = RayJob(
        job_name="broken-job",
        entrypoint="python broken.py",
        cluster_name=workspace,
        namespace="your-namespace",
        runtime_env={"working_dir": "."},
    )
    job.submit()
    with pytest.raises(JobFailedError) as info:
        job.wait(timeout=300)
    err = info.value
    assert err.status == "FAILED" and err.job_id == job.job_id
    assert "loading data" in err.log_tail
    assert "ValueError: bad learning rate: -1" in err.log_tail
    assert "ValueError: bad learning rate: -1" in str(err)
    assert job.status().phase is JobPhase.FAILED
    assert job.delete() is True
    assert job.status().phase is JobPhase.DELETED


SLOW_PRINTER = textwrap.dedent(
    """
    import sys, time
    for i in range(3):
        print(f"tick {i}", flush=True)
        # the next line is printed only once the test has seen this one
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                if open(f"{sys.argv[1]}/ack-{i}").read():
                    break
            except OSError:
                time.sleep(0.05)
    print("done", flush=True)
    """
)


def _follow_with_acks(job: RayJob, ack_dir: Path) -> list[str]:
    """Consume logs(follow=True); acknowledge each tick so the job prints the next one.

    The job cannot print tick i+1 before tick i was received here, so seeing all ticks proves the
    lines arrive while the job is still running (incrementally), not at the end.
    """
    seen: list[str] = []
    for line in job.logs(follow=True):
        seen.append(line)
        if line.startswith("tick "):
            (ack_dir / f"ack-{line.split()[1]}").write_text("ok", encoding="utf-8")
    return seen


def test_logs_follow_yields_lines_incrementally(workspace: str, project: Path, tmp_path: Path) -> None:
    (project / "slow.py").write_text(SLOW_PRINTER, encoding="utf-8")
    ack = tmp_path / "acks"
    ack.mkdir()
    job = RayJob(
        job_name="follow-test",
        entrypoint=f"python slow.py {ack}",
        cluster_name=workspace,
        namespace="your-namespace",
        runtime_env={"working_dir": "."},
    )
    job.submit()
    seen = _follow_with_acks(job, ack)
    assert [s for s in seen if s.startswith("tick") or s == "done"] == ["tick 0", "tick 1", "tick 2", "done"]
    assert job.wait(timeout=120).phase is JobPhase.SUCCEEDED


def test_logs_follow_inside_a_running_event_loop(workspace: str, project: Path, tmp_path: Path) -> None:
    (project / "slow.py").write_text(SLOW_PRINTER, encoding="utf-8")
    ack = tmp_path / "acks"
    ack.mkdir()
    job = RayJob(
        job_name="follow-loop-test",
        entrypoint=f"python slow.py {ack}",
        cluster_name=workspace,
        namespace="your-namespace",
        runtime_env={"working_dir": "."},
    )
    job.submit()

    async def notebook_cell() -> list[str]:
        asyncio.get_running_loop()  # a loop runs in this thread, as in Jupyter
        return _follow_with_acks(job, ack)

    seen = asyncio.run(notebook_cell())
    assert "tick 2" in seen and "done" in seen


def test_stop_a_running_job(workspace: str, project: Path) -> None:
    job = RayJob(
        job_name="stop-test",
        entrypoint="python -c 'import time; print(\"started\", flush=True); time.sleep(300)'",
        cluster_name=workspace,
        namespace="your-namespace",
    )
    job.submit()
    for line in job.logs(follow=True):
        if "started" in line:
            break
    assert job.stop() is True
    with pytest.raises(JobFailedError) as info:
        job.wait(timeout=120)
    assert info.value.status == "STOPPED"
    assert job.status().phase is JobPhase.STOPPED


def test_submit_is_recorded_with_the_job_name(workspace: str, project: Path) -> None:
    from rayqueue_sdk.job.existing import JOB_NAME_METADATA, ExistingClusterJob

    job = RayJob(
        job_name="meta-test", entrypoint="python -c 'print(2)'", cluster_name=workspace, namespace=NS
    )
    job.submit()
    backend = job._backend
    assert isinstance(backend, ExistingClusterJob)
    info = backend.job_client().get_job_info(job.job_id)
    assert info.metadata[JOB_NAME_METADATA] == "meta-test"
    job.wait(timeout=120)


def test_job_lost_when_kueue_deactivates_its_cluster(ray_plane: Any, logged_in: Any) -> None:
    """The cluster's Workload is deactivated under a running job: Kueue evicts the cluster, its head
    goes, the job with it. Nothing reruns a job submitted to an existing cluster, so wait() raises
    PreemptedError with Kueue's reason instead of a connection error."""
    from kubernetes import client as k8s

    from rayqueue_sdk import Cluster, ClusterConfiguration, PreemptedError
    from rayqueue_sdk.cluster.wait import wait_for_cluster
    from rayqueue_sdk.kube.kinds import RAYCLUSTERS
    from rayqueue_sdk.kube.lookups import find_workload
    from rayqueue_sdk.kube.session import KubeSession

    config = ClusterConfiguration(
        name="scratch", namespace=NS, num_workers=1, local_queue="ds-workspace-queue"
    )
    ray_plane.apply(Cluster(config).to_dict())
    try:
        wait_for_cluster("scratch", NS, timeout=300)
        job = RayJob(
            job_name="doomed",
            entrypoint="python -c 'import time; print(\"up\", flush=True); time.sleep(300)'",
            cluster_name="scratch",
            namespace=NS,
        )
        job.submit()
        for line in job.logs(follow=True):
            if "up" in line:
                break
        uid = KubeSession(logged_in).get(RAYCLUSTERS, name="scratch", namespace=NS)["metadata"]["uid"]
        workload = find_workload(KubeSession(logged_in), owner_uid=uid, namespace=NS)
        assert workload is not None
        k8s.CustomObjectsApi(logged_in).patch_namespaced_custom_object(
            "kueue.x-k8s.io", "v1beta2", NS, "workloads", workload["metadata"]["name"],
            {"spec": {"active": False}}, _content_type="application/merge-patch+json",
        )  # fmt: skip
        with pytest.raises(PreemptedError) as info:
            job.wait(timeout=120)
        assert info.value.reason.startswith("Deactivated")
        st = job.status()
        assert st.phase is JobPhase.DEACTIVATED and "scratch" in st.explanation
    finally:
        k8s.CustomObjectsApi(logged_in).delete_namespaced_custom_object(
            "ray.io", "v1", NS, "rayclusters", "scratch"
        )
