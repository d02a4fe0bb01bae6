"""Fixtures for the notebook tests: the quickstart notebook executed once in a real Jupyter kernel,
a control plane for the widget tests, and the artefact directory.

The quickstart starts its own local control plane inside the kernel (as a user's notebook does), so the
kernel run needs no plane from here; the widget tests share one session plane without Ray heads started
(their clusters wait in a zero-quota queue).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from notebook_helpers import QUICKSTART, NotebookRun, execute_notebook

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk.kube.client import set_current_client


@pytest.fixture(scope="session")
def artefacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the notebook tests leave what a person may want to look at (executed notebooks, HTML,
    screenshots): ``$RAYQUEUE_TEST_ARTEFACTS/notebook`` when set, else under pytest's base temp dir."""
    base = os.environ.get("RAYQUEUE_TEST_ARTEFACTS")
    out = Path(base) / "notebook" if base else tmp_path_factory.getbasetemp() / "notebook-artefacts"
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.fixture(scope="session")
def quickstart_run(artefacts: Path) -> NotebookRun:
    """The quickstart notebook, executed once for the session in a real kernel."""
    return execute_notebook(QUICKSTART, artefacts / "0_quickstart.executed.ipynb")


@pytest.fixture(scope="session")
def widget_plane(crd_dir: Path) -> Iterator[LocalControlPlane]:
    """A control plane for the widget tests (Kueue, KubeRay; no KEDA or Prometheus)."""
    with LocalControlPlane(crd_dir=crd_dir, keda_enabled=False, prometheus_enabled=False) as cp:
        yield cp


@pytest.fixture(autouse=True)
def _no_current_client() -> Iterator[None]:
    set_current_client(None)
    yield
    set_current_client(None)
