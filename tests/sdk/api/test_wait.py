"""The wait driver against the local control plane: the test plays Kueue and KubeRay through the API.

Each scenario is driven from ``on_progress``: when the SDK reports a phase, the test makes the next
change (an admission, an eviction, a deletion, a fault). Nothing here sleeps or times anything.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client as k8s
from sdk_helpers import NS, cond, raycluster, workload

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import ClusterPhase, ClusterStatus
from rayqueue_sdk.cluster.observe import list_clusters, observe_cluster
from rayqueue_sdk.cluster.wait import wait_for_cluster
from rayqueue_sdk.errors import (
    AdmissionTimeout,
    AuthenticationError,
    ClusterDeletedError,
    ClusterNotFoundError,
    PreemptedError,
)

KUEUE = ("kueue.x-k8s.io", "v1beta2")
FLAVOR_MSG = (
    "couldn't assign flavors to pod set worker-group: insufficient unused quota for cpu in flavor "
    "default-flavor, 2 more needed"
)
PREEMPT_MSG = (
    "Preempted to accommodate a workload (UID: 1111, JobUID: 2222) due to reclamation within the cohort; "
    "preemptor path: /all-gpus/cq-production; preemptee path: /all-gpus/cq-development"
)
VISIBILITY = (
    r"/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/(?P<namespace>[^/]+)"
    r"/localqueues/(?P<name>[^/]+)/pendingworkloads"
)


def _pending_workloads(plane: LocalControlPlane) -> Callable[..., tuple[int, dict[str, Any]]]:
    """The test's stand-in for Kueue's visibility server: pending Workloads of a LocalQueue, in order."""

    def handler(match: re.Match[str], query: dict[str, list[str]], user: Any) -> tuple[int, dict[str, Any]]:
        ns, lq = match.group("namespace"), match.group("name")
        pending = [
            w
            for w in plane.store.list("workloads.kueue.x-k8s.io", ns)
            if (w.get("spec") or {}).get("queueName") == lq
            and not any(
                c.get("type") in ("QuotaReserved", "Admitted") and c.get("status") == "True"
                for c in (w.get("status") or {}).get("conditions") or []
            )
        ]
        pending.sort(key=lambda w: (w["metadata"].get("creationTimestamp", ""), w["metadata"]["name"]))
        items = [
            {
                "metadata": {"name": w["metadata"]["name"], "namespace": ns},
                "priority": 0,
                "localQueueName": lq,
                "positionInClusterQueue": i,
                "positionInLocalQueue": i,
            }
            for i, w in enumerate(pending)
        ]
        return 200, {
            "kind": "PendingWorkloadsSummary",
            "apiVersion": "visibility.kueue.x-k8s.io/v1beta2",
            "metadata": {},
            "items": items,
        }

    return handler


@pytest.fixture(scope="module", autouse=True)
def visibility(plane: LocalControlPlane) -> None:
    plane.add_route(
        "GET",
        VISIBILITY,
        _pending_workloads(plane),
        resource="localqueues/pendingworkloads.visibility.kueue.x-k8s.io",
        verb="get",
    )


class World:
    """Kueue and KubeRay, played by the test through the API as the admin."""

    def __init__(self, plane: LocalControlPlane, name: str, queue: str | None = None) -> None:
        self.plane = plane
        self.api = k8s.CustomObjectsApi(plane.api_client())
        self.name = name
        self.queue = queue or f"q-{name}"  # one LocalQueue per scenario: positions do not interfere
        self.cluster = self.api.create_namespaced_custom_object(
            "ray.io", "v1", NS, "rayclusters", raycluster(name, queue=self.queue)
        )
        self.workload_name = ""

    def create_workload(self, *conditions: dict[str, Any], name: str | None = None) -> None:
        body = workload(self.cluster, queue=self.queue)
        if name:
            body["metadata"]["name"] = name
        wl = self.api.create_namespaced_custom_object(*KUEUE, NS, "workloads", body)
        self.workload_name = wl["metadata"]["name"]
        if conditions:
            self.workload_status(*conditions)

    def workload_status(self, *conditions: dict[str, Any], admission: bool = False) -> None:
        status: dict[str, Any] = {"conditions": list(conditions)}
        if admission:
            status["admission"] = {
                "clusterQueue": "cq-dev",
                "podSetAssignments": [{"name": "head", "count": 1}, {"name": "worker-group", "count": 2}],
            }
        self.api.patch_namespaced_custom_object_status(
            *KUEUE, NS, "workloads", self.workload_name, {"status": status}
        )

    def pend(self) -> None:
        self.workload_status(cond("QuotaReserved", "False", "Pending", FLAVOR_MSG))

    def admit(self) -> None:
        self.workload_status(
            cond("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue cq-dev"),
            cond("Admitted", "True", "Admitted", "The workload is admitted"),
            admission=True,
        )

    def unsuspend(self) -> None:
        self.api.patch_namespaced_custom_object(
            "ray.io", "v1", NS, "rayclusters", self.name, {"spec": {"suspend": False}}
        )

    def ready(self) -> None:
        self.api.patch_namespaced_custom_object_status(
            "ray.io",
            "v1",
            NS,
            "rayclusters",
            self.name,
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

    def preempt(self) -> None:
        self.workload_status(
            cond("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue cq-dev"),
            cond("Admitted", "True", "Admitted", "The workload is admitted"),
            cond("Evicted", "True", "Preempted", PREEMPT_MSG),
            cond("Preempted", "True", "InCohortReclamation", PREEMPT_MSG),
            admission=True,
        )

    def delete(self) -> None:
        self.api.delete_namespaced_custom_object("ray.io", "v1", NS, "rayclusters", self.name)


def driver(
    steps: dict[ClusterPhase, Callable[[], None]],
) -> tuple[list[ClusterStatus], Callable[[ClusterStatus], None]]:
    """An on_progress callback that records statuses and runs each phase's step once."""
    seen: list[ClusterStatus] = []
    done: set[ClusterPhase] = set()

    def on_progress(status: ClusterStatus) -> None:
        seen.append(status)
        step = steps.get(status.phase)
        if step is not None and status.phase not in done:
            done.add(status.phase)
            step()

    return seen, on_progress


