"""The examples in the docstrings of the configuration, manifest and admission modules (and the Kueue
emulation's Workload lifecycle) run and print what they say."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "rayqueue_sdk.manifests.quantities",
    "rayqueue_sdk.config.models",
    "rayqueue_sdk.config.accelerators",
    "rayqueue_sdk.manifests.ray_image",
    "rayqueue_sdk.config.fields",
    "rayqueue_sdk.config.errors",
    "rayqueue_sdk.config.worker_group",
    # rayqueue_sdk.cluster.cluster and rayqueue_sdk.job.rayjob: their examples apply to an API server, so
    # they run on a local control plane in tests/project/test_module_doctests.py (ON_A_PLANE).
    "rayqueue_sdk.manifests",
    "rayqueue_sdk.manifests.raycluster",
    "rayqueue_sdk.manifests.rayjob",
    "rayqueue_sdk.manifests.rules",
    "rayqueue_sdk.manifests.kueue",
    "rayqueue_sdk.admission.cluster",
    "rayqueue_sdk.admission.phases",
    "rayqueue_sdk.admission.conditions",
    "rayqueue_sdk.admission.workload",
    "rayqueue_sdk.admission.job",
    "rayqueue_local.controllers.kueue.conditions",
    "rayqueue_local.controllers.kueue.lifecycle",
    "rayqueue_local.controllers.kueue.jobs",
    "rayqueue_local.scenarios",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
