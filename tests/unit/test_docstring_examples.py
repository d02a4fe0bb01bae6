"""The examples in the docstrings of the configuration, manifest and admission modules (and the Kueue
emulation's Workload lifecycle) run and print what they say."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "rayqueue_sdk.quantities",
    "rayqueue_sdk.config",
    "rayqueue_sdk.accelerators",
    "rayqueue_sdk.ray_image",
    "rayqueue_sdk.config_fields",
    "rayqueue_sdk.config_errors",
    "rayqueue_sdk.worker_group",
    "rayqueue_sdk.cluster",
    "rayqueue_sdk.job",
    "rayqueue_sdk.manifests",
    "rayqueue_sdk.manifests.raycluster",
    "rayqueue_sdk.manifests.rayjob",
    "rayqueue_sdk.manifests.rules",
    "rayqueue_sdk.manifests.kueue",
    "rayqueue_sdk.admission",
    "rayqueue_sdk.phases",
    "rayqueue_sdk.conditions",
    "rayqueue_sdk.workload_state",
    "rayqueue_sdk.job_admission",
    "rayqueue_sdk.observe",
    "rayqueue_sdk.local.controllers.kueue.conditions",
    "rayqueue_sdk.local.controllers.kueue.lifecycle",
    "rayqueue_sdk.local.controllers.kueue.jobs",
    "rayqueue_sdk.local.scenarios",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