def test_queued_with_message_and_position_gives_admission_timeout(plane: LocalControlPlane) -> None:
    ahead = World(plane, "ahead", queue="team-q")
    ahead.create_workload(
        cond("QuotaReserved", "False", "Pending", FLAVOR_MSG), name="raycluster-ahead-aaaaa"
    )
    w = World(plane, "queued", queue="team-q")
    w.create_workload(cond("QuotaReserved", "False", "Pending", FLAVOR_MSG), name="raycluster-queued-bbbbb")
    seen, on_progress = driver({})
    with pytest.raises(AdmissionTimeout) as info:
        wait_for_cluster(
            "queued", NS, client=plane.api_client(), queue_timeout=1.0, timeout=60, on_progress=on_progress
        )
    err = info.value
    assert (err.phase, err.position) == ("queued", 1)
    assert FLAVOR_MSG in (err.reason or "") and "Pending" in (err.reason or "")
    assert "position 1" in str(err) and isinstance(err, TimeoutError)
    last = seen[-1]
    assert (last.phase, last.position, last.queue, last.message) == (
        ClusterPhase.QUEUED,
        1,
        "team-q",
        FLAVOR_MSG,
    )


def test_admitted_then_ready(plane: LocalControlPlane) -> None:
    w = World(plane, "happy")
    w.create_workload(cond("QuotaReserved", "False", "Pending", FLAVOR_MSG))
    seen, on_progress = driver(
        {
            ClusterPhase.QUEUED: w.admit,
            ClusterPhase.ADMITTED: w.unsuspend,
            ClusterPhase.STARTING: w.ready,
        }
    )
    status = wait_for_cluster("happy", NS, client=plane.api_client(), timeout=60, on_progress=on_progress)
    assert status.ready and status.phase is ClusterPhase.READY
    assert (status.workers_ready, status.workers_desired, status.cluster_queue) == (2, 2, "cq-dev")
    assert status.workload == w.workload_name
    # The wait's last status is the read path's (outside a pod: the addresses KubeRay reports, none here).
    read = observe_cluster("happy", NS, plane.api_client())
    assert (status.cluster_uri, status.dashboard_url) == (read.cluster_uri, read.dashboard_url)
    phases = [s.phase for s in seen]
    assert phases == [ClusterPhase.QUEUED, ClusterPhase.ADMITTED, ClusterPhase.STARTING, ClusterPhase.READY]
    assert seen[0].position == 0 and seen[0].message == FLAVOR_MSG


