"""Interoperability with peer clients installed in virtual environments of their own.

codeflare-sdk pins its own ``kubernetes``, ``ray`` and ``pydantic``, so it cannot share the project's
environment: :func:`codeflare_python` creates ``~/.cache/rayqueue-tests/codeflare-sdk-<version>/`` once
(``python -m venv`` and ``pip install codeflare-sdk==<version>``, about 930 MB) and reuses it; it is
built under a ``.partial`` name and renamed when complete, so an interrupted install is never used.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rayqueue_local import LocalControlPlane
from rayqueue_local.scenarios import team_queue

CODEFLARE_VERSION = "0.40.1"
CACHE = Path(os.environ.get("RAYQUEUE_TEST_CACHE", Path.home() / ".cache" / "rayqueue-tests"))


def ensure_codeflare_venv(version: str = CODEFLARE_VERSION) -> Path:
    """The Python of a venv with ``codeflare-sdk==version`` (created on first use)."""
    target = CACHE / f"codeflare-sdk-{version}"
    python = target / "bin" / "python"
    if python.is_file():
        return python
    partial = CACHE / f"codeflare-sdk-{version}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(partial)], check=True)
    subprocess.run(
        [str(partial / "bin" / "python"), "-m", "pip", "install", "-q", f"codeflare-sdk=={version}"],
        check=True,
        timeout=1800,
    )
    partial.rename(target)
    return python


@pytest.fixture(scope="session")
def codeflare_python() -> Path:
    """The Python of codeflare-sdk's own venv."""
    return ensure_codeflare_venv()


@pytest.fixture(scope="session")
def codeflare_plane(crd_dir: Path) -> Iterator[Any]:
    """A control plane with real Ray heads and the team queue in the namespace ``cf-team``."""
    with LocalControlPlane(crd_dir=crd_dir, keda_enabled=False, prometheus_enabled=False) as cp:
        cp.store.create("namespaces", {"metadata": {"name": "cf-team"}})
        for obj in team_queue("cf-team"):
            cp.apply(obj)
        yield cp
