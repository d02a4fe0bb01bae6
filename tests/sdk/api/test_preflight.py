"""Cluster.apply()'s preflight against the local control plane: how many requests, in how many round trips,
and the same errors as before (the checks are now one fetch plus a pure decision).

Before the preflight, apply() resolved its client three times and made its reads one after another:
GET LocalQueue, GET WorkloadPriorityClass, GET RayCluster, then the PATCH (4 requests, 4 round trips;
a missing queue cost a GET and then a LIST). Now the reads go out together: 4 requests, 2 round trips.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from kubernetes import client as k8s

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import Cluster, ClusterConfiguration
from rayqueue_sdk.cluster.preflight import Facts, decide
from rayqueue_sdk.errors import ConflictError, PriorityClassNotFoundError, QueueNotFoundError
from rayqueue_sdk.queues.local_queues import queue_info

NS = "preflight"


def _lq(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"clusterQueue": "cq"},
    }


@pytest.fixture(scope="module", autouse=True)
def _objects(plane: LocalControlPlane) -> None:
    plane.apply(
        [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
            _lq("team-q"),
            _lq("default"),
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "WorkloadPriorityClass",
                "metadata": {"name": "pf-priority"},
                "value": 7,
            },
        ]
    )


def _count(plane: LocalControlPlane, action: Any) -> int:
    """The HTTP requests the API server received while ``action`` ran."""
    counter = plane.faults.inject(path=r"/", delay=1e-6, times=None)  # matches every request, changes nothing
    try:
        action()
    finally:
        plane.faults.clear()
    return int(counter.hits)


def _config(name: str, **extra: Any) -> ClusterConfiguration:
    return ClusterConfiguration(name=name, namespace=NS, **extra)


def test_apply_sends_its_reads_together(plane: LocalControlPlane) -> None:
    api = plane.api_client()
    cluster = Cluster(_config("ws", local_queue="team-q", priority_class="pf-priority"), client=api)
    # A fresh client first discovers Kueue's API version (once per client): 1 + 4 requests.
    assert _count(plane, cluster.apply) == 5
    # LIST LocalQueues, GET WorkloadPriorityClass, GET RayCluster (foreign check), PATCH.
    assert _count(plane, cluster.apply) == 4
    # force=True skips the foreign check; no priority class skips its GET; the default queue is found
    # in the same LIST.
    assert _count(plane, lambda: cluster.apply(force=True)) == 3
    default = Cluster(_config("ws-default"), client=api)
    assert _count(plane, default.apply) == 3
    assert default.to_dict()["metadata"]["labels"].get("kueue.x-k8s.io/queue-name") is None  # not configured
    got = k8s.CustomObjectsApi(api).get_namespaced_custom_object(
        "ray.io", "v1", NS, "rayclusters", "ws-default"
    )
    assert got["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "default"


def test_the_preflight_reads_overlap_in_one_round_trip(plane: LocalControlPlane) -> None:
    api = plane.api_client()
    cluster = Cluster(_config("ws-timed", local_queue="team-q", priority_class="pf-priority"), client=api)
    cluster.apply()  # warm the client's discovery cache
    spans: list[tuple[str, float, float]] = []
    lock = threading.Lock()
    real = api.call_api

    def call_api(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        start = time.monotonic()
        try:
            return real(method, url, *args, **kwargs)
        finally:
            with lock:
                spans.append((method, start, time.monotonic()))

    api.call_api = call_api
    plane.faults.inject(path=r"/", delay=0.3, times=None)  # every request takes >= 0.3 s
    try:
        cluster.apply()
    finally:
        plane.faults.clear()
        api.call_api = real
    reads = [s for s in spans if s[0] == "GET"]
    writes = [s for s in spans if s[0] == "PATCH"]
    assert len(reads) == 3 and len(writes) == 1
    # The three reads were in flight at the same time (one round trip), and all ended before the write.
    assert max(start for _, start, _ in reads) < min(end for _, _, end in reads)
    assert max(end for _, _, end in reads) <= writes[0][1]


def test_a_missing_queue_is_the_same_error_in_one_round_trip(plane: LocalControlPlane) -> None:
    cluster = Cluster(_config("ws-nope", local_queue="gpu-queue"), client=plane.api_client())
    with pytest.raises(QueueNotFoundError) as info:
        cluster.apply()
    assert info.value.available == ["default", "team-q"]
    assert "LocalQueue 'gpu-queue' does not exist in namespace 'preflight'" in str(info.value)
    assert "Omit local_queue to use the namespace's default queue 'default'." in str(info.value)
    # The LIST that checked the queue also lists them for the message (was a GET, then a LIST).
    assert _count(plane, lambda: pytest.raises(QueueNotFoundError, cluster.up)) == 1


def test_a_missing_priority_class_lists_the_classes(plane: LocalControlPlane) -> None:
    cluster = Cluster(
        _config("ws-prio", local_queue="team-q", priority_class="urgent"), client=plane.api_client()
    )
    with pytest.raises(PriorityClassNotFoundError) as info:
        cluster.apply()
    assert "pf-priority (7)" in info.value.available


def test_decide_is_pure_and_keeps_the_order_of_the_checks() -> None:
    queues = (queue_info({"metadata": {"name": "team-q", "namespace": NS}}),)
    manifest = {"metadata": {"name": "ws", "labels": {}}, "spec": {}}
    foreign = {"metadata": {"name": "ws", "namespace": NS, "labels": {}}}
    facts = Facts(
        NS, queues=queues, priority_class_missing=True, priority_class_choices=("a (1)",), existing=foreign
    )
    with pytest.raises(QueueNotFoundError):  # the queue first
        decide(manifest, facts, local_queue="nope", priority_class="x", refuse_foreign="force")
    with pytest.raises(PriorityClassNotFoundError):  # then the priority class
        decide(manifest, facts, local_queue="team-q", priority_class="x", refuse_foreign="force")
    with pytest.raises(ConflictError, match="force=True would"):  # then the foreign object
        decide(manifest, Facts(NS, queues=queues, existing=foreign), refuse_foreign="force=True would")
    out = decide(manifest, Facts(NS, queue_listing="forbidden"), local_queue="q")  # left to Kueue
    assert out["metadata"]["namespace"] == NS and "namespace" not in manifest["metadata"]
    with pytest.raises(QueueNotFoundError, match="is Kueue installed"):
        decide(manifest, Facts(NS, queue_listing="absent"), local_queue="q")
