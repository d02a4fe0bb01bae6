"""The wait against the local Kueue emulation (seed 000's two clusters): queued with Kueue's own
message and position 0, AdmissionTimeout when asked to give up, admitted once the first cluster is
taken down. KubeRay is played by the test (it writes the ready conditions once Kueue unsuspends).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s
from sdk_helpers import NS, cond, raycluster

from rayqueue_local.controllers.kueue.controller import KueueController
from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import ClusterPhase, ClusterStatus, TokenAuthentication, get_cluster
from rayqueue_sdk.cluster.observe import observe_cluster
from rayqueue_sdk.cluster.wait import wait_for_cluster
from rayqueue_sdk.errors import AdmissionTimeout, PreemptedError

SETUP = f"""
apiVersion: v1
kind: Namespace
metadata: {{name: {NS}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: default-flavor}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq-dev}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default-flavor
      resources:
      - {{name: cpu, nominalQuota: 3}}
      - {{name: memory, nominalQuota: 3Gi}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: team-q, namespace: {NS}}}
spec: {{clusterQueue: cq-dev}}
"""


@pytest.fixture(scope="module")
def kueue_plane(crd_dir: Path) -> Iterator[LocalControlPlane]:
    controllers: list[Any] = []
    cp = LocalControlPlane(crd_dir=crd_dir, controllers=controllers)
    controllers.append(KueueController(cp))  # Kueue only; the test plays KubeRay
    with cp:
        cp.apply(SETUP)
        yield cp


def _cluster(name: str) -> dict[str, Any]:
    body = raycluster(name, queue="team-q", suspend=False)  # Kueue's webhook suspends it
    spec = body["spec"]
    for template in (spec["headGroupSpec"]["template"], spec["workerGroupSpecs"][0]["template"]):
        template["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1", "memory": "1Gi"}}
    return body


def test_second_cluster_waits_with_kueues_words_then_runs(kueue_plane: LocalControlPlane) -> None:
    token = kueue_plane.add_user("carol", [NS])
    auth = TokenAuthentication(token, kueue_plane.server, ca_cert_path=str(kueue_plane.ca_cert_path))
    auth.login()
    user = k8s.CustomObjectsApi(auth.api_client())
    admin = k8s.CustomObjectsApi(kueue_plane.api_client())

    def kuberay_ready(name: str) -> None:
        admin.patch_namespaced_custom_object_status(
            "ray.io",
            "v1",
            NS,
            "rayclusters",
            name,
            {
                "status": {
                    "readyWorkerReplicas": 2,
                    "desiredWorkerReplicas": 2,
                    "conditions": [
                        cond("HeadPodReady", "True", "HeadPodRunningAndReady"),
                        cond("RayClusterProvisioned", "True", "AllPodRunningAndReadyFirstTime"),
                    ],
                }
            },
        )

    def on_first(status: ClusterStatus) -> None:
        if status.phase is ClusterPhase.STARTING:
            kuberay_ready("first")

    user.create_namespaced_custom_object("ray.io", "v1", NS, "rayclusters", _cluster("first"))
    assert wait_for_cluster("first", NS, timeout=60, on_progress=on_first).ready

    user.create_namespaced_custom_object("ray.io", "v1", NS, "rayclusters", _cluster("second"))
    with pytest.raises(AdmissionTimeout) as info:
        wait_for_cluster("second", NS, queue_timeout=1.0, timeout=60)
    err = info.value
    assert err.phase == "queued" and err.position == 0
    assert "insufficient" in (err.reason or "") and "(Pending)" in (err.reason or "")
    status = observe_cluster("second", NS)
    assert (status.phase, status.position, status.reason) == (ClusterPhase.QUEUED, 0, "Pending")
    assert status.message and status.message.startswith("couldn't assign flavors to pod set")

    seen: list[ClusterPhase] = []

    def on_second(status: ClusterStatus) -> None:
        seen.append(status.phase)
        if status.phase is ClusterPhase.QUEUED and len(seen) == 1:
            user.delete_namespaced_custom_object(
                "ray.io", "v1", NS, "rayclusters", "first"
            )  # seed 000: down()
        if status.phase is ClusterPhase.STARTING:
            kuberay_ready("second")

    final = wait_for_cluster("second", NS, timeout=60, on_progress=on_second)
    assert final.ready and final.cluster_queue == "cq-dev"
    assert seen[0] is ClusterPhase.QUEUED and seen[-1] is ClusterPhase.READY


COHORT = f"""
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {{name: prod-priority}}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {{name: dev-priority}}
value: 100
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq-production}}
spec:
  cohortName: all-cpus
  namespaceSelector: {{}}
  preemption: {{reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default-flavor
      resources:
      - {{name: cpu, nominalQuota: 3}}
      - {{name: memory, nominalQuota: 3Gi}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq-development}}
spec:
  cohortName: all-cpus
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default-flavor
      resources:
      - {{name: cpu, nominalQuota: 0}}
      - {{name: memory, nominalQuota: 0}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: prod-q, namespace: {NS}}}
