"""Watches go over the session's one REST path: the kind's URL (``/api/v1/...`` for a core kind), the
session's retries (429 with ``Retry-After``, 5xx) and credentials, counted in the plane's request log under
the client's own ``User-Agent``; a stream resumes from its last resourceVersion and relists on 410 Gone,
whether the server answers the watch request 410 or sends it as an ``ERROR`` event in the stream.

Counts from the plane's request log and its fault table; no assertion on a time.
"""

from __future__ import annotations

import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk.kube.connection import build_api_client
from rayqueue_sdk.kube.kinds import PODS, Kind
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.kube.watch import Watcher, WatchEvent

NS = "watch-session"
CONFIGMAPS = Kind("", "v1", "configmaps")


def eventually(check: Callable[[], bool], what: str, tries: int = 400) -> None:
    for _ in range(tries):
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"never: {what}")


def _namespace(plane: LocalControlPlane) -> None:
    plane.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}])


def _sdk(plane: LocalControlPlane) -> tuple[Any, str]:
    """An SDK client (as login() builds one) with a User-Agent of its own, and that agent."""
    api = build_api_client(plane.server, token=plane.token, ca_cert_path=str(plane.ca_cert_path))
    agent = f"watch-session/{uuid.uuid4().hex[:8]}"
    api.user_agent = agent
    return api, agent


class Seen:
    """A watcher run in a thread, and what it yielded."""

    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher
        self.sink: queue.Queue[WatchEvent] = queue.Queue()
        self.events: list[WatchEvent] = []
        self.thread = watcher.run_into(self.sink)

    def drain(self) -> list[WatchEvent]:
        while True:
            try:
                self.events.append(self.sink.get_nowait())
            except queue.Empty:
                return self.events

    def saw(self, etype: str, name: str) -> bool:
        return any(
            e.type == etype and e.object is not None and e.object["metadata"]["name"] == name
            for e in self.drain()
        )

    def errors(self) -> list[WatchEvent]:
        return [e for e in self.drain() if e.type == "ERROR"]


@pytest.fixture
def watched(plane: LocalControlPlane) -> Iterator[tuple[LocalControlPlane, Any, str]]:
    _namespace(plane)
    api, agent = _sdk(plane)
    plane.api_server.record_requests()
    yield plane, api, agent
    plane.faults.clear()
    api.close()


def _pod(name: str) -> dict[str, Any]:
    container = {"name": "c", "image": "busybox", "securityContext": {"allowPrivilegeEscalation": False}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [container]},
    }


def test_a_core_kind_is_watched_at_its_own_url_under_the_sdk_user_agent(
    watched: tuple[LocalControlPlane, Any, str],
) -> None:
    plane, api, agent = watched
    log = plane.api_server.record_requests()
    seen = Seen(Watcher(KubeSession(api), PODS, namespace=NS))
    try:
        eventually(lambda: log.open_watches(agent) == 1, "the pods watch to open")
        k8s.CoreV1Api(plane.api_client()).create_namespaced_pod(NS, _pod("watched-pod"))
        eventually(lambda: seen.saw("ADDED", "watched-pod"), "the pod's ADDED event")
    finally:
        seen.watcher.stop()
        seen.thread.join(timeout=30)
    assert not seen.errors()
    paths = log.paths(agent)
    assert paths[:2] == [f"GET /api/v1/namespaces/{NS}/pods", f"WATCH /api/v1/namespaces/{NS}/pods"]
    assert log.count(agent, watches=True) == 1 and seen.watcher.relists == 1


def test_stop_ends_a_blocked_stream(watched: tuple[LocalControlPlane, Any, str]) -> None:
    plane, api, agent = watched
    log = plane.api_server.record_requests()
    watcher = Watcher(KubeSession(api), CONFIGMAPS, namespace=NS, stream_seconds=300)
    seen = Seen(watcher)
    eventually(lambda: log.open_watches(agent) == 1, "the watch to open")
    watcher.stop()
    seen.thread.join(timeout=60)  # the stream asked for 300 s: only stop() ends it before
    assert not seen.thread.is_alive()
    eventually(lambda: log.open_watches(agent) == 0, "the server to see the stream closed")
    assert log.count(agent, watches=True) == 1 and not seen.errors()


