"""ONE session control plane for the scale-to-zero tests: Kueue with Workload ``/scale`` (so KEDA mode is
served), KubeRay with real Ray heads, KEDA, and a real Prometheus scraping the DCGM-style exporter (the
plane's defaults); each test gets a fresh namespace with seed 000's 2-GPU quota (two 2-GPU clusters: the
second waits) from ``rayqueue_local.scenarios``. ``restricted_ns`` is such a namespace that also enforces
Pod Security "restricted".
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rayqueue_local.apiserver.podsecurity import ENFORCE_LABEL as ENFORCE
from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_local.scenarios import seed000_queues
from rayqueue_sdk.kube.client import set_current_client


@pytest.fixture(scope="session")
def idle_plane(crd_dir: Path) -> Iterator[LocalControlPlane]:
    """The session's control plane (Workload /scale on)."""
    with LocalControlPlane(crd_dir=crd_dir, workload_scale=True) as cp:
        yield cp


@pytest.fixture
def idle_ns(idle_plane: LocalControlPlane, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace with seed 000's queues (LocalQueue ``user-queue``, 2 GPUs), deleted afterwards."""
    stem = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower()).strip("-")[:30].strip("-") or "t"
    name = f"{stem}-{uuid.uuid4().hex[:5]}"
    idle_plane.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    idle_plane.apply(seed000_queues(name, cluster_queue=f"cq-{name}"))
    try:
        yield name
    finally:
        idle_plane.store.delete("namespaces", None, name)
        idle_plane.store.delete("clusterqueues.kueue.x-k8s.io", None, f"cq-{name}")


@pytest.fixture
def restricted_ns(idle_plane: LocalControlPlane, idle_ns: str) -> str:
    """``idle_ns`` labelled ``pod-security.kubernetes.io/enforce: restricted`` (as shared GPU clusters
    often are): the plane then refuses any pod that violates the profile, which this checks first."""
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    ns = idle_plane.store.get("namespaces", None, idle_ns)
    ns["metadata"]["labels"] = {**(ns["metadata"].get("labels") or {}), ENFORCE: "restricted"}
    idle_plane.store.update("namespaces", ns)
    core = client.CoreV1Api(idle_plane.api_client())
    plain = {"metadata": {"name": "plain"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    with pytest.raises(ApiException) as info:
        core.create_namespaced_pod(idle_ns, plain)
    message = json.loads(info.value.body)["message"]
    assert info.value.status == 403 and 'violates PodSecurity "restricted:latest"' in message
    return idle_ns


@pytest.fixture
def idle_admin(idle_plane: LocalControlPlane) -> Any:
    """An SDK client for the admin."""
    from rayqueue_sdk.kube.client import build_api_client

    return build_api_client(
        idle_plane.server, token=idle_plane.token, ca_cert_path=str(idle_plane.ca_cert_path)
    )


@pytest.fixture(autouse=True)
def _no_current_client(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    set_current_client(None)
    yield
    set_current_client(None)
