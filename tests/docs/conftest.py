"""One local control plane for the docs tests (the runnable blocks of the pages other than getting
started, which starts its own as a reader would, and the CI example): Kueue, KubeRay with real Ray
heads; no KEDA or Prometheus."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from rayqueue_local import LocalControlPlane
from rayqueue_sdk.kube.client import set_current_client


@pytest.fixture(scope="session")
def docs_plane() -> Iterator[LocalControlPlane]:
    """The docs tests' shared control plane."""
    cp = LocalControlPlane(
        crd_dir=os.environ.get("RAYQUEUE_CRDS_DIR"), keda_enabled=False, prometheus_enabled=False
    )
    with cp:
        yield cp


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No developer kubeconfig, home or process-wide login leaks in or out of a docs test."""
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.setenv("RAYQUEUE_HOME", str(tmp_path / "rayqueue-home"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    set_current_client(None)
    yield
    set_current_client(None)
