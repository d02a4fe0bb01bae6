"""The ``rayqueue_local`` pytest plugin, used from a user's own project (a pytest run in a subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

USER_TEST = """
from kubernetes import client


def test_users_own_test(local_control_plane, api_client, namespace):
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "cfg"}})
    assert [c.metadata.name for c in core.list_namespaced_config_map(namespace).items] == ["cfg"]
    assert local_control_plane.server.startswith("https://127.0.0.1:")


def test_namespaces_are_fresh(api_client, namespace):
    assert client.CoreV1Api(api_client).list_namespaced_config_map(namespace).items == []
"""


def test_fixtures_in_a_users_project(tmp_path: Path) -> None:
    (tmp_path / "test_user.py").write_text(USER_TEST)
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
    assert "2 passed" in out.stdout