def test_workload_created_after_the_wait_started(plane: LocalControlPlane) -> None:
    w = World(plane, "late")
    seen, on_progress = driver(
        {
            ClusterPhase.QUEUED: lambda: (w.create_workload(), w.admit(), w.unsuspend(), w.ready()),
        }
    )
    status = wait_for_cluster("late", NS, client=plane.api_client(), timeout=60, on_progress=on_progress)
    assert status.ready
    assert "create the Workload" in seen[0].explanation


def test_eviction_raises_preempted_error(plane: LocalControlPlane) -> None:
    w = World(plane, "victim")
    w.create_workload()
    w.admit()
    w.unsuspend()
    _, on_progress = driver({ClusterPhase.STARTING: w.preempt})
    with pytest.raises(PreemptedError) as info:
        wait_for_cluster("victim", NS, client=plane.api_client(), timeout=60, on_progress=on_progress)
    assert info.value.reason == "InCohortReclamation"
    assert info.value.message == PREEMPT_MSG


def test_preempted_before_the_wait_and_requeued_waits_for_readmission(plane: LocalControlPlane) -> None:
    w = World(plane, "comeback")
    w.create_workload()
    evicted = [
        cond("Evicted", "True", "Preempted", PREEMPT_MSG),
        cond("Preempted", "True", "InCohortReclamation", PREEMPT_MSG),
        cond("Requeued", "True", "Preempted", PREEMPT_MSG),
    ]
    w.workload_status(*evicted, cond("QuotaReserved", "False", "Pending", FLAVOR_MSG))
    assert observe_cluster("comeback", NS, plane.api_client()).phase is ClusterPhase.PREEMPTED

    def readmit() -> None:  # Kueue resets Evicted/Preempted when it admits the workload again
        w.workload_status(
            cond("Evicted", "False", "QuotaReserved", "Previously: " + PREEMPT_MSG),
            cond("Preempted", "False", "QuotaReserved", "Previously: " + PREEMPT_MSG),
            cond("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue cq-dev"),
            cond("Admitted", "True", "Admitted", "The workload is admitted"),
            admission=True,
        )

    seen, on_progress = driver(
        {ClusterPhase.QUEUED: readmit, ClusterPhase.ADMITTED: w.unsuspend, ClusterPhase.STARTING: w.ready}
    )
    status = wait_for_cluster("comeback", NS, client=plane.api_client(), timeout=60, on_progress=on_progress)
    assert status.ready
    assert "requeued after being preempted" in seen[0].explanation and seen[0].message == FLAVOR_MSG


def test_preemption_during_the_wait_with_immediate_requeue_fails(plane: LocalControlPlane) -> None:
    w = World(plane, "requeued-victim")
    w.create_workload(cond("QuotaReserved", "False", "Pending", FLAVOR_MSG))

    def preempt_and_requeue() -> None:
        w.workload_status(
            cond("Evicted", "True", "Preempted", PREEMPT_MSG),
            cond("Preempted", "True", "InCohortReclamation", PREEMPT_MSG),
            cond("Requeued", "True", "Preempted", PREEMPT_MSG),
            cond("QuotaReserved", "False", "Pending", FLAVOR_MSG),
        )

    _, on_progress = driver({ClusterPhase.QUEUED: preempt_and_requeue})
    with pytest.raises(PreemptedError) as info:
        wait_for_cluster(
            "requeued-victim", NS, client=plane.api_client(), timeout=60, on_progress=on_progress
        )
    assert info.value.reason == "InCohortReclamation"


def test_deactivation_raises_preempted_error(plane: LocalControlPlane) -> None:
    w = World(plane, "paused")
    w.create_workload(cond("QuotaReserved", "False", "Pending", FLAVOR_MSG))

    def deactivate() -> None:
        w.api.patch_namespaced_custom_object(
            *KUEUE, NS, "workloads", w.workload_name, {"spec": {"active": False}}
        )

    _, on_progress = driver({ClusterPhase.QUEUED: deactivate})
    with pytest.raises(PreemptedError) as info:
        wait_for_cluster("paused", NS, client=plane.api_client(), timeout=60, on_progress=on_progress)
    assert info.value.reason == "Deactivated"


