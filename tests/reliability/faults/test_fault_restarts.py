"""The control plane restarts (or crashes) in the middle of ``Cluster.apply()``, ``wait_ready()`` and
``down()``: each call either completes after the restart or raises ``ConnectionFailedError``, and
running it again converges: one RayCluster (never two), none after ``down()``, no Workload left over.

The plane is the real ``rayqueue local up`` in a subprocess, started again on the same state
directory and port. The fault is placed from the client side, just before the SDK sends the request
it is about: either the plane is killed first (the request is refused, as by a server that is
restarting), or it is frozen (``SIGSTOP``) so that the request sits unanswered in its socket and then
killed (the request was sent and no answer ever comes).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import pytest
from kubernetes import client as k8s
from reliability_planes import PlaneProcess, eventually, on_request, queue_objects, server_side_apply

from rayqueue_sdk import Cluster, ClusterConfiguration, ClusterPhase, ConnectionFailedError
from rayqueue_sdk.manifests.labels import JOB_UID_LABEL


def _config(ns: str) -> ClusterConfiguration:
    return ClusterConfiguration(name="ws", namespace=ns, local_queue="team", num_workers=1)


def _listed(
    plane: PlaneProcess, ns: str, plural: str, group: str = "ray.io", version: str = "v1"
) -> list[Any]:
    api = plane.kube_client()
    try:
        items = k8s.CustomObjectsApi(api).list_namespaced_custom_object(group, version, ns, plural)["items"]
    finally:
        api.close()
    return list(items)


def _workloads(plane: PlaneProcess, ns: str) -> list[dict[str, Any]]:
    return _listed(plane, ns, "workloads", "kueue.x-k8s.io", "v1beta2")


def _crash(plane: PlaneProcess, how: str, restarts: list[threading.Thread]) -> None:
    """Kill the plane now (``refused``) or freeze it and kill it a moment later (``unanswered``);
    it starts again in a thread, kept in ``restarts``."""
    if how == "unanswered":
        restarts.append(plane.freeze_then_crash())
        return
    plane.kill()
    thread = threading.Thread(target=plane.start, daemon=True)
    thread.start()
    restarts.append(thread)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["refused", "unanswered"])
def test_restart_in_the_middle_of_apply_leaves_exactly_one_cluster(
    crash_plane: PlaneProcess, crash_ns: str, how: str
) -> None:
    api = crash_plane.sdk_client()
    restarts: list[threading.Thread] = []
    fired = on_request(
        api, "PATCH", rf"/namespaces/{crash_ns}/rayclusters/ws", lambda: _crash(crash_plane, how, restarts)
    )
    cluster = Cluster(_config(crash_ns), client=api)
    try:
        first: dict[str, Any] | None = cluster.apply()
    except ConnectionFailedError:
        first = None  # the retries ran out before the plane was back: allowed, and said so
    assert fired.is_set()
    restarts[0].join(timeout=180)
    again = cluster.apply()  # idempotent: converges whatever happened to the first call
    if first is not None:
        assert again["metadata"]["uid"] == first["metadata"]["uid"]
    clusters = _listed(crash_plane, crash_ns, "rayclusters")
    assert [c["metadata"]["name"] for c in clusters] == ["ws"]
    uid = clusters[0]["metadata"]["uid"]
    workloads = eventually(lambda: _workloads(crash_plane, crash_ns), what="the Workload")
    assert [w["metadata"]["labels"][JOB_UID_LABEL] for w in workloads] == [uid]
    api.close()


def test_restart_while_waiting_for_admission_misses_no_transition(
    crash_plane: PlaneProcess, crash_ns: str
) -> None:
    api = crash_plane.sdk_client()
    cluster = Cluster(_config(crash_ns), client=api)
    cluster.apply()
    eventually(lambda: cluster.status().phase is ClusterPhase.QUEUED, what="queued")
    restarted = threading.Event()

    def crash_then_admit() -> None:
        eventually(lambda: watches.is_set(), what="the watches")
        crash_plane.kill()  # kill -9 while both watches stream
        crash_plane.start()
        admin = crash_plane.kube_client()
        try:  # the quota arrives only after the restart: the wait must see it through new streams
            server_side_apply(admin, *queue_objects(crash_ns, "team", cpu=16))
        finally:
            admin.close()
        restarted.set()

    watches = on_request(api, "GET", r"/workloads\?.*watch=(?i:true)", lambda: None)
    thread = threading.Thread(target=crash_then_admit, daemon=True)
    thread.start()
    try:
        status = cluster.wait_ready(timeout=240, dashboard_check=False)
    except ConnectionFailedError:  # allowed only if the plane stayed away past the retry budget
        thread.join(timeout=180)
        status = cluster.wait_ready(timeout=240, dashboard_check=False)
    thread.join(timeout=180)
    assert restarted.is_set()
    assert status.ready and status.phase is ClusterPhase.READY
    clusters = _listed(crash_plane, crash_ns, "rayclusters")
    assert [c["metadata"]["name"] for c in clusters] == ["ws"]
    workloads = _workloads(crash_plane, crash_ns)
    assert len(workloads) == 1 and workloads[0]["status"]["admission"]["clusterQueue"] == f"cq-{crash_ns}"
    api.close()


@pytest.mark.parametrize("how", ["refused", "unanswered"])
def test_restart_in_the_middle_of_down_leaves_no_cluster_and_no_workload(
    crash_plane: PlaneProcess, crash_ns: str, how: str
) -> None:
    api = crash_plane.sdk_client()
    cluster = Cluster(_config(crash_ns), client=api)
    cluster.apply()
    eventually(lambda: _workloads(crash_plane, crash_ns), what="the Workload")
    restarts: list[threading.Thread] = []
    fired = on_request(
        api, "DELETE", rf"/namespaces/{crash_ns}/rayclusters/ws", lambda: _crash(crash_plane, how, restarts)
    )
    # ConnectionFailedError: the retries ran out before the plane was back: allowed, and said so.
    with contextlib.suppress(ConnectionFailedError):
        cluster.down()
    assert fired.is_set()
    restarts[0].join(timeout=180)
    cluster.down()  # idempotent: True if the first never reached the store, else False
    assert cluster.down() is False
    assert _listed(crash_plane, crash_ns, "rayclusters") == []
    # Kueue's finalizer on the Workload is removed by the restarted plane: nothing is orphaned.
    eventually(lambda: _workloads(crash_plane, crash_ns) == [], what="the Workload's removal")
    api.close()
