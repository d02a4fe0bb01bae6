"""429/5xx storms, answers lost after the write was made, and dropped watches, through the SDK.

A storm the SDK can ride out (30 % of requests answered 429 with ``Retry-After``, or every request
answered 503 for two seconds) ends with ``apply()``, ``list_clusters()`` and ``down()`` done and no
duplicate; a storm that does not end is the typed error and the CLI's documented exit code (the
table of :mod:`rayqueue_sdk.cli.exit_codes`). A watch the server drops, ends, or answers with
``410 Gone`` is resumed or relisted: no transition and no object is missed.
"""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
from typing import Any

import pytest
from reliability_planes import eventually, queue_objects

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import (
    ApiError,
    Cluster,
    ClusterConfiguration,
    ClusterPhase,
    ConnectionFailedError,
    list_clusters,
)
from rayqueue_sdk.cli.exit_codes import code_for
from rayqueue_sdk.kube.kinds import RAYCLUSTERS
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.kube.watch import Watcher, WatchEvent
from rayqueue_sdk.manifests.labels import MANAGED_BY_LABEL, MANAGED_BY_VALUE


def _parked(name: str, ns: str) -> ClusterConfiguration:
    return ClusterConfiguration(name=name, namespace=ns, local_queue="parked", num_workers=1)


def _stored(plane: LocalControlPlane, ns: str) -> list[str]:
    return sorted(o["metadata"]["name"] for o in plane.store.list("rayclusters.ray.io", ns))


def _rayclusters_path(ns: str, name: str = "") -> str:
    return rf"/apis/ray\.io/v1/namespaces/{ns}/rayclusters" + (f"/{name}$" if name else "$")


def test_429_storm_and_lost_answers_end_with_one_cluster_then_none(
    fault_plane: LocalControlPlane, fault_ns: str, fault_sdk: Any
) -> None:
    storm = fault_plane.faults.inject(status=429, retry_after=1, times=None, rate=0.3)
    # The apply and the delete are made, and their answers lost: the SDK must retry without a duplicate.
    lost_apply = fault_plane.faults.inject("PATCH", _rayclusters_path(fault_ns, "ws"), drop_response=True)
    lost_delete = fault_plane.faults.inject("DELETE", _rayclusters_path(fault_ns, "ws"), drop_response=True)
    cluster = Cluster(_parked("ws", fault_ns), client=fault_sdk)
    first = cluster.apply()
    again = cluster.apply()
    assert again["metadata"]["uid"] == first["metadata"]["uid"]
    assert [s.name for s in list_clusters(fault_ns, fault_sdk)] == ["ws"]
    assert _stored(fault_plane, fault_ns) == ["ws"]
    assert cluster.down() is True  # the lost DELETE was made: its retry's 404 says so, not "nothing deleted"
    assert cluster.down() is False
    assert [s.name for s in list_clusters(fault_ns, fault_sdk)] == []
    assert _stored(fault_plane, fault_ns) == []
    assert storm.hits >= 1 and lost_apply.hits == 1 and lost_delete.hits == 1


def test_503_storm_of_two_seconds_is_ridden_out(
    fault_plane: LocalControlPlane, fault_ns: str, fault_sdk: Any
) -> None:
    storm = fault_plane.faults.inject(status=503, retry_after=1, times=None, seconds=2)
    cluster = Cluster(_parked("ws", fault_ns), client=fault_sdk)
    cluster.apply()
    assert [s.name for s in list_clusters(fault_ns, fault_sdk)] == ["ws"]
    assert cluster.down() is True
    assert _stored(fault_plane, fault_ns) == [] and storm.hits >= 1


def _cli(plane: LocalControlPlane, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rayqueue_sdk.cli.main", *args, "--kubeconfig", str(plane.kubeconfig_path)],
        text=True,
        capture_output=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    ("fault", "error", "code"),
    [
        ({"status": 503}, ApiError, 1),  # the server answers, always 503: an API error
        ({"drop": True}, ConnectionFailedError, 7),  # no answer ever: the server cannot be reached
    ],
)
@pytest.mark.slow
def test_a_storm_that_does_not_end_is_the_typed_error_and_its_exit_code(
    fault_plane: LocalControlPlane,
    fault_ns: str,
    fault_sdk: Any,
    fault: dict[str, Any],
    error: type,
    code: int,
) -> None:
    Cluster(_parked("ws", fault_ns), client=fault_sdk).apply()
    storm = fault_plane.faults.inject(path=rf"/apis/ray\.io/v1/namespaces/{fault_ns}/", times=None, **fault)
    with pytest.raises(error):
        Cluster(_parked("other", fault_ns), client=fault_sdk).apply()
    out = _cli(fault_plane, "cluster", "status", "ws", "-n", fault_ns)
    assert out.returncode == code == code_for(error), out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    fault_plane.faults.clear()
    assert storm.hits >= 2  # the SDK retried before giving up
    assert _stored(fault_plane, fault_ns) == ["ws"]  # nothing created during the storm
    assert _cli(fault_plane, "cluster", "status", "ws", "-n", fault_ns).returncode == 0


