"""pytest fixtures for the local control plane (registered as the ``rayqueue_local`` plugin).

Installed with the package, so they are available in any project that has ``rayqueue_sdk``:

* ``local_control_plane`` (session): a running :class:`~rayqueue_sdk.local.LocalControlPlane`.
  Custom resources are validated against the CRDs in ``$RAYQUEUE_CRDS_DIR`` when that is set
  (unvalidated otherwise). Start-up options can be given with ``local_control_plane_options``
  (override this session fixture in your ``conftest.py`` to return a dict of keyword arguments).
* ``api_client`` (session): a ``kubernetes.client.ApiClient`` for the admin, TLS verified.
* ``namespace`` (function): a fresh namespace for one test, deleted (with its contents) afterwards.

Example (a user's own test)::

    from kubernetes import client

    def test_my_cluster(api_client, namespace):
        core = client.CoreV1Api(api_client)
        core.create_namespaced_config_map(namespace, {"metadata": {"name": "cfg"}})
        assert [c.metadata.name for c in core.list_namespaced_config_map(namespace).items] == ["cfg"]

The control plane's URL, CA file and kubeconfig are ``local_control_plane.server``,
``.ca_cert_path`` and ``.kubeconfig_path``; ``local_control_plane.faults`` injects faults.
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

__all__ = ["api_client", "local_control_plane", "local_control_plane_options", "namespace"]


@pytest.fixture(scope="session")
def local_control_plane_options() -> dict[str, Any]:
    """Keyword arguments for the session's ``LocalControlPlane`` (override to customise)."""
    return {}


@pytest.fixture(scope="session")
def local_control_plane(local_control_plane_options: dict[str, Any]) -> Iterator[Any]:
    """One local control plane for the test session."""
    from rayqueue_sdk.local import LocalControlPlane

    options = dict(local_control_plane_options)
    options.setdefault("crd_dir", os.environ.get("RAYQUEUE_CRDS_DIR") or None)
    with LocalControlPlane(**options) as cp:
        yield cp


@pytest.fixture(scope="session")
def api_client(local_control_plane: Any) -> Iterator[Any]:
    """A ``kubernetes.client.ApiClient`` for the admin of the session's control plane."""
    client = local_control_plane.api_client()
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def namespace(local_control_plane: Any, request: pytest.FixtureRequest) -> Iterator[str]:
    """A new namespace named after the test (deleted with its contents afterwards)."""
    stem = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower()).strip("-")[:40].strip("-") or "test"
    name = f"{stem}-{uuid.uuid4().hex[:6]}"
    local_control_plane.store.create("namespaces", {"metadata": {"name": name}})
    try:
        yield name
    finally:
        from rayqueue_sdk.local.store import StoreError

        with contextlib.suppress(StoreError):
            local_control_plane.store.delete("namespaces", None, name)
