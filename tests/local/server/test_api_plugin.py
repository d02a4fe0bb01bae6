"""The ``rayqueue_local`` pytest plugin, used from a user's own project (a pytest run in a subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

USER_TEST = """
from kubernetes import client


def test_users_own_test(localplane, localplane_api_client, localplane_namespace):
    core = client.CoreV1Api(localplane_api_client)
    core.create_namespaced_config_map(localplane_namespace, {"metadata": {"name": "cfg"}})
    names = [c.metadata.name for c in core.list_namespaced_config_map(localplane_namespace).items]
    assert names == ["cfg"]
    assert localplane.server.startswith("https://127.0.0.1:")


def test_namespaces_are_fresh(localplane_api_client, localplane_namespace):
    api = client.CoreV1Api(localplane_api_client)
    assert api.list_namespaced_config_map(localplane_namespace).items == []


def test_users_own_fixtures_keep_their_names(namespace, api_client):
    # The plugin injects no unprefixed fixture: the project's own `namespace`/`api_client` win.
    assert (namespace, api_client) == ("mine", "my-client")
"""

USER_CONFTEST = """
import pytest

pytest_plugins = ["rayqueue_local.pytest_plugin"]


@pytest.fixture
def namespace():
    return "mine"


@pytest.fixture
def api_client():
    return "my-client"
"""


@pytest.mark.slow
def test_fixtures_in_a_users_project(tmp_path: Path) -> None:
    (tmp_path / "test_user.py").write_text(USER_TEST)
    (tmp_path / "conftest.py").write_text(USER_CONFTEST)
    env = {
        k: v for k, v in os.environ.items() if k != "RAYQUEUE_CRDS_DIR"
    }  # no CRDs: unvalidated, still works
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_user.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "3 passed" in out.stdout


def test_plugin_is_opt_in(tmp_path: Path) -> None:
    """Without the opt-in, a pytest run has none of the plugin's fixtures."""
    (tmp_path / "test_user.py").write_text("def test_x(localplane_namespace):\n    pass\n")
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_user.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode != 0
    assert "fixture 'localplane_namespace' not found" in out.stdout
