"""What an open notebook costs the API server: the session's shared watches (kube/informer.py), counted.

Against the local control plane over HTTPS with the real kubernetes client; the plane's request log counts
the requests and the open watch streams of the notebook's client (its own ``User-Agent``). Counts only: no
assertion on a time.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from kubernetes import client as k8s
from sdk_helpers import NS, OTHER_NS, cond, raycluster, workload

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import ClusterPhase, ClusterStatus
from rayqueue_sdk.cluster.live import follow_live
from rayqueue_sdk.cluster.observe import observe_cluster
from rayqueue_sdk.cluster.wait import wait_for_cluster
from rayqueue_sdk.errors import ClusterDeletedError
from rayqueue_sdk.kube.informer import open_informers, read_shared
from rayqueue_sdk.kube.kinds import RAYCLUSTERS
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.kube.watch import Watcher, WatchEvent

KUEUE = ("kueue.x-k8s.io", "v1beta2")


def eventually(check: Callable[[], bool], what: str, tries: int = 200) -> None:
    for _ in range(tries):
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"never: {what}")


def notebook_client(plane: LocalControlPlane) -> tuple[Any, str]:
    """A client with a User-Agent of its own, so that the log counts only this notebook."""
    agent = f"notebook-test/{uuid.uuid4().hex[:8]}"
    api = plane.api_client()
    api.user_agent = agent
    return api, agent


def queued_cluster(custom: Any, name: str) -> str:
    """A RayCluster with a pending Workload (as Kueue leaves it, short of quota); its Workload's name."""
    rc = custom.create_namespaced_custom_object("ray.io", "v1", NS, "rayclusters", raycluster(name))
    wl = custom.create_namespaced_custom_object(*KUEUE, NS, "workloads", workload(rc))
    custom.patch_namespaced_custom_object_status(
        *KUEUE,
        NS,
        "workloads",
        wl["metadata"]["name"],
        {"status": {"conditions": [cond("QuotaReserved", "False", "Pending", "insufficient quota")]}},
    )
    return str(wl["metadata"]["name"])


def admit(custom: Any, workload_name: str) -> None:
    custom.patch_namespaced_custom_object_status(
        *KUEUE,
        NS,
        "workloads",
        workload_name,
        {
            "status": {
                "admission": {"clusterQueue": "cq", "podSetAssignments": [{"name": "head", "count": 1}]},
                "conditions": [
                    cond("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue cq"),
                    cond("Admitted", "True", "Admitted", "The workload is admitted"),
                ],
            }
        },
    )


