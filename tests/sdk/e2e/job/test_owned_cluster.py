"""Seed 001 workflow 3: a fire-and-forget job on its own cluster, through the production queue.

Also: deactivating the running job's Workload (Kueue's supported stop/evict) shows as DEACTIVATED and
fails wait() with PreemptedError; reactivating it requeues the job.
"""

from __future__ import annotations

import base64
import io
import json
import textwrap
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s

from rayqueue_sdk import (
    AdmissionTimeout,
    JobFailedError,
    JobPhase,
    ManagedClusterConfig,
    NotFoundError,
    PreemptedError,
    RayJob,
    RayJobStatus,
)
from rayqueue_sdk.kube.kinds import RAYCLUSTERS, RAYJOBS
from rayqueue_sdk.kube.lookups import find_workload
from rayqueue_sdk.kube.session import KubeSession

NS = "your-namespace"

TRAIN = textwrap.dedent(
    """
    import json, os, ray
    ray.init()
    print("config", json.load(open("conf/train.json")))
    print("stage", os.environ["STAGE"])
    total = ray.get(ray.remote(lambda: sum(range(10))).remote())
    print("sum", total)
    # what the job saw, for the test (same machine): its shipped config and its env vars
    with open(os.environ["RESULT_FILE"], "w") as out:
        json.dump({"config": json.load(open("conf/train.json")), "stage": os.environ["STAGE"],
                   "sum": total}, out)
    """
)


def poll(fetch: Callable[[], Any], done: Callable[[Any], bool], timeout: float = 180.0) -> Any:
    deadline = time.monotonic() + timeout
    value = fetch()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(0.2)
        value = fetch()
    return value


