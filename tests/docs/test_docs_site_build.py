"""``mkdocs build --strict`` passes (a broken link, a missing anchor or reference fails it), offline, and the
generated reference pages hold every field, command and exit code."""

from __future__ import annotations

import importlib.util
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from rayqueue_sdk.cli.exit_codes import MEANINGS
from rayqueue_sdk.config.models import ClusterConfiguration, ManagedClusterConfig, WorkerGroup

REPO = Path(__file__).resolve().parents[2]


def _generate_module() -> Any:
    spec = importlib.util.spec_from_file_location("docs_generate", REPO / "docs" / "_gen" / "generate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate = _generate_module()


@pytest.mark.slow
def test_mkdocs_build_strict_offline(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO / "local" / "src")]),
        "DISABLE_MKDOCS_2_WARNING": "true",
        "NO_MKDOCS_2_WARNING": "1",
        # any attempt to reach the network at build time fails fast instead of fetching
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
    }
    site = tmp_path / "site"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(REPO / "mkdocs.yml"),
            "-d",
            str(site),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    for page in ("troubleshooting", "migration", "getting-started", "architecture", "reference/api"):
        assert (site / page / "index.html").is_file(), page
    config = (site / "reference" / "configuration" / "index.html").read_text()
    assert "priority_class" in config and "worker_accelerators" in config
    api = (site / "reference" / "api" / "index.html").read_text()
    assert 'id="rayqueue_sdk.cluster.cluster.Cluster"' in api
    assert 'class="admonition' not in api.split('id="rayqueue_sdk.cluster.cluster.Cluster"')[1][:3000]
    # Cluster's and RayJob's methods live in one module per concept (mixins): their pages still list them
    for method in ("Cluster.scale_to_zero", "Cluster.job_client", "Cluster.to_yaml", "RayJob.view"):
        assert f'id="rayqueue_sdk.{"cluster.cluster" if method[0] == "C" else "job.rayjob"}.{method}"' in api


def test_no_build_time_fetch_is_configured() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    plugins = [p if isinstance(p, str) else next(iter(p)) for p in config["plugins"]]
    assert not {"privacy", "social", "material/privacy", "material/social"} & set(plugins)
    assert config["theme"]["font"] is False  # no web font from a CDN


@pytest.mark.parametrize("model", [ClusterConfiguration, ManagedClusterConfig, WorkerGroup])
def test_configuration_reference_has_every_field_with_a_checked_example(model: Any) -> None:
    table = generate.model_table(model)
    rows = [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in table.splitlines()[2:]]
    assert [cells[0].strip("`") for cells in rows] == list(model.model_fields)
    for cells in rows:
        assert len(cells) == 5 and all(cells[:3]) and cells[4].startswith(f"`{model.__name__}("), cells


def test_an_invalid_example_fails_the_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(generate.EXAMPLES, "num_workers", -1)
    with pytest.raises(ValueError):
        generate.model_table(ClusterConfiguration)
    monkeypatch.delitem(generate.EXAMPLES, "num_workers")
    with pytest.raises(KeyError):
        generate.model_table(ClusterConfiguration)


def test_cli_reference_walks_every_command_and_lists_every_exit_code() -> None:
    commands = dict(generate.cli_commands())
    for line in ("rayqueue", "rayqueue job submit", "rayqueue job logs", "rayqueue cluster wait",
                 "rayqueue queue list", "rayqueue local up"):  # fmt: skip
        assert line in commands, line
    assert "--follow" in commands["rayqueue job logs"]
    page = generate.cli_page()
    for code in MEANINGS:
        assert f"\n| {code} | " in page


def test_the_build_makes_no_network_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    # the generators themselves run offline: any socket connect would raise
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("network access while generating the docs")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    for make in generate.PAGES.values():
        assert make()