def test_the_watch_request_is_retried_like_any_request_and_resumes_without_a_relist(
    watched: tuple[LocalControlPlane, Any, str],
) -> None:
    plane, api, agent = watched
    log = plane.api_server.record_requests()
    watcher = Watcher(KubeSession(api), CONFIGMAPS, namespace=NS, label_selector="watch=retried")
    seen = Seen(watcher)
    core = k8s.CoreV1Api(plane.api_client())
    try:
        eventually(lambda: log.open_watches(agent) == 1, "the watch to open")
        path = rf"/api/v1/namespaces/{NS}/configmaps$"
        busy = plane.faults.inject("GET", path, status=429, retry_after=1)
        broken = plane.faults.inject("GET", path, status=500)
        plane.faults.end_watches()  # the reconnect meets the 429, then the 500: the session retries both
        eventually(
            lambda: busy.hits == 1 and broken.hits == 1 and log.open_watches(agent) == 1, "the reconnect"
        )
        core.create_namespaced_config_map(
            NS, {"metadata": {"name": "after-retries", "labels": {"watch": "retried"}}}
        )
        eventually(lambda: seen.saw("ADDED", "after-retries"), "the event after the retried reconnect")
    finally:
        watcher.stop()
        seen.thread.join(timeout=30)
    assert not seen.errors()
    assert watcher.relists == 1  # resumed from its resourceVersion: no second LIST
    assert watcher.resumes == 0  # the session's retries carried the reconnect, not the watch loop's backoff
    assert log.count(agent, watches=True) == 4  # the first stream, the 429, the 500, the stream that got it
    assert log.count(agent, watches=False) == 1


def test_410_answered_to_the_watch_request_relists(watched: tuple[LocalControlPlane, Any, str]) -> None:
    plane, api, agent = watched
    log = plane.api_server.record_requests()
    watcher = Watcher(KubeSession(api), CONFIGMAPS, namespace=NS, label_selector="watch=gone")
    seen = Seen(watcher)
    try:
        eventually(lambda: log.open_watches(agent) == 1, "the watch to open")
        gone = plane.faults.inject("GET", rf"/api/v1/namespaces/{NS}/configmaps$", status=410)
        plane.faults.end_watches()
        eventually(lambda: gone.hits == 1 and watcher.relists == 2, "a relist after the 410")
    finally:
        watcher.stop()
        seen.thread.join(timeout=30)
    assert not seen.errors() and [e.type for e in seen.drain()].count("SYNC") == 2


@pytest.fixture(scope="module")
def short_plane(crd_dir: Path) -> Iterator[LocalControlPlane]:
    """A plane whose event history holds 3 events, so that a stream resumed late meets 410 Gone."""
    with LocalControlPlane(crd_dir=crd_dir, controllers=[], history=3) as cp:
        _namespace(cp)
        yield cp


def test_410_sent_in_the_stream_relists(short_plane: LocalControlPlane) -> None:
    api, agent = _sdk(short_plane)
    log = short_plane.api_server.record_requests()
    watcher = Watcher(KubeSession(api), CONFIGMAPS, namespace=NS, label_selector="watch=late")
    seen = Seen(watcher)
    core = k8s.CoreV1Api(short_plane.api_client())
    try:
        eventually(lambda: log.open_watches(agent) == 1, "the watch to open")
        # The reconnect is held before the server reads its resourceVersion; meanwhile more events than the
        # history keeps are written, so the server sends 410 as the stream's ERROR event (as upstream does).
        held = short_plane.faults.inject("GET", rf"/api/v1/namespaces/{NS}/configmaps$", delay=3.0)
        short_plane.faults.end_watches()
        eventually(lambda: held.hits == 1, "the reconnect to be held")
        for i in range(5):
            core.create_namespaced_config_map(
                NS, {"metadata": {"name": f"late-{i}", "labels": {"watch": "late"}}}
            )
        eventually(lambda: watcher.relists == 2, "a relist after the ERROR event")
        eventually(lambda: len([e for e in seen.drain() if e.type == "SYNC"]) == 2, "the second SYNC")
        syncs = [e for e in seen.drain() if e.type == "SYNC"]
        assert sorted(o["metadata"]["name"] for o in syncs[-1].objects) == [f"late-{i}" for i in range(5)]
    finally:
        watcher.stop()
        seen.thread.join(timeout=30)
        api.close()
    assert not seen.errors()
    assert log.count(agent, watches=True) >= 2 and log.count(agent, watches=False) == 2


def test_a_watch_thread_started_and_stopped_at_once_ends(watched: tuple[LocalControlPlane, Any, str]) -> None:
    _, api, _ = watched
    watcher = Watcher(KubeSession(api), CONFIGMAPS, namespace=NS)
    watcher.stop()
    done = threading.Event()
    thread = threading.Thread(target=lambda: (list(watcher.events()), done.set()), daemon=True)
    thread.start()
    thread.join(timeout=30)
    assert done.is_set()
