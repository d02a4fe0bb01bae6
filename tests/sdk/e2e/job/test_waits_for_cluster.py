"""A job submitted to a cluster that is still queued or starting waits for it (CodeFlare's notebook 4 flow).

``cluster.apply()`` then ``RayJob(cluster_name=...).submit()`` right away: the cluster sits in a Kueue
queue with no free quota (ClusterQueue ``cq-jobwait``, nominal quota 0 until a test frees it). The job's
``submit()`` returns at once, its ``status()`` says it waits for its cluster in Kueue's words with the
queue position, and once the quota is freed the cluster starts (a real Ray head) and the job runs and
succeeds. The wait is bounded (``AdmissionTimeout``, nothing submitted), a cluster deleted meanwhile is a
``ClusterDeletedError``, a stop before the submission submits nothing, and a cluster that does not exist
is still a ``ClusterNotFoundError`` at once.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from rayqueue_local import LocalControlPlane
from rayqueue_sdk import (
    AdmissionTimeout,
    Cluster,
    ClusterConfiguration,
    ClusterDeletedError,
    ClusterNotFoundError,
    JobFailedError,
    JobPhase,
    RayJob,
    RayJobStatus,
)
from rayqueue_sdk.admission.cluster import Verdict
from rayqueue_sdk.manifests import kueue as k

NS = "your-namespace"
QUEUE = "jobwait-queue"
CLUSTER_QUEUE = "cq-jobwait"


def _quota(cpus: int) -> list[dict[str, Any]]:
    return [k.resource_group(k.flavor_quotas("default-flavor", {"cpu": cpus, "memory": f"{8 * cpus}Gi"}))]


def _set_quota(plane: LocalControlPlane, cpus: int) -> None:
    k8s.CustomObjectsApi(plane.api_client()).patch_cluster_custom_object(
        "kueue.x-k8s.io", "v1beta2", "clusterqueues", CLUSTER_QUEUE,
        {"spec": {"resourceGroups": _quota(cpus)}}, _content_type="application/merge-patch+json",
    )  # fmt: skip


@pytest.fixture(scope="module")
def full_queue(ray_plane: LocalControlPlane) -> Iterator[str]:
    """A LocalQueue whose ClusterQueue has no quota: a cluster applied there stays queued. Removed after
    the module (other tests list the namespace's queues)."""
    ray_plane.apply(
        [k.cluster_queue(CLUSTER_QUEUE, resource_groups=_quota(0)), k.local_queue(QUEUE, NS, CLUSTER_QUEUE)]
    )
    yield QUEUE
    api = k8s.CustomObjectsApi(ray_plane.api_client())
    api.delete_namespaced_custom_object("kueue.x-k8s.io", "v1beta2", NS, "localqueues", QUEUE)
    api.delete_cluster_custom_object("kueue.x-k8s.io", "v1beta2", "clusterqueues", CLUSTER_QUEUE)


def _kueue_said(job: RayJob) -> RayJobStatus:
    """The job's status once its cluster's Workload exists and Kueue said why it waits, with the position
    (right after apply(), Kueue may not have created the Workload yet: the status says that first)."""
    deadline = time.monotonic() + 120
    while True:
        st = job.status()
        if "insufficient quota for cpu" in st.explanation and st.position is not None:
            return st
        assert time.monotonic() < deadline, f"Kueue's reason never showed: {st}"
        time.sleep(0.2)


@pytest.fixture
def queued(full_queue: str, request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """A small cluster applied to the full queue (the notebook's ``cluster.apply()``), taken down after."""
    name = "jw-" + request.node.name.removeprefix("test_")[:20].replace("_", "-").rstrip("-")
    config = ClusterConfiguration(
        name=name, namespace=NS, num_workers=0, head_cpu_requests=1, head_cpu_limits=1,
        head_memory_requests=2, head_memory_limits=2, local_queue=full_queue,
    )  # fmt: skip
    cluster = Cluster(config)
    cluster.apply()
    yield cluster
    cluster.down()


def _job(cluster: Cluster, name: str, entrypoint: str) -> RayJob:
    return RayJob(job_name=name, cluster_name=cluster.name, namespace=NS, entrypoint=entrypoint)


def test_notebook4_job_waits_for_its_queued_cluster_then_succeeds(
    ray_plane: LocalControlPlane, queued: Cluster
) -> None:
    # The peer's notebook 4, cell by cell: apply (the fixture), submit, status.
    rayjob = _job(queued, "sdk-test-job", "python -c 'print(\"hello from a job that waited\")'")
    submission_id = rayjob.submit()
    st = rayjob.status()
    assert st.phase is JobPhase.QUEUED and st.verdict is Verdict.WAIT and not st.done, st
    assert st.explanation.startswith(f"waiting for RayCluster {queued.name!r}"), st.explanation
    st = _kueue_said(rayjob)  # Kueue's own words, and the position
    assert st.phase is JobPhase.QUEUED and st.reason == "Pending" and st.position == 0, st
    assert st.job_id == submission_id == rayjob.job_id
    assert st.cluster_name == queued.name and not st.owns_cluster
    assert rayjob.logs() == ""  # nothing has run yet

    # A sibling that gives up before the quota comes: it must never reach Ray, even once the cluster runs.
    impatient = _job(queued, "impatient-job", "python -c 'print(\"must not run\")'")
    impatient.submit(cluster_timeout=1, show=False)
    with pytest.raises(AdmissionTimeout):
        impatient.wait(timeout=120)

    _set_quota(ray_plane, 8)  # the quota comes free: Kueue admits the cluster, its Ray head starts
    try:
        seen: list[JobPhase] = []
        final = rayjob.wait(timeout=300, on_progress=lambda s: seen.append(s.phase))
        assert final.phase is JobPhase.SUCCEEDED and final.job_id == submission_id
        assert "hello from a job that waited" in rayjob.logs()
        assert seen[0] in (JobPhase.QUEUED, JobPhase.STARTING) and JobPhase.SUCCEEDED in seen

        # Ray on that cluster knows the job that waited and never heard of the one that gave up.
        known = {info.submission_id for info in queued.job_client.list_jobs()}
        assert submission_id in known and impatient.job_id not in known
        assert impatient.status().phase is JobPhase.FAILED
    finally:
        _set_quota(ray_plane, 0)


def test_cluster_timeout_is_an_admission_timeout_and_submits_nothing(queued: Cluster) -> None:
    job = _job(queued, "timed-out-job", "python -c 'print(1)'")
    job.submit(cluster_timeout=15, show=False)
    _kueue_said(job)  # it waits in the queue, Kueue says why ...
    with pytest.raises(AdmissionTimeout) as info:  # ... until the cluster_timeout
        job.wait(timeout=120)
    err = info.value
    assert isinstance(err, TimeoutError) and err.phase == "queued" and err.position == 0
    assert "insufficient quota for cpu" in (err.reason or ""), err
    st = job.status()
    assert st.phase is JobPhase.FAILED and st.done and st.verdict is Verdict.FAIL
    assert st.explanation.startswith("not submitted: ") and st.reason == "AdmissionTimeout", st
    assert job.logs() == "" and job.stop() is False  # nothing to stop: it never reached Ray

    # A script or CI step that wants the job on Ray before it goes on: submit() itself waits and raises.
    blocking = _job(queued, "blocking-job", "python -c 'print(1)'")
    with pytest.raises(AdmissionTimeout) as info:
        blocking.submit(cluster_timeout=1, wait_for_cluster=True, show=False)
    assert info.value.phase == "queued" and blocking.job_id is None


def test_cluster_deleted_while_the_job_waits_is_cluster_deleted_error(queued: Cluster) -> None:
    job = _job(queued, "orphan-job", "python -c 'print(1)'")
    job.submit(cluster_timeout=300, show=False)
    assert job.status().phase is JobPhase.QUEUED
    queued.down()
    with pytest.raises(ClusterDeletedError):
        job.wait(timeout=120)
    st = job.status()
    assert st.phase is JobPhase.DELETED and st.explanation.startswith("not submitted: "), st


def test_stop_before_the_cluster_is_ready_submits_nothing(queued: Cluster) -> None:
    job = _job(queued, "stopped-job", "python -c 'print(1)'")
    job.submit(show=False)
    assert job.stop() is True
    st = job.status()
    assert st.phase is JobPhase.STOPPED and st.done, st
    with pytest.raises(JobFailedError):
        job.wait(timeout=60)
    assert job.stop() is False and job.delete() is False


def test_a_cluster_that_does_not_exist_is_cluster_not_found_at_once(full_queue: str) -> None:
    job = RayJob(job_name="nowhere", cluster_name="no-such-cluster", namespace=NS, entrypoint="python -V")
    with pytest.raises(ClusterNotFoundError):
        job.submit()
    assert job.job_id is None


def test_a_script_that_ends_first_waits_for_the_submission_at_exit(
    ray_plane: LocalControlPlane, queued: Cluster
) -> None:
    """A script that submits to a queued cluster and ends does not drop its job silently: the interpreter's
    exit says why it waits and waits (here until the cluster_timeout, as the quota never comes)."""
    script = textwrap.dedent(
        f"""
        from rayqueue_sdk import RayJob
        from rayqueue_sdk.kube.client import build_api_client, set_current_client

        set_current_client(build_api_client({ray_plane.server!r}, token={ray_plane.token!r},
                                            ca_cert_path={str(ray_plane.ca_cert_path)!r}))
        job = RayJob(job_name="script-job", cluster_name={queued.name!r}, namespace={NS!r},
                     entrypoint="python -c 'print(1)'")
        print("submitted", job.submit(cluster_timeout=3), flush=True)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("submitted script-job-")
    said = f"{NS}/script-job waits for RayCluster {queued.name!r}"
    assert said in done.stderr and "Ctrl-C gives up and submits nothing" in done.stderr, done.stderr


def test_cli_submit_to_a_queued_cluster_waits_and_exits_4_when_it_stays_queued(
    ray_plane: LocalControlPlane, queued: Cluster
) -> None:
    """``rayqueue job submit --cluster`` returns once the job is on Ray; a cluster that stays queued past
    ``--cluster-timeout`` exits 4 (timed out) with Kueue's words, instead of 0 with a job never submitted."""
    from test_cli import rayqueue  # the CLI-in-a-subprocess helper of this directory

    code, out, err = rayqueue(
        ray_plane, "submit", "ci-queued", "-n", NS, "--cluster", queued.name, "--cluster-timeout", "5",
        "-e", "python -c 'print(1)'", "--json",
    )  # fmt: skip
    assert code == 4, (out, err)
    assert out["error"] == "AdmissionTimeout", out
    assert f"{NS}/{queued.name}: queued in LocalQueue {QUEUE!r}" in err, err  # the wait's first reading


def test_a_cluster_scaled_to_zero_is_scaled_to_zero_error_at_once(queued: Cluster, logged_in: Any) -> None:
    """A cluster its idle policy gave back to the queue (reaper mode: the Workload deactivated) will not come
    back by itself: submit() says so at once (call cluster.resume()) instead of waiting for it."""
    import json

    from rayqueue_sdk import ScaledToZeroError
    from rayqueue_sdk.kube.kinds import RAYCLUSTERS
    from rayqueue_sdk.kube.lookups import find_workload
    from rayqueue_sdk.kube.session import KubeSession
    from rayqueue_sdk.manifests.scaling import POLICY_ANNOTATION

    api = k8s.CustomObjectsApi(logged_in)
    policy = {"mode": "reaper", "mechanism": "workload", "idle_minutes": 60, "idle_signal": "gpu"}
    api.patch_namespaced_custom_object(
        "ray.io", "v1", NS, "rayclusters", queued.name,
        {"metadata": {"annotations": {POLICY_ANNOTATION: json.dumps(policy)}}},
        _content_type="application/merge-patch+json",
    )  # fmt: skip
    uid = KubeSession(logged_in).get(RAYCLUSTERS, name=queued.name, namespace=NS)["metadata"]["uid"]
    deadline = time.monotonic() + 120
    while (workload := find_workload(KubeSession(logged_in), owner_uid=uid, namespace=NS)) is None:
        assert time.monotonic() < deadline, "Kueue never created the Workload"
        time.sleep(0.2)
    api.patch_namespaced_custom_object(
        "kueue.x-k8s.io", "v1beta2", NS, "workloads", workload["metadata"]["name"],
        {"spec": {"active": False}}, _content_type="application/merge-patch+json",
    )  # fmt: skip
    job = _job(queued, "after-idle-job", "python -c 'print(1)'")
    while queued.status().phase.value != "deactivated":
        assert time.monotonic() < deadline, f"never deactivated: {queued.status()}"
        time.sleep(0.2)
    with pytest.raises(ScaledToZeroError, match="call cluster.resume"):
        job.submit()
    assert job.job_id is None