def test_many_displays_share_two_watches_and_poll_nothing(plane: LocalControlPlane) -> None:
    custom = k8s.CustomObjectsApi(plane.api_client())
    names = [f"nb-card-{i}" for i in range(5)]
    workloads = {name: queued_cluster(custom, name) for name in [*names, "nb-wait-0", "nb-wait-1"]}
    api, agent = notebook_client(plane)
    log = plane.api_server.record_requests()

    cards: dict[str, list[ClusterStatus]] = {}
    follows = []
    for name in names:
        shown: list[ClusterStatus] = []
        cards[name] = shown
        follows.append(
            follow_live(
                KubeSession(api), shown.append, name=name, namespace=NS, last=observe_cluster(name, NS, api)
            )
        )
    waits: dict[str, BaseException | None] = {}
    reported: dict[str, list[ClusterPhase]] = {"nb-wait-0": [], "nb-wait-1": []}

    def wait(name: str) -> None:
        try:
            wait_for_cluster(
                name, NS, client=api, timeout=120, on_progress=lambda st: reported[name].append(st.phase)
            )
        except BaseException as err:  # the test ends it by deleting the cluster
            waits[name] = err

    threads = [threading.Thread(target=wait, args=(n,), daemon=True) for n in reported]
    for t in threads:
        t.start()
    eventually(lambda: all(ClusterPhase.QUEUED in r for r in reported.values()), "both waits say queued")
    eventually(lambda: all(shown for shown in cards.values()), "every card had its first status")

    # Idle: nothing changes, nothing is asked. Then Kueue admits two clusters: the cards and a wait follow
    # through the shared streams, still without a request of their own.
    quiet_from = time.monotonic()
    admit(custom, workloads["nb-card-0"])
    admit(custom, workloads["nb-wait-0"])
    eventually(lambda: cards["nb-card-0"][-1].phase is ClusterPhase.ADMITTED, "card 0 follows its cluster")
    eventually(lambda: ClusterPhase.ADMITTED in reported["nb-wait-0"], "the wait follows its cluster")
    assert cards["nb-card-1"][-1].phase is ClusterPhase.QUEUED
    asked = [p for p in log.paths(agent, since=quiet_from) if not p.startswith("WATCH")]
    assert asked == [], asked
    # Seven displays, two watches: RayClusters and Workloads of the namespace, once each.
    assert log.peak_watches(agent) == 2
    assert sorted(p.split("/")[-1] for p in log.paths(agent) if p.startswith("WATCH")) == [
        "rayclusters",
        "workloads",
    ]

    for name in reported:
        custom.delete_namespaced_custom_object("ray.io", "v1", NS, "rayclusters", name)
    for t in threads:
        t.join(30)
    assert all(isinstance(waits.get(n), ClusterDeletedError) for n in reported), waits
    assert log.open_watches(agent) == 2  # the cards still read them
    for follow in follows:
        follow.close()
    eventually(lambda: log.open_watches(agent) == 0, "the last reader gone, the watches end")
    assert not [i for i in open_informers() if i.api is api]


def test_a_410_gone_relists_and_the_readers_go_on(plane: LocalControlPlane) -> None:
    custom = k8s.CustomObjectsApi(plane.api_client())
    queued_cluster(custom, "nb-gone")
    api, agent = notebook_client(plane)
    log = plane.api_server.record_requests()
    events: list[WatchEvent] = []
    sub = read_shared(
        KubeSession(api),
        RAYCLUSTERS,
        namespace=NS,
        reader=events.append,
        match=lambda o: o["metadata"]["name"] == "nb-gone",
    )
    eventually(lambda: any(e.type == "SYNC" for e in events), "the first listing")
    assert [len(e.objects) for e in events if e.type == "SYNC"] == [1]

    path = rf"/apis/ray\.io/v1/namespaces/{NS}/rayclusters"
    gone = plane.faults.inject(method="GET", path=path, status=410, times=1)
    lists_before = sum(1 for p in log.paths(agent) if p == f"GET /apis/ray.io/v1/namespaces/{NS}/rayclusters")
    plane.faults.end_watches()  # the stream ends; its resume is answered 410 Gone
    eventually(lambda: gone.hits == 1, "the resume met 410 Gone")
    eventually(lambda: sum(e.type == "SYNC" for e in events) == 2, "a second listing after 410 Gone")
    lists_after = sum(1 for p in log.paths(agent) if p == f"GET /apis/ray.io/v1/namespaces/{NS}/rayclusters")
    assert lists_after == lists_before + 1
    custom.patch_namespaced_custom_object(
        "ray.io", "v1", NS, "rayclusters", "nb-gone", {"spec": {"suspend": False}}
    )
    eventually(
        lambda: any(
            e.type == "MODIFIED" and e.object and e.object["spec"]["suspend"] is False for e in events
        ),
        "the watch resumed after the re-list",
    )
    assert sub.informer.get("nb-gone") is not None
    sub.close()
    eventually(lambda: log.open_watches(agent) == 0, "the watch ends with its reader")