def rayclusters(api: Any) -> list[str]:
    items = k8s.CustomObjectsApi(api).list_namespaced_custom_object(
        RAYCLUSTERS.group, RAYCLUSTERS.version, NS, RAYCLUSTERS.plural
    )["items"]
    return [i["metadata"]["name"] for i in items]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tested code, in place of the seed's GitHub archive, and ./path/to/requirements.txt."""
    code = tmp_path / "your-repo"
    (code / "conf").mkdir(parents=True)
    (code / "train_model_full.py").write_text(TRAIN, encoding="utf-8")
    (code / "conf" / "train.json").write_text('{"epochs": 1}', encoding="utf-8")
    req = tmp_path / "path" / "to"
    req.mkdir(parents=True)
    (req / "requirements.txt").write_text("# everything is in the image\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return code


def test_seed001_workflow3_admitted_runs_succeeds_and_cleans_up(
    repo: Path, logged_in: Any, ray_plane: Any
) -> None:
    from rayqueue_sdk import ManagedClusterConfig, RayJob  # the seed's import, codeflare_sdk replaced

    # Define a job with embedded cluster requirements
    production_job = RayJob(
        job_name="final-training-run",
        local_queue="batch-jobs-queue",  # Production team's queue
        cluster_config=ManagedClusterConfig(  # Define cluster inline
            num_workers=4,
            worker_cpu_requests=8,
            worker_cpu_limits=8,
            worker_memory_requests=16,
            worker_memory_limits=16,
            worker_accelerators={"nvidia.com/gpu": 2},  # 8 GPUs total
        ),
        entrypoint="python train_model_full.py",
        runtime_env={
            "working_dir": "your-repo",  # the seed's GitHub archive, as a local directory
            "pip": "./path/to/requirements.txt",
            "env_vars": {"STAGE": "nightly", "RESULT_FILE": str(repo.parent / "result.json")},
        },
        labels={"kueue.x-k8s.io/priority-class": "prod-priority"},
    )
    # Submit and forget
    production_job.submit()

    stored = k8s.CustomObjectsApi(logged_in).get_namespaced_custom_object(
        RAYJOBS.group, RAYJOBS.version, NS, RAYJOBS.plural, "final-training-run"
    )
    assert stored["spec"]["shutdownAfterJobFinishes"] is True
    assert stored["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "batch-jobs-queue"
    assert stored["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "prod-priority"
    secret = k8s.CoreV1Api(logged_in).read_namespaced_secret("final-training-run-working-dir", NS)
    assert secret.metadata.owner_references[0].uid == stored["metadata"]["uid"]
    names = zipfile.ZipFile(io.BytesIO(base64.b64decode(secret.data["working_dir.zip"]))).namelist()
    assert sorted(names) == ["conf/train.json", "train_model_full.py"]

    progress: list[RayJobStatus] = []
    final = production_job.wait(timeout=600, on_progress=progress.append)
    assert final.phase is JobPhase.SUCCEEDED
    phases = [p.phase for p in progress]
    assert JobPhase.RUNNING in phases or JobPhase.STARTING in phases
    workload = find_workload(KubeSession(logged_in), owner_uid=stored["metadata"]["uid"], namespace=NS)
    assert workload is not None
    assert workload["status"]["admission"]["clusterQueue"] == "cq-production"
    assert final.cluster_name and final.cluster_name.startswith("final-training-run-")
    assert final.job_id and production_job.job_id == final.job_id
    seen = json.loads((repo.parent / "result.json").read_text(encoding="utf-8"))
    assert seen == {"config": {"epochs": 1}, "stage": "nightly", "sum": 45}

    # Its cluster is gone after the TTL (default 0: KubeRay deletes it at once; the quota goes back).
    gone = poll(lambda: rayclusters(logged_in), lambda names: final.cluster_name not in names, 120)
    assert final.cluster_name not in gone

    # Its logs outlive the cluster: a RayJob object that followed nothing reads them from KubeRay's
    # submitter pod (a batch Job's pod, owned by the RayJob); the one that waited also kept its copy.
    def fresh() -> RayJob:
        return RayJob(job_name="final-training-run", entrypoint="-", cluster_config=ManagedClusterConfig())

    def submitter_done() -> bool:
        job = k8s.BatchV1Api(logged_in).read_namespaced_job("final-training-run", NS)
        return any(c.type == "Complete" and c.status == "True" for c in job.status.conditions or [])

    assert poll(submitter_done, bool, 120)  # its pod has printed all it will
    # (what `ray job logs --follow` printed: Ray may close the stream as the job ends, before its
    # very last lines, so check a line printed earlier)
    pod_logs = fresh().logs()
    assert "stage nightly" in pod_logs and "succeeded" in pod_logs, pod_logs
    pods = (
        k8s.CoreV1Api(logged_in)
        .list_namespaced_pod(NS, label_selector="batch.kubernetes.io/job-name=final-training-run")
        .items
    )
    assert pods and pods[0].metadata.owner_references[0].kind == "Job"
    for pod in pods:
        ray_plane.store.delete("pods", NS, pod.metadata.name)
    with pytest.raises(NotFoundError) as gone_err:
        fresh().logs()
    message = str(gone_err.value)
    assert final.cluster_name in message and "batch.kubernetes.io/job-name=final-training-run" in message
    assert "stage nightly" in production_job.logs()  # what wait() followed

    assert production_job.delete() is True
    assert production_job.delete() is False
    assert production_job.status().phase is JobPhase.DELETED


LONG_RUNNER = "python -c \"import time; print('working', flush=True); time.sleep(600)\""


def test_deactivated_running_job_fails_wait_and_reactivation_requeues(logged_in: Any) -> None:
    job = RayJob(
        job_name="evict-me",
        entrypoint=LONG_RUNNER,
        cluster_config=ManagedClusterConfig(num_workers=1),
        local_queue="batch-jobs-queue",
        priority_class="prod-priority",
        namespace=NS,
    )
    job.submit()
    try:
        running = poll(job.status, lambda s: s.phase in (JobPhase.RUNNING, JobPhase.FAILED), 300)
        assert running.phase is JobPhase.RUNNING
        uid = k8s.CustomObjectsApi(logged_in).get_namespaced_custom_object(
            RAYJOBS.group, RAYJOBS.version, NS, RAYJOBS.plural, "evict-me"
        )["metadata"]["uid"]
        workload = find_workload(KubeSession(logged_in), owner_uid=uid, namespace=NS)
        assert workload is not None
        k8s.CustomObjectsApi(logged_in).patch_namespaced_custom_object(
            "kueue.x-k8s.io",
            "v1beta2",
            NS,
            "workloads",
            workload["metadata"]["name"],
            {"spec": {"active": False}},
            _content_type="application/merge-patch+json",
        )
        with pytest.raises(PreemptedError) as info:
            job.wait(timeout=120)
        assert info.value.reason.startswith("Deactivated")
        assert job.status().phase is JobPhase.DEACTIVATED

        # Back in the queue: Kueue requeues it (and runs it again from the start on a new cluster).
        k8s.CustomObjectsApi(logged_in).patch_namespaced_custom_object(
            "kueue.x-k8s.io",
            "v1beta2",
            NS,
            "workloads",
            workload["metadata"]["name"],
            {"spec": {"active": True}},
            _content_type="application/merge-patch+json",
        )
        back = poll(job.status, lambda s: s.phase is not JobPhase.DEACTIVATED, 60)
        assert back.phase in (JobPhase.REQUEUED, JobPhase.QUEUED, JobPhase.STARTING, JobPhase.RUNNING)
    finally:
        job.delete()


def test_failing_job_owned_job_raises_job_failed_error_with_log_tail(logged_in: Any) -> None:
    """TTL 0: KubeRay deletes the cluster (and the logs on it) the moment the job fails; the tail
    kept while the job ran is still in the error."""
    script = "import time; print('epoch 1 loss nan', flush=True); time.sleep(3); raise SystemExit('diverged')"
    job = RayJob(
        job_name="diverges",
        entrypoint=f'python -c "{script}"',
        cluster_config=ManagedClusterConfig(num_workers=1),
        local_queue="batch-jobs-queue",
        namespace=NS,
    )
    job.submit()
    try:
        with pytest.raises(JobFailedError) as info:
            job.wait(timeout=300)
        err = info.value
        assert err.status == "FAILED" and err.reason == "AppFailed"
        assert "epoch 1 loss nan" in err.log_tail
        assert job.status().phase is JobPhase.FAILED
    finally:
        job.delete()


def test_kueue_preemption_while_running(logged_in: Any) -> None:
    """A production job that needs the whole GPU quota preempts a lower-priority running job in the
    same ClusterQueue (withinClusterQueue: LowerPriority). The victim shows PREEMPTED, then REQUEUED
    (Kueue puts it back in the queue, where it waits for the quota). wait() keeps waiting through that
    by default (Kueue will run it again) and raises PreemptedError with raise_on_preemption=True.
    """
    gpus = ManagedClusterConfig(num_workers=2, worker_accelerators={"nvidia.com/gpu": 6})  # 12 GPUs
    victim = RayJob(
        job_name="low-prio-run",
        entrypoint=LONG_RUNNER,
        cluster_config=gpus,
        local_queue="batch-jobs-queue",
        priority_class="rd-priority",
        namespace=NS,
    )
    preemptor = RayJob(
        job_name="prod-run",
        entrypoint="python -c 'print(1)'",
        cluster_config=gpus,
        local_queue="batch-jobs-queue",
        priority_class="prod-priority",
        namespace=NS,
    )
    victim.submit()
    try:
        running = poll(victim.status, lambda s: s.phase in (JobPhase.RUNNING, JobPhase.FAILED), 300)
        assert running.phase is JobPhase.RUNNING
        preemptor.submit()
        with pytest.raises(PreemptedError) as info:
            victim.wait(timeout=300, raise_on_preemption=True)
        assert info.value.reason == "InClusterQueue"
        assert "Preempted to accommodate a workload" in info.value.message
        requeued = poll(victim.status, lambda s: s.phase in (JobPhase.REQUEUED, JobPhase.QUEUED), 120)
        assert requeued.phase in (JobPhase.REQUEUED, JobPhase.QUEUED)
        # By default the wait goes on (the job is queued again) until its own timeout.
        with pytest.raises(AdmissionTimeout) as timeout:
            victim.wait(timeout=2)
        assert timeout.value.phase in ("requeued", "queued")
    finally:
        preemptor.delete()
        victim.delete()


def test_queued_job_status_has_kueue_reason_and_position_and_stop_leaves_the_queue(logged_in: Any) -> None:
    too_big = ManagedClusterConfig(num_workers=4, worker_accelerators={"nvidia.com/gpu": 8})  # 32 GPUs
    job = RayJob(
        job_name="too-big",
        entrypoint="python -c 'print(1)'",
        cluster_config=too_big,
        local_queue="batch-jobs-queue",
        priority_class="prod-priority",
        namespace=NS,
    )
    job.submit()
    try:
        st = poll(job.status, lambda s: s.phase is JobPhase.QUEUED and s.reason is not None, 60)
        assert st.phase is JobPhase.QUEUED
        assert st.position == 0
        assert "insufficient quota for nvidia.com/gpu" in (st.message or "")  # as Kueue words it
        assert "queued in LocalQueue 'batch-jobs-queue' at position 0" in st.explanation
        assert st.cluster_name is None  # no cluster while queued
        with pytest.raises(AdmissionTimeout) as info:
            job.wait(timeout=1)
        assert info.value.phase == "queued" and info.value.position == 0

        again = RayJob.attach("too-big", namespace=NS)  # e.g. from another process
        assert again.status().phase is JobPhase.QUEUED
        assert again.stop() is True  # not running yet: its Workload is deactivated
        stopped = poll(job.status, lambda s: s.phase is JobPhase.DEACTIVATED, 60)
        assert stopped.phase is JobPhase.DEACTIVATED
    finally:
        assert job.delete() is True
    assert job.status().phase is JobPhase.DELETED
