"""Fixtures for the KubeRay emulation tests: control planes with and without real Ray heads."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kuberay_helpers import CRDS

from rayqueue_local import LocalControlPlane


@pytest.fixture(scope="session")
def api_cp() -> Iterator[LocalControlPlane]:
    """A control plane without Ray processes (clusters are ready at once; jobs are simulated)."""
    cp = LocalControlPlane(
        crd_dir=CRDS,
        ray_enabled=False,
        keda_enabled=False,
        prometheus_enabled=False,
        simulated_job_seconds=2.0,
    )
    with cp:
        yield cp


@pytest.fixture(scope="session")
def ray_cp() -> Iterator[LocalControlPlane]:
    """A control plane that starts a real local Ray head per running RayCluster."""
    cp = LocalControlPlane(crd_dir=CRDS, keda_enabled=False, prometheus_enabled=False)
    with cp:
        yield cp
