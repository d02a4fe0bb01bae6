"""pytest fixtures for the local control plane: an opt-in plugin with prefixed fixture names.

Opt in from your ``conftest.py`` (``pytest_plugins = ["rayqueue_local.pytest_plugin"]``) or on the
command line (``pytest -p rayqueue_local.pytest_plugin``). Nothing is injected into a pytest run that
did not ask, and every fixture name starts with ``localplane`` so that none shadows a project's own:

* ``localplane`` (session): a running :class:`~rayqueue_local.LocalControlPlane`.
  Custom resources are validated against the CRDs in ``$RAYQUEUE_CRDS_DIR`` when that is set
  (unvalidated otherwise). It runs the whole emulation, as ``rayqueue local up`` does; start-up
  options are given with ``localplane_options`` (override this session fixture in your
  ``conftest.py`` to return a dict of keyword arguments, e.g. ``{"ray_enabled": False}``; the
  options are :class:`~rayqueue_local.ControlPlaneOptions`).
* ``localplane_api_client`` (session): a ``kubernetes.client.ApiClient`` for the admin, TLS verified.
* ``localplane_namespace`` (function): a fresh namespace for one test, deleted (with its contents) afterwards.

Example (a user's own test)::

    # conftest.py
    pytest_plugins = ["rayqueue_local.pytest_plugin"]

    # test_cluster.py
    from kubernetes import client

    def test_my_cluster(localplane_api_client, localplane_namespace):
        core = client.CoreV1Api(localplane_api_client)
        core.create_namespaced_config_map(localplane_namespace, {"metadata": {"name": "cfg"}})
        names = [c.metadata.name for c in core.list_namespaced_config_map(localplane_namespace).items]
        assert names == ["cfg"]

The control plane's URL, CA file and kubeconfig are ``localplane.server``, ``.ca_cert_path`` and
``.kubeconfig_path``; ``localplane.faults`` injects faults.
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_local.storage.store import StoreError

__all__ = ["localplane", "localplane_api_client", "localplane_namespace", "localplane_options"]


@pytest.fixture(scope="session")
def localplane_options() -> dict[str, Any]:
    """Keyword arguments for the session's ``LocalControlPlane`` (override to customise)."""
    return {}


@pytest.fixture(scope="session")
def localplane(localplane_options: dict[str, Any]) -> Iterator[LocalControlPlane]:
    """One local control plane for the test session."""
    options = dict(localplane_options)
    options.setdefault("crd_dir", os.environ.get("RAYQUEUE_CRDS_DIR") or None)
    with LocalControlPlane(**options) as cp:
        yield cp


@pytest.fixture(scope="session")
def localplane_api_client(localplane: LocalControlPlane) -> Iterator[Any]:
    """A ``kubernetes.client.ApiClient`` for the admin of the session's control plane."""
    client = localplane.api_client()
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def localplane_namespace(localplane: LocalControlPlane, request: pytest.FixtureRequest) -> Iterator[str]:
    """A new namespace named after the test (deleted with its contents afterwards)."""
    stem = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower()).strip("-")[:40].strip("-") or "test"
    name = f"{stem}-{uuid.uuid4().hex[:6]}"
    localplane.store.create("namespaces", {"metadata": {"name": name}})
    try:
        yield name
    finally:
        with contextlib.suppress(StoreError):
            localplane.store.delete("namespaces", None, name)
