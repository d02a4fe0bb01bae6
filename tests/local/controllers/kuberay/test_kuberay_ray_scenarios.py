"""End to end with real Ray: an admitted RayCluster runs jobs and remote tasks; RayJobs run to the end."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
import urllib.request

import pytest
from kuberay_helpers import queues, raycluster, rayjob, wait_for
from kubernetes import client

from rayqueue_local.runtime.processes import session_pids

pytestmark = pytest.mark.ray

NS = "ray-e2e"


@pytest.fixture(scope="module")
def custom(ray_cp):
    queues(ray_cp, NS, cpu=16, gpu=4)
    return client.CustomObjectsApi(ray_cp.api_client())


def get(custom, plural: str, name: str) -> dict:
    return custom.get_namespaced_custom_object("ray.io", "v1", NS, plural, name)


@pytest.fixture(scope="module")
def cluster(custom, ray_cp):
    """One admitted RayCluster with a real head, shared by the tests of this module."""
    custom.create_namespaced_custom_object(
        "ray.io", "v1", NS, "rayclusters", raycluster("workspace", workers=1, gpus=1)
    )
    rc = wait_for(
        lambda: get(custom, "rayclusters", "workspace"),
        lambda o: (o.get("status") or {}).get("state") == "ready",
    )
    yield rc
    custom.delete_namespaced_custom_object("ray.io", "v1", NS, "rayclusters", "workspace")


def test_admitted_cluster_is_ready_with_real_endpoints(cluster):
    status = cluster["status"]
    assert cluster["spec"]["suspend"] is False
    dashboard = status["endpoints"]["dashboard"]
    assert dashboard != "8265"  # a real, private port
    with urllib.request.urlopen(
        f"http://{status['head']['serviceIP']}:{dashboard}/api/version", timeout=5
    ) as resp:
        assert b"ray_version" in resp.read()


def test_job_client_submission_succeeds_and_logs_come_back(cluster):
    from ray.job_submission import JobStatus, JobSubmissionClient

    client_ = JobSubmissionClient(f"http://127.0.0.1:{cluster['status']['endpoints']['dashboard']}")
    job_id = client_.submit_job(
        entrypoint='python -c "import ray, os; ray.init(); '
        "print('resources', ray.cluster_resources()['GPU'], os.environ['GREETING'])\"",
        runtime_env={"env_vars": {"GREETING": "hello-from-env"}},
    )
    status = wait_for(lambda: client_.get_job_status(job_id), lambda s: s.is_terminal())
    assert status == JobStatus.SUCCEEDED
    assert "resources 2.0 hello-from-env" in client_.get_job_logs(job_id)  # head + worker GPUs advertised


def test_remote_task_through_the_client_port(cluster):
    port = cluster["status"]["endpoints"]["client"]
    code = textwrap.dedent(
        f"""
        import ray
        ray.init("ray://127.0.0.1:{port}")
        print("square", ray.get(ray.remote(lambda x: x * x).remote(7)))
        ray.shutdown()
        """
    )
    # Every Ray client proxier on a machine starts its per-client servers at port 23000 (Ray's
    # constant); two heads connecting at the same moment can race for it. One retry covers that.
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
        if out.returncode == 0 or "Starting Ray client server failed" not in out.stderr:
            break
    assert out.returncode == 0, out.stderr[-2000:]
    assert "square 49" in out.stdout


#: a job that computes (a busy loop, the stand-in for kernels on the GPU it was given) for ``s`` seconds
COMPUTE = 'python -c "import time; e = time.time() + {s}; any(time.time() > e for _ in iter(int, 1))"'


def test_gpu_utilisation_follows_what_a_job_does_on_the_gpus_it_was_given(cluster, ray_cp):
    """A job given one GPU that computes makes that GPU busy and not the other; a CPU-only job that
    computes, or a job given both GPUs that sleeps, makes none busy (as dcgm-exporter would read it)."""
    from ray.job_submission import JobSubmissionClient

    from rayqueue_local.runtime.gpuwork import descendants, visible_gpus

    exporter = ray_cp.gpu_metrics
    client_ = JobSubmissionClient(f"http://127.0.0.1:{cluster['status']['endpoints']['dashboard']}")
    head = ray_cp.ray_runtime.find(NS, "workspace").head.process

    def utilisation() -> list[float]:
        devices = [d for d in exporter.devices() if d.cluster == "workspace" and d.namespace == NS]
        return [exporter.utilisation(d) for d in sorted(devices, key=lambda d: d.ordinal)]

    def given() -> list[set[int]]:
        return [g for g in (visible_gpus(p) for p in descendants(head.pids())) if g]

    job_id = client_.submit_job(entrypoint=COMPUTE.format(s=120), entrypoint_num_gpus=1)
    busy = wait_for(utilisation, lambda values: len(values) == 2 and max(values) >= 80)
    assert len(given()) >= 1 and len(set().union(*given())) == 1  # Ray gave the job one GPU id
    assert sorted(busy)[0] == 0.0 and 80 <= sorted(busy)[1] <= 100  # the other GPU stays idle
    client_.stop_job(job_id)
    assert wait_for(utilisation, lambda values: values == [0.0, 0.0]) == [0.0, 0.0]

    # the same job given no GPU, and a job given both GPUs that sleeps: nothing computes on a GPU
    cpu_job = client_.submit_job(entrypoint=COMPUTE.format(s=120))
    sleeper = client_.submit_job(entrypoint='python -c "import time; time.sleep(120)"', entrypoint_num_gpus=2)
    assert wait_for(given, lambda g: {0, 1} in g) and {0, 1} in given()
    samples = []
    for _ in range(4):  # the exporter samples CPU use every 1 s: several samples, all idle
        samples.append(utilisation())
        time.sleep(1.1)
    assert samples == [[0.0, 0.0]] * 4
    client_.stop_job(cpu_job)
    client_.stop_job(sleeper)


#: a driver that asks for no GPU and gives its GPU work to Ray: a task given one GPU computes for
#: ``s`` seconds, then an actor given the other GPU holds it and sleeps (the way users ask for GPUs)
RAY_GPU_WORK = textwrap.dedent(
    """
    import os, time, ray
    ray.init()
    @ray.remote(num_gpus=1)
    def train(s):
        e = time.time() + s
        any(time.time() > e for _ in iter(int, 1))
        return os.getpid(), ray.get_gpu_ids()
    @ray.remote(num_gpus=1)
    class Holder:
        def ids(self):
            return os.getpid(), ray.get_gpu_ids()
    holder = Holder.remote()
    print("holder", ray.get(holder.ids.remote()), flush=True)
    print("task", ray.get(train.remote({s})), flush=True)
    time.sleep({s})
    """
)


def test_gpu_utilisation_sees_the_gpus_ray_gives_tasks_and_actors(cluster, ray_cp):
    """A ``@ray.remote(num_gpus=1)`` task that computes makes the GPU Ray gave it busy, though its worker
    process never had ``CUDA_VISIBLE_DEVICES`` at start (the raylet says which worker holds which GPU);
    an actor given the other GPU that only holds it stays idle, and so does everything once the task ends."""
    import shlex

    from ray.job_submission import JobSubmissionClient

    exporter = ray_cp.gpu_metrics
    client_ = JobSubmissionClient(f"http://127.0.0.1:{cluster['status']['endpoints']['dashboard']}")

    def utilisation() -> list[float]:
        devices = [d for d in exporter.devices() if d.cluster == "workspace" and d.namespace == NS]
        return [exporter.utilisation(d) for d in sorted(devices, key=lambda d: d.ordinal)]

    job_id = client_.submit_job(entrypoint="python -c " + shlex.quote(RAY_GPU_WORK.format(s=20)))
    logs = wait_for(lambda: client_.get_job_logs(job_id), lambda text: "holder (" in text, timeout=180)
    holder_gpu = int(logs.split("holder (", 1)[1].split("[", 1)[1].split("]", 1)[0])
    busy = wait_for(utilisation, lambda values: len(values) == 2 and max(values) >= 80, timeout=60)
    assert sorted(busy)[1] >= 80, busy  # the task's GPU is busy
    assert busy[holder_gpu] == 0.0, (busy, holder_gpu)  # the holder's is not
    logs = wait_for(lambda: client_.get_job_logs(job_id), lambda text: "task (" in text, timeout=120)
    task_gpu = int(logs.split("task (", 1)[1].split("[", 1)[1].split("]", 1)[0])
    assert task_gpu != holder_gpu
    # the task has ended; the actor still holds its GPU and sleeps: several samples, all idle
    assert wait_for(utilisation, lambda values: values == [0.0, 0.0], timeout=30) == [0.0, 0.0]
    samples = []
    for _ in range(4):
        samples.append(utilisation())
        time.sleep(1.1)
    assert samples == [[0.0, 0.0]] * 4
    client_.stop_job(job_id)


def test_deactivation_stops_exactly_that_head(custom, cluster, ray_cp):
    handle = ray_cp.ray_runtime.find(NS, "workspace")
    assert handle is not None and handle.head is not None and handle.head.process is not None
    sid = handle.head.process.sid
    assert session_pids(sid)
    mem = handle.memory()
    assert mem["processes"] >= 5 and mem["pss"] > 50 * 2**20

    workload = custom.list_namespaced_custom_object(
        "kueue.x-k8s.io",
        "v1beta2",
        NS,
        "workloads",
        label_selector=f"kueue.x-k8s.io/job-uid={cluster['metadata']['uid']}",
    )["items"][0]
    custom.patch_namespaced_custom_object(
        "kueue.x-k8s.io",
        "v1beta2",
        NS,
        "workloads",
        workload["metadata"]["name"],
        {"spec": {"active": False}},
    )
    rc = wait_for(
        lambda: get(custom, "rayclusters", "workspace"), lambda o: o["status"].get("state") == "suspended"
    )
    assert rc["status"]["state"] == "suspended"
    assert wait_for(lambda: session_pids(sid), lambda pids: not pids, timeout=60) == []
    assert ray_cp.ray_runtime.find(NS, "workspace") is None


def test_rayjob_runs_to_succeeded_and_its_cluster_goes_after_the_ttl(custom):
    script = "python -c \"import ray; ray.init(); print('sum', ray.get(ray.remote(lambda: 1 + 2).remote()))\""
    custom.create_namespaced_custom_object(
        "ray.io",
        "v1",
        NS,
        "rayjobs",
        rayjob("ok-job", script, ttl=2, runtimeEnvYAML="env_vars:\n  MODE: test\n"),
    )
    done = wait_for(
        lambda: get(custom, "rayjobs", "ok-job"),
        lambda j: (j.get("status") or {}).get("jobDeploymentStatus") in ("Complete", "Failed"),
        timeout=240,
    )
    status = done["status"]
    assert (status["jobDeploymentStatus"], status["jobStatus"]) == ("Complete", "SUCCEEDED"), status.get(
        "message"
    )
    name = status["rayClusterName"]

    def cluster_names():
        return [
            c["metadata"]["name"]
            for c in custom.list_namespaced_custom_object("ray.io", "v1", NS, "rayclusters")["items"]
        ]

    assert name not in wait_for(cluster_names, lambda names: name not in names, timeout=60)


def test_failing_script_ends_failed_with_the_reason(custom):
    custom.create_namespaced_custom_object(
        "ray.io", "v1", NS, "rayjobs", rayjob("bad-job", 'python -c "raise SystemExit(3)"')
    )
    done = wait_for(
        lambda: get(custom, "rayjobs", "bad-job"),
        lambda j: (j.get("status") or {}).get("jobDeploymentStatus") in ("Complete", "Failed"),
        timeout=240,
    )
    status = done["status"]
    assert status["jobDeploymentStatus"] == "Failed" and status["jobStatus"] == "FAILED"
    assert status["reason"] == "AppFailed"
    assert "exit code 3" in status["message"] or "failed" in status["message"].lower()
