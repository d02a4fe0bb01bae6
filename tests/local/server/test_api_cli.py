"""``rayqueue local up`` / ``down`` / ``status`` as subprocesses, as a user runs them."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from kubernetes import client, config

from rayqueue_local import ControlPlaneOptions
from rayqueue_local.options import option_names


def _rayqueue(*args: str, env: dict[str, str], **kw: Any) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "rayqueue_sdk.cli.main", *args],
        env=env,
        text=True,
        capture_output=True,
        timeout=120,
        **kw,
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "RAYQUEUE_HOME": str(tmp_path / "home"),
        "KUBECONFIG": str(tmp_path / "kube" / "config"),
    }


@pytest.mark.slow
def test_local_up_status_down(env: dict[str, str], tmp_path: Path, crd_dir: Path) -> None:
    kubeconfig = Path(env["KUBECONFIG"])
    kubeconfig.parent.mkdir(parents=True)
    other = {"name": "other", "context": {"cluster": "elsewhere", "user": "someone"}}
    kubeconfig.write_text(
        yaml.safe_dump(
            {"apiVersion": "v1", "kind": "Config", "contexts": [other], "current-context": "other"}
        )
    )
    up = subprocess.Popen(
        [sys.executable, "-m", "rayqueue_sdk.cli.main", "local", "up", "--crds", str(crd_dir)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert up.stdout is not None
        first = up.stdout.readline()
        assert first.startswith("Local control plane at https://127.0.0.1:"), first + (
            up.stderr.read() if up.poll() is not None else ""
        )
        server = first.split()[4]
        run = json.loads((Path(env["RAYQUEUE_HOME"]) / "local.json").read_text())
        assert run["pid"] == up.pid and run["server"] == server

        doc = yaml.safe_load(kubeconfig.read_text())
        assert doc["current-context"] == "rayqueue-local"
        assert {c["name"] for c in doc["contexts"]} == {"other", "rayqueue-local"}
        api = client.CoreV1Api(config.new_client_from_config(str(kubeconfig)))
        assert "default" in [n.metadata.name for n in api.list_namespace().items]

        status = _rayqueue("local", "status", env=env)
        assert status.returncode == 0 and server in status.stdout
        second = _rayqueue("local", "up", env=env)
        assert second.returncode == 1 and "already running" in second.stdout

        down = _rayqueue("local", "down", env=env)
        assert down.returncode == 0 and "Stopped" in down.stdout
        assert up.wait(timeout=60) == 0
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
    assert not (Path(env["RAYQUEUE_HOME"]) / "local.json").exists()
    doc = yaml.safe_load(kubeconfig.read_text())
    assert [c["name"] for c in doc["contexts"]] == ["other"]  # our context removed, the user's kept
    assert _rayqueue("local", "status", env=env).returncode == 1
    assert "No local control plane" in _rayqueue("local", "down", env=env).stdout


def test_console_script_is_installed(env: dict[str, str]) -> None:
    import shutil

    script = shutil.which("rayqueue") or str(Path(sys.executable).with_name("rayqueue"))
    out = subprocess.run([script, "local", "--help"], env=env, text=True, capture_output=True, timeout=60)
    assert out.returncode == 0 and "up" in out.stdout and "down" in out.stdout


def test_help_lists_the_subcommands(env: dict[str, str]) -> None:
    out = _rayqueue("--help", env=env)
    assert out.returncode == 0 and "local" in out.stdout
    out = _rayqueue("local", "up", "--help", env=env)
    assert "--state-dir" in out.stdout and "--kubeconfig" in out.stdout


@pytest.mark.parametrize("module", ["rayqueue_sdk.cli.main", "rayqueue_local"])
def test_import_is_light(env: dict[str, str], module: str) -> None:
    code = (
        f"import sys, {module} as c; getattr(c, 'build_parser', list)(); "
        "print(sorted(m for m in ('kubernetes', 'yaml', 'cryptography', 'ray') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, text=True, capture_output=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


@pytest.mark.slow
def test_ctrl_c_stops_cleanly(env: dict[str, str]) -> None:
    import signal

    env = {k: v for k, v in env.items() if k != "RAYQUEUE_CRDS_DIR"}

    up = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rayqueue_sdk.cli.main",
            "local",
            "up",
            "--state-dir",
            str(Path(env["RAYQUEUE_HOME"]) / "s"),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert up.stdout is not None
        assert up.stdout.readline().startswith("Local control plane at https://")
        up.send_signal(signal.SIGINT)
        assert up.wait(timeout=60) == 0
        assert "Stopped." in up.stdout.read()
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
    assert not (Path(env["RAYQUEUE_HOME"]) / "local.json").exists()
    assert "unvalidated" in (up.stderr.read() if up.stderr else "")  # no --crds and no RAYQUEUE_CRDS_DIR


@pytest.mark.slow
def test_up_on_a_busy_port_says_so(env: dict[str, str]) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = _rayqueue("local", "up", "--port", str(port), env=env)
    assert out.returncode == 1
    assert "Cannot start the local control plane" in out.stdout
    assert not (Path(env["RAYQUEUE_HOME"]) / "local.json").exists()


def _start(env: dict[str, str], *extra: str) -> Any:
    up = subprocess.Popen(
        [sys.executable, "-m", "rayqueue_sdk.cli.main", "local", "up", *extra],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert up.stdout is not None
    line = up.stdout.readline()
    assert line.startswith("Local control plane at https://"), line
    return up


def _stop(env: dict[str, str], up: Any) -> None:
    try:
        assert _rayqueue("local", "down", env=env).returncode == 0
        assert up.wait(timeout=60) == 0
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()


@pytest.mark.slow
def test_state_survives_down_and_up_unless_fresh(env: dict[str, str]) -> None:
    kubeconfig = env["KUBECONFIG"]
    up = _start(env)
    try:
        api = client.CoreV1Api(config.new_client_from_config(kubeconfig))
        api.create_namespaced_config_map("default", {"metadata": {"name": "kept"}})
    finally:
        _stop(env, up)
    up = _start(env)
    try:
        api = client.CoreV1Api(config.new_client_from_config(kubeconfig))
        assert [c.metadata.name for c in api.list_namespaced_config_map("default").items] == ["kept"]
    finally:
        _stop(env, up)
    up = _start(env, "--fresh")
    try:
        api = client.CoreV1Api(config.new_client_from_config(kubeconfig))
        assert api.list_namespaced_config_map("default").items == []
    finally:
        _stop(env, up)


def _run_info(env: dict[str, str]) -> dict[str, Any]:
    info: dict[str, Any] = json.loads((Path(env["RAYQUEUE_HOME"]) / "local.json").read_text())
    return info


@pytest.mark.slow
def test_up_runs_the_whole_emulation_by_default(env: dict[str, str]) -> None:
    from rayqueue_local.runtime.prometheus import PrometheusNotInstalledError, find_prometheus

    try:
        installed = bool(find_prometheus())
    except PrometheusNotInstalledError:
        installed = False
    up = _start(env)
    try:
        assert up.stdout is not None
        described = up.stdout.readline()
        run = _run_info(env)
        status = _rayqueue("local", "status", env=env)
    finally:
        _stop(env, up)
    for name in ("kueue", "kuberay-raycluster", "kuberay-rayjob", "gpu-metrics", "keda-scaledobject"):
        assert name in run["controllers"], run["controllers"]
    assert run["options"]["ray_enabled"] is True and run["options"]["keda_enabled"] is True
    assert run["options"] == dataclasses.asdict(ControlPlaneOptions())  # the Python defaults
    assert (run["prometheus"] or "").startswith("http://127.0.0.1:") is installed
    assert any("Prometheus is not installed" in n for n in run["notices"]) is not installed
    assert "kuberay-rayjob" in described and "Ray heads: real" in described
    assert status.returncode == 0
    assert "keda-scaledobject" in status.stdout and "Ray heads: real" in status.stdout


def test_up_opt_outs_and_set_wins(env: dict[str, str]) -> None:
    up = _start(env, "--no-ray", "--no-keda", "--no-prometheus", "--set", "keda_enabled=true")
    try:
        run = _run_info(env)
        status = _rayqueue("local", "status", env=env)
    finally:
        _stop(env, up)
    assert "kuberay-rayjob" in run["controllers"] and "keda-scaledobject" in run["controllers"]
    assert run["options"]["ray_enabled"] is False and run["options"]["prometheus_enabled"] is False
    assert run["prometheus"] is None
    assert "Ray heads: simulated" in status.stdout and "Prometheus" not in status.stdout


def test_cli_defaults_are_the_python_defaults() -> None:
    from rayqueue_local.cli import options_from_args
    from rayqueue_sdk.cli.main import build_parser

    args = build_parser().parse_args(["local", "up"])
    assert options_from_args(args) == ControlPlaneOptions()
    flags = {name: getattr(args, name) for name in option_names() if hasattr(args, name)}
    assert flags == {name: getattr(ControlPlaneOptions(), name) for name in flags}
    assert set(flags) == {
        "workload_scale",
        "ray_enabled",
        "keda_enabled",
        "prometheus_enabled",
        "kueue_api_versions",
    }


def test_cli_opt_outs_and_set(capsys: pytest.CaptureFixture[str]) -> None:
    from rayqueue_local.cli import options_from_args
    from rayqueue_sdk.cli.main import build_parser

    def parse(*extra: str) -> ControlPlaneOptions:
        return options_from_args(build_parser().parse_args(["local", "up", *extra]))

    assert parse("--no-ray", "--no-keda", "--no-prometheus", "--workload-scale") == ControlPlaneOptions(
        ray_enabled=False, keda_enabled=False, prometheus_enabled=False, workload_scale=True
    )
    assert parse("--no-prometheus", "--set", "prometheus_enabled=true").prometheus_enabled is True
    assert parse("--set", "max_starting_heads=1").max_starting_heads == 1
    with pytest.raises(SystemExit, match="unknown option 'ray'; the options are: workload_scale"):
        parse("--set", "ray=false")
    with pytest.raises(SystemExit, match="max_starting_heads must be at least 1"):
        parse("--set", "max_starting_heads=0")
    assert parse("--kueue-api", "v1beta2").kueue_api_versions == "v1beta2"
    with pytest.raises(SystemExit, match="kueue_api_versions must be one of both, v1beta2, v1beta1"):
        parse("--set", "kueue_api_versions=v1")


@pytest.mark.slow
def test_up_applies_a_scenario_and_rejects_unknown_names(env: dict[str, str]) -> None:
    """On a plane serving Kueue's v1beta1 alone (``--kueue-api v1beta1``): the scenario's v1beta2 objects
    are applied all the same (the plane's own path), and read back at v1beta1, the only version served."""
    args = ("--no-ray", "--no-keda", "--no-prometheus", "--kueue-api", "v1beta1", "--scenario", "seed-004")
    up = _start(env, *args)
    try:
        api = client.CustomObjectsApi(config.new_client_from_config(env["KUBECONFIG"]))
        queues = api.list_cluster_custom_object("kueue.x-k8s.io", "v1beta1", "clusterqueues")["items"]
        with pytest.raises(client.ApiException) as gone:
            api.list_cluster_custom_object("kueue.x-k8s.io", "v1beta2", "clusterqueues")
        core = client.CoreV1Api(config.new_client_from_config(env["KUBECONFIG"]))
        namespaces = {n.metadata.name for n in core.list_namespace().items}
        status = _rayqueue("local", "status", env=env)
    finally:
        _stop(env, up)
    assert gone.value.status == 404
    assert "Kueue API: v1beta1 only" in status.stdout
    assert sorted(q["metadata"]["name"] for q in queues) == ["shared-cq", "team-a-cq", "team-b-cq"]
    assert {"team-a", "team-b"} <= namespaces
    out = _rayqueue("local", "up", "--scenario", "nope", env=env)
    assert out.returncode == 2
    assert "invalid choice: 'nope'" in out.stderr
    assert all(name in out.stderr for name in ("seed-000", "seed-001", "seed-004", "team"))


@pytest.mark.slow
def test_named_instances_run_side_by_side_each_with_its_own_state(env: dict[str, str]) -> None:
    home, kubeconfig = Path(env["RAYQUEUE_HOME"]), env["KUBECONFIG"]
    a = _start(env, "--name", "team-a", "--no-ray", "--no-keda", "--no-prometheus")
    try:
        b = _start(env, "--name", "team-b", "--no-ray", "--no-keda", "--no-prometheus")
        try:
            runs = {n: json.loads((home / f"{n}.json").read_text()) for n in ("team-a", "team-b")}
            assert runs["team-a"]["server"] != runs["team-b"]["server"]
            assert (
                runs["team-a"]["state_dir"] == str(home / "team-a")
                and runs["team-a"]["context"] == "rayqueue-team-a"
            )
            apis = {
                n: client.CoreV1Api(config.new_client_from_config(kubeconfig, context=f"rayqueue-{n}"))
                for n in runs
            }
            apis["team-a"].create_namespaced_config_map("default", {"metadata": {"name": "only-in-a"}})
            assert [c.metadata.name for c in apis["team-b"].list_namespaced_config_map("default").items] == []
            status = _rayqueue("local", "status", "--name", "team-b", env=env)
            assert status.returncode == 0 and runs["team-b"]["server"] in status.stdout
            again = _rayqueue("local", "up", "--name", "team-a", env=env)
            assert again.returncode == 1 and "'team-a' is already running" in again.stdout
            assert "--name" in again.stdout  # says how to start another one
            missing = _rayqueue("local", "status", env=env)  # the default instance is not running
            assert missing.returncode == 1 and "Running: team-a, team-b" in missing.stdout
        finally:
            assert _rayqueue("local", "down", "--name", "team-b", env=env).returncode == 0
            assert b.wait(timeout=60) == 0
        assert (home / "team-a.json").exists() and not (home / "team-b.json").exists()
        bad = _rayqueue("local", "up", "--name", "../escape", env=env)
        assert bad.returncode == 2 and "instance name" in bad.stderr
    finally:
        assert _rayqueue("local", "down", "--name", "team-a", env=env).returncode == 0
        assert a.wait(timeout=60) == 0


@pytest.mark.slow
def test_users_are_added_listed_and_removed_on_a_running_plane(env: dict[str, str]) -> None:
    kubeconfig = env["KUBECONFIG"]
    up = _start(env, "--no-ray", "--no-keda", "--no-prometheus")
    try:
        admin = client.CoreV1Api(config.new_client_from_config(kubeconfig, context="rayqueue-local"))
        admin.create_namespace({"metadata": {"name": "team-a"}})
        added = _rayqueue("local", "user", "add", "alice", "-n", "team-a", env=env)
        assert added.returncode == 0, added.stdout + added.stderr
        assert 'context "rayqueue-local-alice"' in added.stdout
        doc = yaml.safe_load(Path(kubeconfig).read_text())
        token = next(u["user"]["token"] for u in doc["users"] if u["name"] == "rayqueue-local-alice")
        assert token not in added.stdout + added.stderr  # the token goes only into the 0600 kubeconfig
        assert oct(Path(kubeconfig).stat().st_mode & 0o777) == "0o600"
        alice = client.CoreV1Api(config.new_client_from_config(kubeconfig, context="rayqueue-local-alice"))
        alice.create_namespaced_config_map("team-a", {"metadata": {"name": "mine"}})
        with pytest.raises(client.ApiException) as denied:
            alice.list_namespaced_config_map("default")
        assert denied.value.status == 403
        cfg = alice.api_client.configuration
        answer = requests.get(  # the users API is for admins only
            f"{cfg.host}/apis/local.rayqueue.dev/v1/users",
            headers={"Authorization": f"Bearer {token}"},
            verify=cfg.ssl_ca_cert,
            timeout=30,
        )
        assert answer.status_code == 403 and answer.json()["reason"] == "Forbidden"
        assert _rayqueue("local", "user", "add", "root", "--admin", env=env).returncode == 0
        listed = _rayqueue("local", "user", "list", env=env)
        assert listed.returncode == 0 and token not in listed.stdout
        rows = [line.split() for line in listed.stdout.splitlines()]
        assert rows == [["NAME", "NAMESPACES", "ADMIN"], ["alice", "team-a", "no"], ["root", "-", "yes"]]
        no_scope = _rayqueue("local", "user", "add", "carol", env=env)
        assert no_scope.returncode != 0 and "--namespace" in no_scope.stderr
        removed = _rayqueue("local", "user", "remove", "alice", env=env)
        assert removed.returncode == 0 and "Removed user alice" in removed.stdout
        with pytest.raises(client.ApiException) as gone:
            alice.list_namespaced_config_map("team-a")
        assert gone.value.status == 401  # the old token stopped working at once
        doc = yaml.safe_load(Path(kubeconfig).read_text())
        assert "rayqueue-local-alice" not in {c["name"] for c in doc["contexts"]}
        again = _rayqueue("local", "user", "remove", "alice", env=env)
        assert again.returncode == 1 and "not found" in again.stdout
    finally:
        _stop(env, up)
