"""What the admission estimate costs a queued wait: it is made from the reads the wait already makes.

The wait holds shared watches of the namespace's RayClusters and Workloads and reads the queue position
(Kueue's visibility API) while queued; the estimate and the fair-share sentence come from those and from
one LIST of the namespace's LocalQueues and one of the ClusterQueues per position read. Counted in the
local control plane's request log (the wait's client has a ``User-Agent`` of its own); no controllers,
the test plays Kueue through the API. Counts only: no assertion on a time.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from kubernetes import client as k8s
from sdk_helpers import NS, cond, raycluster, workload

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import ClusterStatus
from rayqueue_sdk.cluster.wait import wait_for_cluster
from rayqueue_sdk.errors import ClusterDeletedError
from rayqueue_sdk.manifests.scaling import IDLE_STATE_ANNOTATION, POLICY_ANNOTATION

KUEUE = ("kueue.x-k8s.io", "v1beta2")
GPU = "nvidia.com/gpu"
QUEUE, CQ = "q-eta", "cq-eta"
VISIBILITY = (
    r"/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/(?P<namespace>[^/]+)"
    r"/localqueues/(?P<name>[^/]+)/pendingworkloads"
)


def _stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture(scope="module", autouse=True)
def queues(plane: LocalControlPlane) -> None:
    """A ClusterQueue of 2 GPUs, all held, its LocalQueue, and a visibility stand-in listing the pending
    Workloads of a LocalQueue in creation order."""

    def pending(match: re.Match[str], query: dict[str, list[str]], user: Any) -> tuple[int, dict[str, Any]]:
        ns, lq = match.group("namespace"), match.group("name")
        items = [
            w
            for w in plane.store.list("workloads.kueue.x-k8s.io", ns)
            if (w.get("spec") or {}).get("queueName") == lq and "admission" not in (w.get("status") or {})
        ]
        items.sort(key=lambda w: str(w["metadata"].get("creationTimestamp")))
        summary = [
            {
                "metadata": {"name": w["metadata"]["name"], "namespace": ns},
                "priority": 0,
                "localQueueName": lq,
                "positionInClusterQueue": i,
                "positionInLocalQueue": i,
            }
            for i, w in enumerate(items)
        ]
        return 200, {"kind": "PendingWorkloadsSummary", "apiVersion": VISIBILITY_API, "items": summary}

    plane.add_route(
        "GET",
        VISIBILITY,
        pending,
        resource="localqueues/pendingworkloads.visibility.kueue.x-k8s.io",
        verb="get",
    )
    custom = k8s.CustomObjectsApi(plane.api_client())
    custom.create_cluster_custom_object(
        *KUEUE,
        "clusterqueues",
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": CQ},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": [GPU],
                        "flavors": [{"name": "gpu", "resources": [{"name": GPU, "nominalQuota": 2}]}],
                    }
                ],
            },
        },
    )
    custom.patch_cluster_custom_object_status(
        *KUEUE,
        "clusterqueues",
        CQ,
        {
            "status": {
                "pendingWorkloads": 1,
                "flavorsUsage": [{"name": "gpu", "resources": [{"name": GPU, "total": "2"}]}],
            }
        },
    )
    custom.create_namespaced_custom_object(
        *KUEUE,
        NS,
        "localqueues",
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": QUEUE, "namespace": NS},
            "spec": {"clusterQueue": CQ},
        },
    )


VISIBILITY_API = "visibility.kueue.x-k8s.io/v1beta2"


def gpu_workload(rc: dict[str, Any]) -> dict[str, Any]:
    body = workload(rc, queue=QUEUE)
    pod = {"spec": {"containers": [{"name": "ray", "resources": {"requests": {GPU: "2"}}}]}}
    body["spec"]["podSets"] = [{"name": "head", "count": 1, "template": pod}]
    return body


def eventually(check: Callable[[], bool], what: str, tries: int = 400) -> None:
    for _ in range(tries):
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"never: {what}")


def test_the_queued_waits_estimate_costs_no_read_beyond_the_positions(plane: LocalControlPlane) -> None:
    custom = k8s.CustomObjectsApi(plane.api_client())
    now = datetime.now(UTC).replace(microsecond=0)
    idle_since = now - timedelta(seconds=10)
    # the holder: a reaper-mode cluster, admitted, idle for 10 s of its 60 s, its agent polling every 5 s
    holder = raycluster("eta-holder", queue=QUEUE, suspend=False)
    holder["metadata"]["annotations"] = {
        POLICY_ANNOTATION: json.dumps(
            {"mode": "reaper", "mechanism": "workload", "idle_minutes": 1, "initial_cooldown_minutes": 0}
        )
    }
    rc = custom.create_namespaced_custom_object("ray.io", "v1", NS, "rayclusters", holder)
    held = gpu_workload(rc)
    state = {
        "idleSince": _stamp(idle_since),
        "admittedAt": _stamp(idle_since),
        "decision": "idle 0.2 of 1 min",
        "pollingSeconds": 5,
    }
    held["metadata"]["annotations"] = {IDLE_STATE_ANNOTATION: json.dumps(state)}
    held = custom.create_namespaced_custom_object(*KUEUE, NS, "workloads", held)
    admitted = cond("Admitted", "True", "Admitted", "The workload is admitted")
    custom.patch_namespaced_custom_object_status(
        *KUEUE,
        NS,
        "workloads",
        held["metadata"]["name"],
        {
            "status": {
                "admission": {
                    "clusterQueue": CQ,
                    "podSetAssignments": [
                        {"name": "head", "count": 1, "flavors": {GPU: "gpu"}, "resourceUsage": {GPU: "2"}}
                    ],
                },
                "conditions": [
                    cond("QuotaReserved", "True", "QuotaReserved", f"Quota reserved in {CQ}"),
                    admitted,
                ],
            }
        },
    )
    # the waiting cluster: 2 GPUs, pending
    rc = custom.create_namespaced_custom_object(
        "ray.io", "v1", NS, "rayclusters", raycluster("eta-wait", queue=QUEUE)
    )
    waiting = custom.create_namespaced_custom_object(*KUEUE, NS, "workloads", gpu_workload(rc))
    custom.patch_namespaced_custom_object_status(
        *KUEUE,
        NS,
        "workloads",
        waiting["metadata"]["name"],
        {"status": {"conditions": [cond("QuotaReserved", "False", "Pending", "insufficient quota")]}},
    )

    api = plane.api_client()
    agent = f"eta-wait-test/{uuid.uuid4().hex[:8]}"
    api.user_agent = agent
    log = plane.api_server.record_requests()
    seen: list[ClusterStatus] = []
    ended: list[BaseException] = []

    def wait() -> None:
        try:
            wait_for_cluster(
                "eta-wait", NS, client=api, timeout=120, position_refresh=0.05, on_progress=seen.append
            )
        except BaseException as err:  # the test ends it by deleting the cluster
            ended.append(err)

    thread = threading.Thread(target=wait, daemon=True)
    thread.start()

    def positions() -> int:
        return sum(1 for p in log.paths(agent) if p.endswith("/pendingworkloads"))

    eventually(lambda: positions() >= 3 and any(s.eta is not None for s in seen), "three position reads")
    custom.delete_namespaced_custom_object("ray.io", "v1", NS, "rayclusters", "eta-wait")
    thread.join(30)
    assert ended and isinstance(ended[0], ClusterDeletedError), ended

    asked = [p for p in log.paths(agent) if not p.startswith("WATCH")]
    reads = positions()
    lq_lists = asked.count(f"GET /apis/kueue.x-k8s.io/v1beta2/namespaces/{NS}/localqueues")
    cq_lists = asked.count("GET /apis/kueue.x-k8s.io/v1beta2/clusterqueues")
    # one LocalQueue LIST and one ClusterQueue LIST per position read; nothing else the watches carry
    assert reads >= 3 and lq_lists == reads and cq_lists == reads, asked
    # the Workloads and RayClusters: the shared watches' one LIST each, before their streams
    for plural in ("workloads", "rayclusters"):
        assert sum(1 for p in asked if p.endswith(f"/{plural}")) == 1, asked
    assert not [p for p in asked if p.endswith(("/rayjobs", "/scaledobjects"))], asked
    assert not [p for p in asked if "/localqueues/" in p and not p.endswith("/pendingworkloads")], asked

    eta = next(s.eta for s in reversed(seen) if s.eta is not None)
    # the reaper's clock and polling interval, from its annotation: release at idleSince + 60 s, acted on
    # by one polling interval (5 s) later, then Kueue's eviction and cycle (10 s)
    assert eta.earliest == idle_since + timedelta(seconds=60)
    assert eta.latest == idle_since + timedelta(seconds=60 + 5 + 10)
    assert "eta-holder" in eta.basis
