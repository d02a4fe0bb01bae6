"""Fixtures of the fault-injection suite: one in-process control plane for the session (KubeRay with
simulated heads, Kueue; no Ray, KEDA or Prometheus), fresh namespaces, and admin clients.

The crash and restart tests run their own plane in a subprocess (``reliability_planes.PlaneProcess``):
a ``kill -9`` needs a process of its own.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from reliability_planes import PlaneProcess, namespace_object, queue_objects, server_side_apply

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk.kube.client import set_current_client
from rayqueue_sdk.kube.connection import build_api_client


@pytest.fixture(scope="session")
def fault_plane(crd_dir: Path) -> Iterator[LocalControlPlane]:
    """The session's in-process plane for the fault tests (its ``faults`` table is cleared per test)."""
    with LocalControlPlane(
        crd_dir=crd_dir, ray_enabled=False, keda_enabled=False, prometheus_enabled=False
    ) as cp:
        yield cp


@pytest.fixture
def fault_ns(fault_plane: LocalControlPlane, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace with LocalQueue ``parked`` (no quota: clusters there stay queued)."""
    stem = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower()).strip("-")[:30].strip("-") or "t"
    name = f"{stem}-{uuid.uuid4().hex[:5]}"
    fault_plane.apply(namespace_object(name))
    fault_plane.apply(queue_objects(name, "parked", cpu=0))
    try:
        yield name
    finally:
        fault_plane.faults.clear()
        fault_plane.store.delete("namespaces", None, name)


@pytest.fixture
def fault_sdk(fault_plane: LocalControlPlane) -> Iterator[Any]:
    """An SDK client for the admin of ``fault_plane`` (SDK retries; urllib3's off)."""
    api = build_api_client(
        fault_plane.server, token=fault_plane.token, ca_cert_path=str(fault_plane.ca_cert_path)
    )
    yield api
    api.close()


@pytest.fixture(autouse=True)
def _no_current_client(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No process-wide login, and never the developer's own kubeconfig."""
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    set_current_client(None)
    yield
    set_current_client(None)


@pytest.fixture(scope="session")
def crash_plane(crd_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlaneProcess]:
    """``rayqueue local up`` in a subprocess on a state directory of its own: tests kill it (``kill -9``
    included) and start it again on the same directory and port. Always running between tests."""
    plane = PlaneProcess(tmp_path_factory.mktemp("crash-plane"), crd_dir).start()
    try:
        yield plane
    finally:
        plane.stop()


@pytest.fixture
def crash_ns(crash_plane: PlaneProcess, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace in ``crash_plane`` with LocalQueue ``team`` on a ClusterQueue without quota."""
    stem = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower()).strip("-")[:30].strip("-") or "t"
    name = f"{stem}-{uuid.uuid4().hex[:5]}"
    api = crash_plane.kube_client()
    try:
        server_side_apply(api, namespace_object(name), *queue_objects(name, "team", cpu=0))
    finally:
        api.close()
    yield name
