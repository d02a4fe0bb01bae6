"""A control plane running only the kubelet and the Deployment/Job controllers (no Ray), shared by
the pod tests, with short back-offs so restarts and Job retries happen within a test."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from rayqueue_local import LocalControlPlane
from rayqueue_local.controllers.pods import pod_controllers


@pytest.fixture(scope="session")
def pods_cp() -> Iterator[LocalControlPlane]:
    """The plane: kubelet (restart back-off 0.5 s), Deployment and Job controllers (back-off 0.2 s)."""
    cp = LocalControlPlane(
        crd_dir=os.environ.get("RAYQUEUE_CRDS_DIR") or None,
        controllers=lambda plane: pod_controllers(plane, restart_backoff=0.5, job_backoff=0.2),
    )
    with cp:
        yield cp
