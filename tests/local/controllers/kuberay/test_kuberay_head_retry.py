"""A head whose `ray start` fails is tried again with fresh ports, as KubeRay recreates a failed head pod.

The first attempt is given a GCS port this test holds, so real Ray really fails on it; the retry
allocates new ports and the head comes up. The failure's reason reaches the log.

Real Ray's GCS aborts on the held port within seconds, but `ray start` waits up to a minute more for it
(it polls the GCS process only between connection attempts to the held port); the plane notices the
GCS process's exit itself (``RayHead.wait_ready``), so the reason reported is the GCS's own.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
import socket
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kuberay_helpers import queues, raycluster, wait_for
from kubernetes import client

from rayqueue_local.controllers.kuberay.runtime import RayRuntime
from rayqueue_local.runtime.raylocal import RayHeadPorts
from rayqueue_sdk.cluster.wait import observe_cluster

pytestmark = pytest.mark.ray


@pytest.fixture
def held_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_a_head_that_fails_to_start_is_retried_with_fresh_ports(
    monkeypatch: pytest.MonkeyPatch, held_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    real_allocate = RayHeadPorts.allocate.__func__  # type: ignore[attr-defined]
    calls: list[RayHeadPorts] = []

    def first_one_taken(cls: type[RayHeadPorts]) -> RayHeadPorts:
        ports = real_allocate(cls)
        if not calls:  # the first attempt gets a GCS port that is already in use
            ports = dataclasses.replace(ports, ports={**ports.ports, "gcs-server": held_port})
        calls.append(ports)
        return ports

    monkeypatch.setattr(RayHeadPorts, "allocate", classmethod(first_one_taken))
    changed = threading.Event()
    runtime = RayRuntime(on_change=lambda key: changed.set(), poll_seconds=5)
    caplog.set_level(logging.WARNING, logger="rayqueue_local.controllers.kuberay.runtime")
    key = ("ns", "retry-me", "uid-1")
    try:
        handle = runtime.ensure(key, {"cpus": 1, "gpus": 0})
        assert changed.wait(timeout=240), "the head neither came up nor failed"
        assert handle.state == "ready", handle.error
        assert len(calls) == 2  # one failed attempt, one good one
        assert handle.head is not None and handle.head.ports is not None
        assert handle.head.ports["gcs-server"] != held_port
        messages = [record.getMessage() for record in caplog.records]
        failures = [m for m in messages if "failed to start (attempt 1 of" in m]
        assert failures and "the GCS server exited" in failures[0], messages
        assert "Failed to start the grpc server" in failures[0]
    finally:
        runtime.stop()


def test_a_ready_head_whose_restart_fails_is_restarted_again_after_a_back_off(
    monkeypatch: pytest.MonkeyPatch, held_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    """The kubelet restarts a crashed head container for as long as the pod exists, backing off between
    restarts: a restart that fails (here its GCS port is taken) is one more restart, not a failed
    cluster (as three quick tries made it when a GCS-FT restart missed Ray's 30 s under load)."""
    from rayqueue_local.controllers.kuberay import runtime as kuberay_runtime

    monkeypatch.setattr(kuberay_runtime, "_RESTART_BACKOFF_S", 1.0)  # the kubelet's 10 s, shortened
    real_allocate = RayHeadPorts.allocate.__func__  # type: ignore[attr-defined]
    calls: list[RayHeadPorts] = []

    def second_one_taken(cls: type[RayHeadPorts]) -> RayHeadPorts:
        ports = real_allocate(cls)
        if len(calls) == 1:  # the first restart gets a GCS port that is already in use
            ports = dataclasses.replace(ports, ports={**ports.ports, "gcs-server": held_port})
        calls.append(ports)
        return ports

    monkeypatch.setattr(RayHeadPorts, "allocate", classmethod(second_one_taken))
    changes: list[tuple[str, int, int | None]] = []
    runtime = RayRuntime(poll_seconds=0.5)

    def seen(key: tuple[str, str, str]) -> None:
        if (now := runtime.get(key)) is not None:
            changes.append((now.state, now.restarts, now.last_exit))

    runtime.set_on_change(seen)
    caplog.set_level(logging.WARNING, logger="rayqueue_local.controllers.kuberay.runtime")
    key = ("ns", "restart-me", "uid-2")
    try:
        handle = runtime.ensure(key, {"cpus": 1, "gpus": 0})
        wait_for(lambda: handle.state, lambda state: state != "starting", timeout=240)
        assert handle.state == "ready", handle.error
        assert handle.head is not None and handle.head.process is not None
        os.killpg(handle.head.process.popen.pid, signal.SIGKILL)  # the head container crashes
        wait_for(lambda: handle.state, lambda state: state == "restarting", timeout=60)
        wait_for(lambda: handle.state, lambda state: state != "restarting", timeout=300)
        assert (handle.state, handle.restarts, handle.last_exit) == ("ready", 2, 1), handle.error
        assert len(calls) == 3  # the first start, the failed restart, the good one
        assert ("restarting", 2, 1) in changes  # the failed restart counted, its exit 1, still restarting
        assert "failed" not in [state for state, _, _ in changes]
        messages = [record.getMessage() for record in caplog.records]
        assert any("failed to restart (restart 1, attempt 1 of" in m for m in messages), messages
    finally:
        runtime.stop()


def test_a_head_that_never_starts_is_reported_and_the_sdk_says_why(
    ray_cp: Any, monkeypatch: pytest.MonkeyPatch, held_port: int
) -> None:
    """KubeRay's ReplicaFailure condition (FailedCreateHeadPod) and a crash-looping head pod, read back by
    the SDK's status as a failed cluster."""
    from rayqueue_local.controllers.kuberay import runtime

    real_allocate = RayHeadPorts.allocate.__func__  # type: ignore[attr-defined]

    def always_taken(cls: type[RayHeadPorts]) -> RayHeadPorts:
        ports = real_allocate(cls)
        return dataclasses.replace(ports, ports={**ports.ports, "gcs-server": held_port})

    monkeypatch.setattr(RayHeadPorts, "allocate", classmethod(always_taken))
    monkeypatch.setattr(runtime, "_HEAD_START_ATTEMPTS", 1)
    ns = f"fail-{uuid.uuid4().hex[:6]}"
    ray_cp.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    queues(ray_cp, ns)
    custom = client.CustomObjectsApi(ray_cp.api_client())
    custom.create_namespaced_custom_object("ray.io", "v1", ns, "rayclusters", raycluster("broken"))

    def failure(rc: dict[str, Any]) -> dict[str, Any] | None:
        conditions = (rc.get("status") or {}).get("conditions") or []
        return next((c for c in conditions if c["type"] == "ReplicaFailure" and c["status"] == "True"), None)

    rc = wait_for(
        lambda: custom.get_namespaced_custom_object("ray.io", "v1", ns, "rayclusters", "broken"),
        lambda rc: failure(rc) is not None,
        timeout=240,
    )
    found = failure(rc)
    assert found is not None and found["reason"] == "FailedCreateHeadPod", rc.get("status")
    assert (
        "the GCS server exited" in found["message"] and "Failed to start the grpc server" in found["message"]
    )
    # A head that cannot start is terminal for the SDK: FAILED with the head's error, not "starting".
    status = observe_cluster("broken", ns, ray_cp.api_client())
    assert status.phase.value == "failed" and not status.ready
    assert status.explanation.startswith("the head cannot start: local Ray head:")
    assert "FailedCreateHeadPod" in status.explanation
    # ... and its pod says what a kubelet would: the container crash-loops, the last exit's message kept.
    (head,) = ray_cp.store.list("pods", ns, label_selector="ray.io/cluster=broken,ray.io/node-type=head")
    container = head["status"]["containerStatuses"][0]
    assert container["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert "the GCS server exited" in container["lastState"]["terminated"]["message"]
    custom.delete_namespaced_custom_object("ray.io", "v1", ns, "rayclusters", "broken")