spec: {{clusterQueue: cq-production}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: dev-q, namespace: {NS}}}
spec: {{clusterQueue: cq-development}}
"""


def test_preemption_by_a_higher_priority_cluster_is_seen_with_kueues_reason(
    kueue_plane: LocalControlPlane,
) -> None:
    kueue_plane.apply(COHORT)
    admin = k8s.CustomObjectsApi(kueue_plane.api_client())

    def labelled(name: str, queue: str, priority: str) -> dict[str, Any]:
        body = _cluster(name)
        body["metadata"]["labels"] = {
            "kueue.x-k8s.io/queue-name": queue,
            "kueue.x-k8s.io/priority-class": priority,
        }
        return body

    def on_progress(status: ClusterStatus) -> None:
        if status.phase is ClusterPhase.STARTING:  # dev runs on borrowed quota: production reclaims it
            admin.create_namespaced_custom_object(
                "ray.io", "v1", NS, "rayclusters", labelled("prod", "prod-q", "prod-priority")
            )

    admin.create_namespaced_custom_object(
        "ray.io", "v1", NS, "rayclusters", labelled("dev", "dev-q", "dev-priority")
    )
    with pytest.raises(PreemptedError) as info:
        wait_for_cluster("dev", NS, client=kueue_plane.api_client(), timeout=60, on_progress=on_progress)
    assert info.value.reason in ("InCohortReclamation", "InCohortReclaimWhileBorrowing")
    assert info.value.message.startswith("Preempted to accommodate a workload")

    status = observe_cluster("dev", NS, kueue_plane.api_client())  # seed 004, as status() shows it
    assert (status.phase, status.priority_class, status.position) == (
        ClusterPhase.PREEMPTED,
        "dev-priority",
        0,
    )
    assert status.reason in ("InCohortReclamation", "InCohortReclaimWhileBorrowing")
    assert "Kueue has requeued it" in status.explanation


RESUME_QUEUE = f"""
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq-resume}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default-flavor
      resources:
      - {{name: cpu, nominalQuota: 3}}
      - {{name: memory, nominalQuota: 3Gi}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: resume-q, namespace: {NS}}}
spec: {{clusterQueue: cq-resume}}
"""


def _poll(probe: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    """``probe()`` once it is truthy; fail with the last value after ``timeout`` seconds."""
    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}; last value: {last!r}")


def test_deactivate_resume_wait_ready_reads_queued_not_deactivated(kueue_plane: LocalControlPlane) -> None:
    """``deactivate(); resume(); wait_ready()``: after the resume the Deactivated eviction Kueue keeps
    until it admits the workload again is history, for a running cluster and a queued one alike."""
    kueue_plane.apply(RESUME_QUEUE)
    api = kueue_plane.api_client()
    admin = k8s.CustomObjectsApi(api)

    def create(name: str) -> str:
        body = _cluster(name)
        body["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "resume-q"}
        return str(
            admin.create_namespaced_custom_object("ray.io", "v1", NS, "rayclusters", body)["metadata"]["uid"]
        )

    def kuberay_ready(status: ClusterStatus) -> None:
        if status.phase is ClusterPhase.STARTING:
            admin.patch_namespaced_custom_object_status(
                "ray.io",
                "v1",
                NS,
                "rayclusters",
                status.name,
                {
                    "status": {
                        "conditions": [
                            cond("HeadPodReady", "True", "HeadPodRunningAndReady"),
                            cond("RayClusterProvisioned", "True", "AllPodRunningAndReadyFirstTime"),
                        ]
                    }
                },
            )

    def workload(uid: str) -> dict[str, Any]:
        items = admin.list_namespaced_custom_object(
            "kueue.x-k8s.io", "v1beta2", NS, "workloads", label_selector=f"kueue.x-k8s.io/job-uid={uid}"
        )["items"]
        return items[0] if items else {}

    def requeued(uid: str) -> tuple[str, str]:
        found = next(
            (c for c in workload(uid).get("status", {}).get("conditions", []) if c["type"] == "Requeued"), {}
        )
        return found.get("status", ""), found.get("reason", "")

    held_uid = create("held")
    assert wait_for_cluster("held", NS, client=api, timeout=60, on_progress=kuberay_ready).ready

    # A queued cluster (the quota is held), deactivated before it was ever admitted, then resumed.
    waiting_uid = create("waiting")
    _poll(lambda: observe_cluster("waiting", NS, api).reason == "Pending", "the second cluster to queue")
    waiting = get_cluster("waiting", NS, client=api)
    waiting.deactivate()
    _poll(lambda: requeued(waiting_uid) == ("False", "Deactivated"), "Kueue's deactivation")
    assert waiting.status().phase is ClusterPhase.DEACTIVATED
    with pytest.raises(PreemptedError) as info:
        waiting.wait_ready(timeout=30, dashboard_check=False, show=False)
    assert info.value.reason == "Deactivated"
    waiting.resume()
    assert waiting.status().phase is ClusterPhase.QUEUED  # before and after Kueue's Reactivated
    _poll(lambda: requeued(waiting_uid) == ("True", "Reactivated"), "Kueue's Reactivated")
    status = waiting.status()
    assert status.phase is ClusterPhase.QUEUED and status.position == 0
    assert "reactivated, waiting for quota" in status.explanation
    with pytest.raises(AdmissionTimeout) as timed_out:  # queued, not a PreemptedError
        waiting.wait_ready(queue_timeout=1.0, timeout=30, dashboard_check=False, show=False)
    assert timed_out.value.phase == "queued"

    # The running cluster: deactivated (quota released, the waiting one gets it), then resumed.
    held = get_cluster("held", NS, client=api)
    held.deactivate()
    _poll(lambda: requeued(held_uid) == ("False", "Deactivated"), "the running cluster's deactivation")
    assert wait_for_cluster("waiting", NS, client=api, timeout=60, on_progress=kuberay_ready).ready
    held.resume()
    assert held.status().phase is ClusterPhase.QUEUED
    admin.delete_namespaced_custom_object("ray.io", "v1", NS, "rayclusters", "waiting")
    final = held.wait_ready(timeout=60, dashboard_check=False, show=False)
    assert final.ready and final.phase is ClusterPhase.READY
    evicted = next(c for c in workload(held_uid)["status"]["conditions"] if c["type"] == "Evicted")
    assert (evicted["status"], evicted["message"]) == ("False", "Previously: The workload is deactivated")
