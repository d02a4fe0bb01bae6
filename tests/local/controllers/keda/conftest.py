"""Fixtures for the KEDA tests."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from keda_helpers import StubPrometheus

from rayqueue_local import LocalControlPlane


@pytest.fixture(scope="session")
def keda_cp() -> Iterator[LocalControlPlane]:
    """A control plane with KEDA and Kueue's Workload /scale mode, without Ray processes."""
    cp = LocalControlPlane(
        crd_dir=os.environ.get("RAYQUEUE_CRDS_DIR"),
        workload_scale=True,
        ray_enabled=False,
        prometheus_enabled=False,
    )
    with cp:
        yield cp


@pytest.fixture
def prometheus() -> Iterator[StubPrometheus]:
    stub = StubPrometheus()
    yield stub
    stub.close()
