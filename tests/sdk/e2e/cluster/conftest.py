"""One session control plane with Kueue and KubeRay (real local Ray heads) for the Cluster tests.

Ray heads are expensive (about 12 s and a few hundred MB each): tests take their clusters down (or
their namespace goes, with its clusters) before the next test, so at most two heads run at once.
Clusters that must stay queued use a LocalQueue whose ClusterQueue has no quota: they start no head.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster_helpers import PRIORITIES, zero_quota_queue

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk.kube.client import set_current_client


@pytest.fixture(scope="session")
def plane(crd_dir: Path) -> Iterator[LocalControlPlane]:
    """The session's control plane: Kueue, KubeRay with real Ray heads, CRD validation."""
    cp = LocalControlPlane(crd_dir=crd_dir, keda_enabled=False, prometheus_enabled=False)
    with cp:
        cp.apply(PRIORITIES)
        yield cp


@pytest.fixture
def ns(plane: LocalControlPlane, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace (with a zero-quota LocalQueue ``parked``), deleted with its contents afterwards."""
    import re
    import uuid

    stem = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower()).strip("-")[:30].strip("-") or "t"
    name = f"{stem}-{uuid.uuid4().hex[:5]}"
    plane.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    plane.apply(zero_quota_queue(name))
    try:
        yield name
    finally:
        plane.faults.clear()
        plane.store.delete("namespaces", None, name)


@pytest.fixture
def user(plane: LocalControlPlane, ns: str) -> str:
    """The bearer token of a data scientist limited to ``ns``."""
    return plane.add_user(f"user-{ns}"[:60], [ns])


@pytest.fixture
def user_client(plane: LocalControlPlane, user: str) -> Any:
    """A logged-in SDK client for ``user`` (not the process-wide one)."""
    from rayqueue_sdk import TokenAuthentication

    return TokenAuthentication(
        token=user, server=plane.server, ca_cert_path=str(plane.ca_cert_path)
    ).api_client()


@pytest.fixture
def admin(plane: LocalControlPlane) -> Any:
    """An SDK client for the admin (Kueue's batch admin: may patch Workloads)."""
    from rayqueue_sdk.kube.client import build_api_client

    return build_api_client(plane.server, token=plane.token, ca_cert_path=str(plane.ca_cert_path))


@pytest.fixture(autouse=True)
def _no_current_client() -> Iterator[None]:
    set_current_client(None)
    yield
    set_current_client(None)


@pytest.fixture(autouse=True)
def _no_kubeconfig(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Auto-detection must never pick up the developer's own kubeconfig."""
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("RAYQUEUE_CA_CERT_PATH", raising=False)
