"""A module-scoped control plane with Kueue and KubeRay (no Ray processes) and seed 004's queues: team-a and
team-b share cohort ``team-ab``, whose CPU lives in ``shared-cq`` (6 CPUs); priorities prod 1000, dev 100."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_local.scenarios import seed004_queues
from rayqueue_sdk.kube.client import build_api_client, set_current_client


@pytest.fixture(scope="module")
def plane(crd_dir: Path) -> Iterator[LocalControlPlane]:
    """Kueue + KubeRay without Ray heads (clusters are ready at once), seed 004's queues applied."""
    cp = LocalControlPlane(crd_dir=crd_dir, ray_enabled=False, keda_enabled=False, prometheus_enabled=False)
    with cp:
        cp.apply(
            [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in ("team-a", "team-b")]
        )
        cp.apply(seed004_queues())
        yield cp


@pytest.fixture(autouse=True)
def _no_current_client(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    set_current_client(None)
    yield
    set_current_client(None)


@pytest.fixture(scope="module")
def client_for(plane: LocalControlPlane) -> Callable[[str], Any]:
    """Makes an SDK client for a token (not the process-wide one)."""

    def make(token: str) -> Any:
        return build_api_client(plane.server, token=token, ca_cert_path=str(plane.ca_cert_path))

    return make
