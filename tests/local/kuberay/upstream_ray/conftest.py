"""One control plane without Ray processes for the upstream Ray corpus and its companions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rayqueue_local import LocalControlPlane


@pytest.fixture(scope="session")
def ray_api_cp(crd_dir: Path) -> Iterator[LocalControlPlane]:
    """Kueue and KubeRay emulated, clusters ready at once, jobs simulated (long enough to stay running)."""
    cp = LocalControlPlane(
        crd_dir=crd_dir,
        ray_enabled=False,
        keda_enabled=False,
        prometheus_enabled=False,
        simulated_job_seconds=600.0,
    )
    with cp:
        yield cp
