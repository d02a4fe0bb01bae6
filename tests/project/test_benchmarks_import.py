"""Every benchmark still imports what it uses: a renamed or removed name of either package breaks a
benchmark only when someone runs it, long after the change (bench_kuberay lost ``ray_executable`` that way,
and eta_accuracy its positional ``read_queues`` call)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).parents[2] / "benchmarks").glob("*.py"))


def test_there_are_benchmarks() -> None:
    assert len(BENCHMARKS) >= 10


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.name)
def test_the_benchmark_imports(path: Path) -> None:
    spec = importlib.util.spec_from_file_location(f"benchmark_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    try:
        spec.loader.exec_module(module)  # the top level only: each runs its work under __main__
    finally:
        del sys.modules[spec.name]
    assert callable(getattr(module, "main", None)) or "__main__" in path.read_text(encoding="utf-8")
