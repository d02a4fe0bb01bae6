"""Fixtures for the SDK's Kubernetes layer against the real local control plane over HTTPS.

The control plane runs with no controllers: the tests play Kueue and KubeRay themselves by writing
RayCluster and Workload objects (and their status) through the API as the admin.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sdk_helpers import NS, OTHER_NS

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk.kube.client import set_current_client


@pytest.fixture(scope="module")
def plane(crd_dir: Path) -> Iterator[LocalControlPlane]:
    """A control plane without controllers, with namespaces team-a and team-b."""
    with LocalControlPlane(crd_dir=crd_dir, controllers=[]) as cp:
        cp.apply(
            [
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": OTHER_NS}},
            ]
        )
        yield cp


@pytest.fixture(scope="module")
def user_token(plane: LocalControlPlane) -> str:
    """A data scientist limited to team-a."""
    return plane.add_user("alice", [NS])


@pytest.fixture(autouse=True)
def _no_current_client() -> Iterator[None]:
    set_current_client(None)
    yield
    set_current_client(None)


@pytest.fixture
def admin(plane: LocalControlPlane) -> Any:
    return plane.api_client()