def test_deletion_raises_cluster_deleted_error(plane: LocalControlPlane) -> None:
    w = World(plane, "doomed")
    w.create_workload(cond("QuotaReserved", "False", "Pending", FLAVOR_MSG))
    _, on_progress = driver({ClusterPhase.QUEUED: w.delete})
    with pytest.raises(ClusterDeletedError):
        wait_for_cluster("doomed", NS, client=plane.api_client(), timeout=60, on_progress=on_progress)


def test_missing_cluster_lists_the_clusters(plane: LocalControlPlane) -> None:
    World(plane, "present")
    with pytest.raises(ClusterNotFoundError) as info:
        wait_for_cluster("absent", NS, client=plane.api_client(), timeout=60)
    assert "present" in info.value.available


def test_faults_are_ridden_out(plane: LocalControlPlane, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="rayqueue_sdk")
    w = World(plane, "bumpy")
    w.create_workload(cond("QuotaReserved", "False", "Pending", FLAVOR_MSG))
    faults: list[Any] = []

    def storm() -> None:
        rc_path = rf"/apis/ray\.io/v1/namespaces/{NS}/rayclusters"
        wl_path = rf"/apis/kueue\.x-k8s\.io/v1beta2/namespaces/{NS}/workloads"
        faults.append(plane.faults.inject(method="GET", path=rc_path, status=410, times=1))
        faults.append(plane.faults.inject(method="GET", path=rc_path, status=503, times=2))
        faults.append(plane.faults.inject(method="GET", path=wl_path, status=429, retry_after=1, times=1))
        faults.append(plane.faults.inject(method="GET", path=wl_path, drop=True, times=1))
        # both of the SDK's streams are cut (the shared watches may still be opening the second one)
        cut = plane.faults.end_watches()
        for _ in range(50):
            if cut >= 2:
                break
            time.sleep(0.1)
            cut += plane.faults.end_watches()
        assert cut >= 2
        w.admit()
        w.unsuspend()
        w.ready()

    _, on_progress = driver({ClusterPhase.QUEUED: storm})
    status = wait_for_cluster("bumpy", NS, client=plane.api_client(), timeout=60, on_progress=on_progress)
    assert status.ready
    assert [f.hits for f in faults] == [1, 2, 1, 1]
    assert any("410 Gone" in r.getMessage() for r in caplog.records)


def test_user_wait_without_visibility_rights_says_so_once(
    plane: LocalControlPlane, user_token: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="rayqueue_sdk")
    w = World(plane, "userwait")
    w.create_workload(cond("QuotaReserved", "False", "Pending", FLAVOR_MSG))
    with pytest.raises(AdmissionTimeout) as info:
        wait_for_cluster(
            "userwait", NS, client=plane.api_client(user_token), queue_timeout=1.0, position_refresh=0.1
        )
    assert info.value.position is None and FLAVOR_MSG in (info.value.reason or "")
    said = [r for r in caplog.records if "queue position unavailable" in r.getMessage()]
    assert len(said) == 1 and "pendingworkloads" in said[0].getMessage()


def test_expired_token_during_the_wait(plane: LocalControlPlane) -> None:
    token = plane.add_user("bob", [NS])
    w = World(plane, "expiring")
    w.create_workload(cond("QuotaReserved", "False", "Pending", FLAVOR_MSG))

    def expire() -> None:
        plane.auth.add_user("bob", [NS])  # a new token replaces bob's old one
        plane.faults.end_watches()

    _, on_progress = driver({ClusterPhase.QUEUED: expire})
    with pytest.raises(AuthenticationError):
        wait_for_cluster("expiring", NS, client=plane.api_client(token), timeout=60, on_progress=on_progress)


