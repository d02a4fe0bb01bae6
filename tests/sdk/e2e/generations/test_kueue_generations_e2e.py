"""The SDK end to end against a plane serving one Kueue API generation: ``v1beta2`` alone (Kueue 0.20)
and ``v1beta1`` alone (before 0.15). Each test runs once per generation (``kueue_plane``'s params).

A representative path of each area, with real Ray heads: a workspace cluster queued (Kueue's reason and
its position, from that generation's visibility API), admitted once the admin gives the queue quota,
ready, scaled to zero in reaper mode (its Workload deactivated), resumed, down; a job-owned RayJob run
to success (on the ``v1beta1``-only plane: see :data:`ONLY_V1BETA1_JOB`); ``queue_overview``,
``list_local_queues`` and ``will_it_fit`` reading queues written in the generation's own field names.
The rest of the e2e suite runs against the default plane, which serves both.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from generation_helpers import KUEUE, TEAM_QUOTA, Generation

from rayqueue_sdk import (
    Cluster,
    ClusterConfiguration,
    ClusterPhase,
    JobPhase,
    ManagedClusterConfig,
    RayJob,
    list_local_queues,
    queue_overview,
    will_it_fit,
)
from rayqueue_sdk.kube.lookups import find_workload
from rayqueue_sdk.kube.session import KubeSession

pytestmark = [pytest.mark.ray]

SMALL = {
    "head_cpu_requests": 1,
    "head_cpu_limits": 1,
    "head_memory_requests": 2,
    "head_memory_limits": 2,
    "num_workers": 1,
    "worker_cpu_requests": 1,
    "worker_cpu_limits": 1,
    "worker_memory_requests": 2,
    "worker_memory_limits": 2,
}


#: Why the job-owned RayJob runs on the v1beta1-only plane alone.
ONLY_V1BETA1_JOB = (
    "same requests as on a plane serving both (the SDK prefers v1beta2), where tests/sdk/e2e/job runs; "
    "a minute of Ray saved"
)


def small_cluster(name: str, ns: str, client: Any, queue: str, **extra: Any) -> Cluster:
    return Cluster(
        ClusterConfiguration(name=name, namespace=ns, local_queue=queue, **SMALL, **extra), client=client
    )


def wait_for(read: Callable[[], Any], ok: Callable[[Any], bool], timeout: float = 240.0) -> Any:
    """Poll ``read()`` until ``ok(value)`` (the limit only ends a hang; nothing timed is asserted)."""
    deadline = time.monotonic() + timeout
    value = read()
    while not ok(value):
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting; last value: {value!r}")
        time.sleep(0.3)
        value = read()
    return value


def test_the_sdk_discovers_the_served_generation(kueue_plane: Generation, gen_user: Any) -> None:
    assert KubeSession(gen_user).kueue_version() == kueue_plane.version


def test_cluster_queued_admitted_ready_then_scaled_to_zero_resumed_and_down(
    kueue_plane: Generation, gen_ns: str, gen_user: Any
) -> None:
    """Queued in a queue with no quota (Kueue's reason, position 0 from this generation's visibility
    API), admitted once the admin gives the ClusterQueue quota (patched at the served version), ready
    with its worker; then reaper-mode scale to zero (the agent runs as a pod process and finds the served
    Kueue version itself) deactivates its Workload, ``resume()`` requeues it, and ``down()`` takes the
    Workload with it. One Ray head per generation."""
    cluster = small_cluster("gen-ws", gen_ns, gen_user, "parked", priority_class="high")
    cluster.apply()
    try:
        queued = wait_for(
            cluster.status,
            lambda s: s.phase is ClusterPhase.QUEUED and s.position is not None and s.reason is not None,
        )
        assert queued.position == 0 and queued.position_unavailable is None
        assert queued.reason == "Pending" and "couldn't assign flavors to pod set head" in (
            queued.message or ""
        )
        assert queued.priority_class == "high"
        workload_name = queued.workload
        assert workload_name and workload_name.startswith("raycluster-gen-ws-")

        quota = kueue_plane.cluster_queue(f"parked-{gen_ns}", TEAM_QUOTA)["spec"]["resourceGroups"]
        kueue_plane.custom().patch_cluster_custom_object(
            KUEUE,
            kueue_plane.version,
            "clusterqueues",
            f"parked-{gen_ns}",
            {"spec": {"resourceGroups": quota}},
        )
        ready = cluster.wait_ready(timeout=300)
        assert ready.ready and ready.phase is ClusterPhase.READY
        status = cluster.status()
        assert status.workers_ready == status.workers_desired == 1
        assert status.workload == workload_name and status.cluster_queue == f"parked-{gen_ns}"

        admin = kueue_plane.admin()  # reaper mode makes a Deployment: the admin's, as in the reaper tests
        as_admin = Cluster(cluster.config, client=admin)
        report = as_admin.scale_to_zero(
            idle_minutes=0.05, mode="reaper", idle_signal="jobs", polling_seconds=1
        )
        assert "reaper mode" in report
        uid = _uid(kueue_plane, gen_ns, "gen-ws")

        def workload() -> dict[str, Any]:
            found = find_workload(KubeSession(admin), owner_uid=uid, namespace=gen_ns)
            assert found is not None
            return found

        stopped = wait_for(
            workload,
            lambda w: any(
                c["type"] == "Evicted" and c["status"] == "True" and c["reason"] == "Deactivated"
                for c in (w.get("status") or {}).get("conditions", [])
            ),
            timeout=300,
        )
        assert stopped["spec"]["active"] is False
        assert wait_for(cluster.status, lambda s: s.scaled_to_zero).phase is ClusterPhase.DEACTIVATED

        as_admin.resume()
        assert workload()["spec"]["active"] is True
        back = wait_for(cluster.status, lambda s: s.phase is not ClusterPhase.DEACTIVATED)
        assert not back.scaled_to_zero
        as_admin.scale_to_zero(None)
    finally:
        cluster.down()
    assert (
        wait_for(
            lambda: kueue_plane.custom().list_namespaced_custom_object(
                KUEUE, kueue_plane.version, gen_ns, "workloads"
            )["items"],
            lambda items: items == [],
        )
        == []
    )


@pytest.mark.parametrize(
    "kueue_plane",
    [
        # not "v1beta2": ONLY_V1BETA1_JOB says why (not a skip: nothing here is left unrun by accident)
        "v1beta1",
    ],
    indirect=True,
    ids=["kueue-v1beta1-only"],
)
def test_job_owned_rayjob_runs_to_success(kueue_plane: Generation, gen_ns: str, gen_user: Any) -> None:
    """A job-owned RayJob through the queue to success, its logs read after KubeRay deleted its cluster.

    On the ``v1beta1``-only plane alone (about a minute of Ray each): on a ``v1beta2``-only plane the SDK
    sends exactly the requests it sends to a plane serving both, where it prefers ``v1beta2`` and where
    the job tests of ``tests/sdk/e2e/job`` run.
    """
    job = RayJob(
        job_name="gen-job",
        entrypoint="python -c \"print('answer', 6 * 7)\"",
        cluster_config=ManagedClusterConfig(**SMALL),
        local_queue="team-queue",
        priority_class="low",
        namespace=gen_ns,
        client=gen_user,
    )
    job.submit()
    try:
        final = job.wait(timeout=300)
        assert final.phase is JobPhase.SUCCEEDED
        assert "answer 42" in job.logs()
    finally:
        job.delete()


def test_queue_overview_list_local_queues_and_will_it_fit(
    kueue_plane: Generation, gen_ns: str, gen_user: Any
) -> None:
    """Read through whichever generation is served: the cohort (``spec.cohort`` on v1beta1), the
    pending workload's priority class (``spec.priorityClassName`` on v1beta1) and the LocalQueue's
    flavors (``status.flavorUsage`` on v1beta1) come out the same."""
    admin = kueue_plane.admin()
    parked = small_cluster("gen-parked", gen_ns, gen_user, "parked", priority_class="low")
    parked.apply()  # stays queued: no Ray head
    try:
        wait_for(parked.status, lambda s: s.phase is ClusterPhase.QUEUED and s.reason is not None)

        queues = {
            q.name: q
            for q in wait_for(
                lambda: list_local_queues(gen_ns, client=gen_user),
                lambda qs: any(q.name == "parked" and q.pending == 1 for q in qs),
            )
        }
        assert set(queues) == {"team-queue", "parked"}
        assert queues["team-queue"].cluster_queue == f"cq-{gen_ns}"
        assert queues["team-queue"].flavors == ("default-flavor",)

        overview = queue_overview(gen_ns, client=admin)
        team, waiting = overview.queue("team-queue"), overview.queue("parked")
        assert team.cluster_queue is not None and team.cluster_queue.cohort == f"gen-{gen_ns}"
        assert [(w.owner_name, w.priority_class, w.priority, w.position) for w in waiting.pending] == [
            ("gen-parked", "low", 100, 0)
        ]

        fits = will_it_fit(
            ClusterConfiguration(name="probe", **SMALL), "team-queue", namespace=gen_ns, client=admin
        )
        assert fits.fits and fits.cohort == f"gen-{gen_ns}"
    finally:
        parked.down()


def _uid(gen: Generation, ns: str, name: str) -> str:
    from kubernetes import client

    obj = client.CustomObjectsApi(gen.admin()).get_namespaced_custom_object(
        "ray.io", "v1", ns, "rayclusters", name
    )
    return str(obj["metadata"]["uid"])