def test_wait_ready_survives_dropped_watches_and_a_410(
    fault_plane: LocalControlPlane, fault_ns: str, fault_sdk: Any
) -> None:
    fault_plane.apply(queue_objects(fault_ns, "team", cpu=0))
    cluster = Cluster(
        ClusterConfiguration(name="ws", namespace=fault_ns, local_queue="team", num_workers=1),
        client=fault_sdk,
    )
    cluster.apply()
    eventually(lambda: cluster.status().phase is ClusterPhase.QUEUED, what="queued")
    faults: list[Any] = []

    def drop_watches_then_admit() -> None:
        eventually(lambda: fault_plane.faults.open_watches >= 2, what="both watches")
        workloads = rf"/apis/kueue\.x-k8s\.io/v1beta2/namespaces/{fault_ns}/workloads$"
        faults.append(fault_plane.faults.inject("GET", _rayclusters_path(fault_ns), drop=True))
        faults.append(fault_plane.faults.inject("GET", workloads, status=410))  # too old: relist
        fault_plane.faults.end_watches()  # both streams end; their reconnects meet the faults above
        fault_plane.apply(queue_objects(fault_ns, "team", cpu=16))  # the quota arrives meanwhile

    thread = threading.Thread(target=drop_watches_then_admit, daemon=True)
    thread.start()
    status = cluster.wait_ready(timeout=240, dashboard_check=False)
    thread.join(timeout=60)
    assert status.ready and status.phase is ClusterPhase.READY
    assert [f.hits for f in faults] == [1, 1]
    assert _stored(fault_plane, fault_ns) == ["ws"]


def test_watcher_loses_no_object_across_ended_streams_drops_and_410(
    fault_plane: LocalControlPlane, fault_ns: str, fault_sdk: Any
) -> None:
    watcher = Watcher(
        KubeSession(fault_sdk),
        RAYCLUSTERS,
        namespace=fault_ns,
        label_selector=f"{MANAGED_BY_LABEL}={MANAGED_BY_VALUE}",
    )
    events: queue.Queue[WatchEvent] = queue.Queue()
    watcher.run_into(events)
    seen: dict[str, str] = {}  # name -> uid, as the events tell it

    def absorb() -> None:
        while True:
            try:
                event = events.get_nowait()
            except queue.Empty:
                return
            assert event.type != "ERROR", event.error
            if event.type == "SYNC":
                seen.clear()
                seen.update({o["metadata"]["name"]: o["metadata"]["uid"] for o in event.objects})
            elif event.object is not None:
                meta = event.object["metadata"]
                if event.type == "DELETED":
                    seen.pop(meta["name"], None)
                else:
                    seen[meta["name"]] = meta["uid"]

    expected: dict[str, str] = {}
    path = _rayclusters_path(fault_ns)
    try:
        eventually(lambda: fault_plane.faults.open_watches >= 1 and watcher.relists == 1, what="the watch")
        for i in range(6):
            stored = Cluster(_parked(f"c{i}", fault_ns), client=fault_sdk).apply()
            expected[f"c{i}"] = stored["metadata"]["uid"]
            if i == 1:
                fault_plane.faults.end_watches()  # a clean end: resume from the last resourceVersion
            elif i == 2:
                fault_plane.faults.inject("GET", path, drop=True)  # the reconnect is dropped
                fault_plane.faults.end_watches()
            elif i == 3:
                fault_plane.faults.inject("GET", path, status=410)  # the reconnect is too old: relist
                fault_plane.faults.end_watches()
                Cluster(_parked("c0", fault_ns), client=fault_sdk).down()  # gone while nobody watched
                del expected["c0"]

        def caught_up() -> bool:
            absorb()
            return seen == expected

        eventually(caught_up, what=f"the watcher to see {sorted(expected)} (it saw {sorted(seen)})")
        assert watcher.relists >= 2  # the 410 was answered by a new listing
    finally:
        watcher.stop()