def _counting(api: Any) -> list[str]:
    calls: list[str] = []
    real = api.call_api

    def call_api(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(f"{method} {url.split('?')[0]}")
        return real(method, url, *args, **kwargs)

    api.call_api = call_api
    return calls


def test_observe_one_cluster(plane: LocalControlPlane) -> None:
    w = World(plane, "single")
    w.create_workload(cond("QuotaReserved", "False", "Pending", FLAVOR_MSG))
    st = observe_cluster("single", NS, plane.api_client())
    assert (st.phase, st.position, st.queue, st.message) == (ClusterPhase.QUEUED, 0, "q-single", FLAVOR_MSG)
    with pytest.raises(ClusterNotFoundError):
        observe_cluster("nope", NS, plane.api_client())


def test_list_clusters_in_a_constant_number_of_calls(plane: LocalControlPlane) -> None:
    from kubernetes import client as k8s_client

    ns = "team-list"
    plane.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    custom = k8s_client.CustomObjectsApi(plane.api_client())
    api = plane.api_client()
    calls = _counting(api)

    def add(name: str, *, admitted: bool) -> None:
        body = raycluster(name, queue="shared")
        body["metadata"]["namespace"] = ns
        rc = custom.create_namespaced_custom_object("ray.io", "v1", ns, "rayclusters", body)
        wl = workload(rc, queue="shared")
        wl["metadata"]["name"] = f"raycluster-{name}"
        custom.create_namespaced_custom_object(*KUEUE, ns, "workloads", wl)
        conds = (
            [cond("QuotaReserved", "True", "QuotaReserved"), cond("Admitted", "True", "Admitted")]
            if admitted
            else [cond("QuotaReserved", "False", "Pending", FLAVOR_MSG)]
        )
        custom.patch_namespaced_custom_object_status(
            *KUEUE, ns, "workloads", f"raycluster-{name}", {"status": {"conditions": conds}}
        )

    add("a-running", admitted=True)
    add("b-waiting", admitted=False)
    add("c-waiting", admitted=False)
    list_clusters(ns, api)  # warm the per-client discovery caches (Kueue version, exposure APIs)
    calls.clear()
    first = {s.name: s for s in list_clusters(ns, api)}
    small = len(calls)
    for i in range(12):
        add(f"d-more-{i:02d}", admitted=i % 2 == 0)
    calls.clear()
    many = {s.name: s for s in list_clusters(ns, api)}
    assert len(calls) == small  # 15 clusters cost what 3 did: LIST, LIST, one visibility read
    assert first["a-running"].phase is ClusterPhase.ADMITTED and first["a-running"].position is None
    assert (first["b-waiting"].position, first["c-waiting"].position) == (0, 1)
    assert len(many) == 15 and many["c-waiting"].phase is ClusterPhase.QUEUED


def test_unreadable_workloads_are_said_and_the_cluster_is_followed(plane: LocalControlPlane) -> None:
    w = World(plane, "opaque")
    w.create_workload(cond("QuotaReserved", "False", "Pending", FLAVOR_MSG))
    path = rf"/apis/kueue\.x-k8s\.io/v1beta2/namespaces/{NS}/workloads"
    fault = plane.faults.inject(
        method="GET", path=path, status=403, times=None, message="no workloads for you"
    )
    try:
        seen, on_progress = driver({ClusterPhase.QUEUED: lambda: (w.admit(), w.unsuspend())})
        status = None
        with pytest.raises(AdmissionTimeout) as info:
            status = wait_for_cluster(
                "opaque",
                NS,
                client=plane.api_client(),
                timeout=60,
                queue_timeout=30,
                on_progress=_stop_when_starting(on_progress),
            )
    finally:
        plane.faults.clear()
    assert status is None and fault.hits >= 1
    assert "cannot be read" in seen[0].explanation and "no workloads for you" in seen[0].explanation
    assert seen[-1].phase is ClusterPhase.STARTING  # followed the RayCluster once Kueue unsuspended it
    assert info.value.phase == "starting"


def _stop_when_starting(inner: Callable[[ClusterStatus], None]) -> Callable[[ClusterStatus], None]:
    """Give up (as a timeout would) once the cluster is seen starting: KubeRay is not played here."""

    def on_progress(status: ClusterStatus) -> None:
        inner(status)
        if status.phase is ClusterPhase.STARTING:
            raise AdmissionTimeout(status.name, 0, phase=str(status.phase))

    return on_progress
