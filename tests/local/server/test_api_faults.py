"""Fault injection: 5xx, 429 with Retry-After, dropped connections, delays, ended watch streams."""

from __future__ import annotations

import json
import queue
import threading
from typing import Any

import pytest
import urllib3
from kubernetes import client, watch
from kubernetes.client.rest import ApiException


def test_503_for_the_next_two_matching_requests(cp: Any, core: Any, namespace: str) -> None:
    fault = cp.faults.inject(
        method="GET", path=rf"/api/v1/namespaces/{namespace}/configmaps", status=503, times=2
    )
    for _ in range(2):
        with pytest.raises(ApiException) as err:
            core.list_namespaced_config_map(namespace)
        assert err.value.status == 503
        assert json.loads(err.value.body)["reason"] == "ServiceUnavailable"
    assert core.list_namespaced_config_map(namespace).items == []
    assert fault.hits == 2


def test_faults_match_method_and_path(cp: Any, core: Any, namespace: str) -> None:
    cp.faults.inject(method="POST", path=r"/api/v1/namespaces/.*/secrets", status=500, times=1)
    core.list_namespaced_config_map(namespace)  # other path: untouched
    core.list_namespaced_secret(namespace)  # other method: untouched
    with pytest.raises(ApiException) as err:
        core.create_namespaced_secret(namespace, {"metadata": {"name": "s"}})
    assert err.value.status == 500
    core.create_namespaced_secret(namespace, {"metadata": {"name": "s"}})


def test_429_carries_retry_after(cp: Any, raw: Any, namespace: str) -> None:
    cp.faults.inject(path=r"/apis/ray.io/", status=429, retry_after=7, times=1)
    status, body, resp = raw.request("GET", f"/apis/ray.io/v1/namespaces/{namespace}/rayclusters")
    assert status == 429 and body["reason"] == "TooManyRequests"
    assert resp.getheader("Retry-After") == "7"
    status, _, _ = raw.request("GET", f"/apis/ray.io/v1/namespaces/{namespace}/rayclusters")
    assert status == 200


def test_dropped_connection(cp: Any, core: Any, namespace: str) -> None:
    fault = cp.faults.inject(method="POST", path=r"/api/v1/namespaces/.*/configmaps$", drop=True, times=1)
    with pytest.raises(urllib3.exceptions.ProtocolError):
        core.create_namespaced_config_map(namespace, {"metadata": {"name": "dropped"}})
    assert fault.hits == 1
    assert core.list_namespaced_config_map(namespace).items == []  # nothing was stored
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "dropped"}})


def test_dropped_connection_on_get_is_retried_by_urllib3(cp: Any, core: Any, namespace: str) -> None:
    fault = cp.faults.inject(method="GET", path=r"/api/v1/namespaces/[^/]+/configmaps$", drop=True, times=1)
    assert core.list_namespaced_config_map(namespace).items == []
    assert fault.hits == 1 and fault.times == 0


def test_delay_then_normal_answer(cp: Any, core: Any, namespace: str) -> None:
    fault = cp.faults.inject(method="GET", path=r"/api/v1/namespaces/[^/]+/configmaps$", delay=0.2, times=1)
    assert core.list_namespaced_config_map(namespace).items == []
    assert fault.hits == 1


def test_delay_beyond_the_client_timeout(cp: Any, core: Any, namespace: str) -> None:
    # urllib3 retries an idempotent request that timed out (3 times by default): delay them all
    fault = cp.faults.inject(method="GET", path=r"/api/v1/namespaces/[^/]+/secrets$", delay=2, times=4)
    with pytest.raises((urllib3.exceptions.MaxRetryError, urllib3.exceptions.ReadTimeoutError)):
        core.list_namespaced_secret(namespace, _request_timeout=0.2)
    assert fault.hits == 4


def test_fault_needs_an_effect(cp: Any) -> None:
    with pytest.raises(ValueError):
        cp.faults.inject(path="/")


def test_end_watches_ends_the_stream_and_the_client_resumes(cp: Any, api_client: Any, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version
    opened_before = cp.faults.open_watches
    got: queue.Queue[Any] = queue.Queue()
    w = watch.Watch()

    def consume() -> None:
        for event in w.stream(core.list_namespaced_config_map, namespace, resource_version=rv):
            got.put((event["type"], event["object"].metadata.name))
            if event["object"].metadata.name == "after":
                w.stop()

    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "before"}})
    assert got.get(timeout=30) == ("ADDED", "before")
    assert cp.faults.end_watches() >= 1
    # The client sees the stream end, reconnects from the last resourceVersion, and loses nothing.
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "after"}})
    assert got.get(timeout=30) == ("ADDED", "after")
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert cp.faults.open_watches <= opened_before + 1


def test_end_watches_closes_a_raw_stream(cp: Any, core: Any, namespace: str) -> None:
    resp = core.list_namespaced_config_map(namespace, watch=True, _preload_content=False)
    done = threading.Event()
    lines: list[bytes] = []

    def read() -> None:
        for chunk in resp.stream():
            lines.append(chunk)
        done.set()

    threading.Thread(target=read, daemon=True).start()
    while cp.faults.open_watches == 0:
        done.wait(0.01)
    cp.faults.end_watches()
    assert done.wait(30)
    assert lines == []  # an empty namespace: the stream ended without events


def test_drop_response_makes_the_write_and_loses_the_answer(cp: Any, core: Any, namespace: str) -> None:
    fault = cp.faults.inject(
        method="POST", path=r"/api/v1/namespaces/.*/configmaps$", drop_response=True, times=1
    )
    with pytest.raises(urllib3.exceptions.ProtocolError):
        core.create_namespaced_config_map(namespace, {"metadata": {"name": "made"}})
    assert fault.hits == 1
    # The client never heard, but the write was made: a blind retry of the create is a 409.
    assert [c.metadata.name for c in core.list_namespaced_config_map(namespace).items] == ["made"]
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map(namespace, {"metadata": {"name": "made"}})
    assert err.value.status == 409


def test_rate_hits_a_repeatable_fraction_and_seconds_end_a_storm(cp: Any, core: Any, namespace: str) -> None:
    path = rf"/api/v1/namespaces/{namespace}/configmaps$"
    # No Retry-After: urllib3 would retry a 429 that carries one, hiding the storm from this count.
    storm = cp.faults.inject("GET", path, status=429, times=None, rate=0.5)
    outcomes = []
    for _ in range(40):
        try:
            core.list_namespaced_config_map(namespace)
            outcomes.append(200)
        except ApiException as err:
            outcomes.append(err.status)
    assert set(outcomes) == {200, 429} and storm.hits == outcomes.count(429)
    cp.faults.clear()
    cp.faults.inject("GET", path, status=503, times=None, seconds=0.0)  # a storm that is already over
    assert core.list_namespaced_config_map(namespace).items == []


def test_a_fault_needs_a_rate_in_range(cp: Any) -> None:
    with pytest.raises(ValueError, match="rate"):
        cp.faults.inject(path="/", status=500, rate=0)