def test_the_watch_stops_when_the_last_reader_goes_and_restarts_for_a_new_one(
    plane: LocalControlPlane,
) -> None:
    api, agent = notebook_client(plane)
    log = plane.api_server.record_requests()
    first = read_shared(KubeSession(api), RAYCLUSTERS, namespace=NS, reader=lambda e: None)
    second = read_shared(KubeSession(api), RAYCLUSTERS, namespace=NS, reader=lambda e: None)
    assert first.informer is second.informer and first.informer.readers == 2
    eventually(lambda: log.open_watches(agent) == 1, "one watch for two readers")
    first.close()
    first.close()  # idempotent
    assert second.informer.running and log.open_watches(agent) == 1
    second.close()
    eventually(lambda: log.open_watches(agent) == 0, "no reader left: no watch")
    assert not second.informer.running
    third = read_shared(KubeSession(api), RAYCLUSTERS, namespace=NS, reader=lambda e: None)
    eventually(lambda: log.open_watches(agent) == 1, "a new reader starts it again")
    assert log.peak_watches(agent) == 1
    third.close()
    eventually(lambda: log.open_watches(agent) == 0, "and it stops again")


def test_sessions_over_one_client_share_one_watch_and_another_client_has_its_own(
    plane: LocalControlPlane,
) -> None:
    api, agent = notebook_client(plane)
    log = plane.api_server.record_requests()
    session = KubeSession(api, namespace=NS)
    first = read_shared(session, RAYCLUSTERS, lambda e: None)  # the session's namespace
    second = read_shared(session.in_namespace(OTHER_NS), RAYCLUSTERS, lambda e: None, namespace=NS)
    assert first.informer is second.informer and first.informer.namespace == NS
    other_api, other_agent = notebook_client(plane)
    third = read_shared(KubeSession(other_api, namespace=NS), RAYCLUSTERS, lambda e: None)
    assert third.informer is not first.informer  # another connection: a watch of its own
    eventually(lambda: log.open_watches(agent) == 1 and log.open_watches(other_agent) == 1, "one watch each")
    for sub in (first, second, third):
        sub.close()
    eventually(lambda: log.open_watches(agent) + log.open_watches(other_agent) == 0, "no reader left")


def test_a_watcher_lists_the_sessions_namespace_when_given_none(plane: LocalControlPlane) -> None:
    custom = k8s.CustomObjectsApi(plane.api_client())
    queued_cluster(custom, "nb-session-ns")
    elsewhere = raycluster("nb-session-ns")
    elsewhere["metadata"]["namespace"] = OTHER_NS  # the same name in another namespace
    custom.create_namespaced_custom_object("ray.io", "v1", OTHER_NS, "rayclusters", elsewhere)
    watcher = Watcher(
        KubeSession(plane.api_client(), namespace=NS),
        RAYCLUSTERS,
        name="nb-session-ns",
        deadline=time.monotonic() + 60,
    )
    first = next(watcher.events())
    watcher.stop()
    assert watcher.namespace == NS
    assert first.type == "SYNC"
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in first.objects] == [
        (NS, "nb-session-ns")
    ]


@pytest.mark.parametrize("agent_prefix", ["notebook-test/"])
def test_the_request_log_counts_by_client(plane: LocalControlPlane, agent_prefix: str) -> None:
    api, agent = notebook_client(plane)
    log = plane.api_server.record_requests()
    before = log.count(agent_prefix)
    k8s.CustomObjectsApi(api).list_namespaced_custom_object("ray.io", "v1", NS, "rayclusters")
    assert log.count(agent) == 1 and log.count(agent_prefix) == before + 1
    assert log.count(agent, watches=True) == 0


def test_a_live_card_never_reads_deleted_before_the_clusters_watch_has_spoken() -> None:
    # follow_live subscribes to the Workloads first: their watch can sync before the RayCluster's. A card
    # told then read "deleted: the RayCluster does not exist" right after apply() (seen in a notebook run).
    from rayqueue_sdk.cluster.live import LiveStatus

    told: list[ClusterStatus] = []
    live = LiveStatus("ws", NS, told.append)
    live.on_workloads([], replace_all=True)
    live._tell()
    assert told == []
    cluster = raycluster("ws")
    cluster["metadata"]["uid"] = "u-1"
    live.on_cluster(cluster)
    assert told and told[-1].phase is not ClusterPhase.DELETED
    live.on_cluster(None)
    assert told[-1].phase is ClusterPhase.DELETED


