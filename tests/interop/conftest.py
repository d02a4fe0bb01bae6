"""Interoperability with peer clients installed in virtual environments of their own.

codeflare-sdk pins its own ``ray``, ``ipywidgets``, ``rich`` and ``openshift-client``, so it cannot share
the project's environment. :func:`ensure_codeflare_venv` creates
``~/.cache/rayqueue-tests/codeflare-sdk-<version>-on-project-ray/`` once and reuses it: a venv that sees the
project's packages (``--system-site-packages``), with ``codeflare-sdk==<version>`` installed without its
dependencies and then every one of them at codeflare's own pins, except Ray. The venv uses the project's
Ray (2.60; codeflare pins ``ray[data,default]==2.58.0``): Ray with its data extras is ~900 of the ~930 MB
of a full install, about 5 minutes of a fresh CI machine, and what the test drives (login, the RayCluster
and RayJob objects through the ``kubernetes`` client, at codeflare's pin) does not go through it. The venv
is built under a ``.partial`` name and renamed when complete, so an interrupted install is never used.
"""

from __future__ import annotations

import fcntl
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


# codeflare-sdk 0.40.1's Requires-Dist (its METADATA), Ray left out (see above).
CODEFLARE_DEPENDENCIES = (
    "cryptography>=46.0.7",
    "executing==2.2.1",
    "ipywidgets==8.1.2",
    "kube-authkit>=0.4.0",
    "kubernetes>=27.2.0",
    "openshift-client==1.0.18",
    "pydantic>=2.10.6",
    "rich>=12.5,<15.0",
    "pandas",  # imported by codeflare's widgets; a full install has it from ray[data]
)


def ensure_codeflare_venv(version: str = CODEFLARE_VERSION) -> Path:
    """The Python of a venv with ``codeflare-sdk==version`` (created on first use, about 20 s)."""
    target = CACHE / f"codeflare-sdk-{version}-on-project-ray"
    python = target / "bin" / "python"
    if python.is_file():
        return python
    CACHE.mkdir(parents=True, exist_ok=True)
    # Two pytest-xdist workers may both need it: one builds, the other waits for it.
    with open(CACHE / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not python.is_file():
            _build_codeflare_venv(version, target)
    return python


def _build_codeflare_venv(version: str, target: Path) -> None:
    partial = CACHE / f"{target.name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(partial)], check=True)
    pip = [str(partial / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, "--no-deps", f"codeflare-sdk=={version}"], check=True, timeout=600)
    subprocess.run([*pip, *CODEFLARE_DEPENDENCIES], check=True, timeout=600)
    partial.rename(target)


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
