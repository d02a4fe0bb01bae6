"""The docstring examples of every module of both packages run, and print what they say.

The modules are found with :mod:`pkgutil`, so a new module's examples run without being listed here. A
module that exports names (a non-empty ``__all__``) must show at least one example, unless it is listed
in :data:`NO_EXAMPLE` with the reason.
"""

from __future__ import annotations

import doctest
import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from project_modules import all_modules

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk.kube.session import KubeSession

# Modules whose exported names cannot show a runnable example, and why.
NO_EXAMPLE = {
    # pytest fixtures: they run under pytest, the suite's tests/local use them.
    "rayqueue_local.pytest_plugin",
    # `rayqueue local up`: serves until interrupted.
    "rayqueue_local.serve",
}


# Modules whose examples talk to an API server: they run against a local control plane (Kueue and KubeRay,
# no Ray processes, KEDA or Prometheus), with ``api`` its client and ``session`` a KubeSession over it in
# namespace "default" (the only names they are given).
ON_A_PLANE = {
    "rayqueue_sdk.kube.lookups",
    "rayqueue_sdk.kube.session",
    "rayqueue_sdk.cluster.cluster",
    "rayqueue_sdk.cluster.rayjobs",
    "rayqueue_sdk.cluster.scale_to_zero",
    "rayqueue_sdk.cluster.compat",
    "rayqueue_sdk.cluster.dashboard",
    "rayqueue_sdk.cluster.observe",
    "rayqueue_sdk.queues.overview",
    "rayqueue_sdk.cluster.view",
    "rayqueue_sdk.cluster.wait",
    "rayqueue_sdk.kube.access",
    "rayqueue_sdk.kube.informer",
    "rayqueue_sdk.kube.pods",
    "rayqueue_sdk.queues.local_queues",
    "rayqueue_sdk.queues.reads",
    "rayqueue_sdk.queues.eta",
    "rayqueue_sdk.queues.timeline",
    "rayqueue_sdk.cluster.preflight",
    "rayqueue_sdk.scaling.policy",
    "rayqueue_sdk.scaling.planning",
    "rayqueue_sdk.job.rayjob",
    "rayqueue_sdk.job.view",
    "rayqueue_sdk.job.peer_api",
}

MODULES = all_modules()


@pytest.fixture(scope="module")
def doctest_api(crd_dir: Path) -> Iterator[Any]:
    """An ``ApiClient`` of a ray-less local control plane, started for the first example that needs it."""
    with LocalControlPlane(
        crd_dir=crd_dir, ray_enabled=False, keda_enabled=False, prometheus_enabled=False
    ) as plane:
        yield plane.api_client()


def test_every_module_is_found() -> None:
    """pkgutil sees the subpackages' modules too (a broken walk would make the tests below vacuous)."""
    assert "rayqueue_sdk.config.models" in MODULES
    assert "rayqueue_local.controllers.kueue.lifecycle" in MODULES
    assert len(MODULES) > 100


def test_the_plane_modules_exist() -> None:
    assert not ON_A_PLANE - set(MODULES), ON_A_PLANE - set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests(name: str, request: pytest.FixtureRequest) -> None:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    extra: dict[str, Any] = {}
    if name in ON_A_PLANE:
        api = request.getfixturevalue("doctest_api")
        extra = {"api": api, "session": KubeSession(api, namespace="default")}
    for test in finder.find(module, name, extraglobs=extra):
        runner.run(test, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, "".join(report)
    if getattr(module, "__all__", None) and name not in NO_EXAMPLE:
        assert result.attempted > 0, f"{name} exports {module.__all__} but shows no example"