def test_a_live_card_keeps_the_estimate_on_display_while_the_cluster_waits() -> None:
    # The card apply() shows carries a queued cluster's admission estimate; no watch carries one, so the
    # watches' updates keep the one on display while the cluster is in the queue, and drop it once admitted.
    from rayqueue_sdk.admission.eta import AdmissionEstimate
    from rayqueue_sdk.cluster.live import LiveStatus

    cluster = raycluster("ws")
    cluster["metadata"]["uid"] = "u-eta"
    wl = workload(cluster)
    wl["status"] = {"conditions": [cond("QuotaReserved", "False", "Pending", "insufficient quota")]}
    eta = AdmissionEstimate(None, None, "nothing bounds when team-a/other releases its quota")
    told: list[ClusterStatus] = []
    shown: list[ClusterStatus | None] = [None]
    live = LiveStatus("ws", NS, told.append, shown=lambda: shown[0])
    live.on_workloads([wl], replace_all=True)
    live.on_cluster(cluster)
    assert told[-1].phase is ClusterPhase.QUEUED and told[-1].eta is None  # nothing on display yet
    shown[0] = replace(told[-1], eta=eta)  # the card's first status, read with the estimate
    wl["status"]["conditions"][0]["message"] = "insufficient quota, 2 more needed"
    live.on_workloads([wl], replace_all=False)
    live._tell()
    assert told[-1].eta == eta
    wl["status"] = {
        "conditions": [cond("QuotaReserved", "True", "QuotaReserved"), cond("Admitted", "True", "Admitted")]
    }
    wl["status"]["admission"] = {"clusterQueue": "cq", "podSetAssignments": []}
    live.on_workloads([wl], replace_all=False)
    live._tell()
    assert told[-1].phase is not ClusterPhase.QUEUED and told[-1].eta is None


def test_a_cache_behind_the_server_is_not_read_as_a_deleted_cluster(plane: LocalControlPlane) -> None:
    # In a notebook the namespace's watches already run (an earlier cluster's card) when apply() creates a
    # cluster and wait_ready() joins them: the cache handed to the wait can lack the cluster its GET just
    # read. The quickstart in a browser then said "RayCluster big-experiment was deleted while waiting".
    from rayqueue_sdk.errors import AdmissionTimeout
    from rayqueue_sdk.kube.informer import shared_informer

    custom = k8s.CustomObjectsApi(plane.api_client())
    api, _ = notebook_client(plane)
    running = read_shared(
        KubeSession(api), RAYCLUSTERS, namespace=NS, reader=lambda event: None
    )  # an earlier card's reader
    try:
        informer = shared_informer(KubeSession(api), RAYCLUSTERS, namespace=NS)
        queued_cluster(custom, "nb-behind")
        eventually(lambda: "nb-behind" in {o["metadata"]["name"] for o in informer.objects()}, "cached")
        with informer._lock:  # the cache behind the server: the ADDED not arrived yet
            informer._cache.pop("nb-behind")

        with pytest.raises(AdmissionTimeout) as raised:
            wait_for_cluster("nb-behind", NS, client=api, timeout=60, queue_timeout=0.5)
        assert raised.value.position is None or raised.value.position >= 0

        told: list[ClusterStatus] = []
        follow = follow_live(
            KubeSession(api),
            told.append,
            name="nb-behind",
            namespace=NS,
            last=observe_cluster("nb-behind", NS, api),
        )
        time.sleep(0.3)
        follow.close()
        assert all(st.phase is not ClusterPhase.DELETED for st in told), told

        custom.delete_namespaced_custom_object("ray.io", "v1", NS, "rayclusters", "nb-behind")
    finally:
        running.close()
