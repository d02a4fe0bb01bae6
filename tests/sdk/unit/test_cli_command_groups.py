"""`rayqueue`'s command groups: the SDK's own ones loaded only when they run, `local` through the
`rayqueue.cli` entry point when rayqueue_local is installed, and an install hint when it is not."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import EntryPoint

import pytest

from rayqueue_sdk.cli import main as cli_main
from rayqueue_sdk.cli.exit_codes import USAGE


def test_local_comes_from_rayqueue_locals_entry_point() -> None:
    points = {ep.name: ep.value for ep in cli_main.plugin_groups()}
    assert points.get("local") == "rayqueue_local.cli:register"
    assert cli_main.build_parser().parse_args(["local", "down"]).local_command == "down"


def test_local_help_is_rayqueue_locals_own(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli_main.main(["local", "up", "--help"])
    assert info.value.code == 0 and "--state-dir" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["local", "up", "--port", "0"], ["local", "--help"], ["-v", "local"]])
def test_without_rayqueue_local_local_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    monkeypatch.setattr(cli_main, "plugin_groups", list)
    assert cli_main.main(argv) == USAGE != 0
    err = capsys.readouterr().err
    assert "pip install rayqueue_local" in err and "pip install -e ./local" in err


def test_an_entry_point_that_cannot_be_imported_counts_as_not_installed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = EntryPoint("local", "rayqueue_local_gone.cli:register", cli_main.ENTRY_POINT_GROUP)
    monkeypatch.setattr(cli_main, "plugin_groups", lambda: [stale])
    assert cli_main.main(["local", "status"]) == USAGE
    assert "pip install rayqueue_local" in capsys.readouterr().err


def test_help_lists_every_group_a_missing_one_marked(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli_main, "plugin_groups", list)
    with pytest.raises(SystemExit):
        cli_main.main(["--help"])
    out = capsys.readouterr().out
    assert all(name in out for name in cli_main.BUILTIN_GROUPS)
    assert "(not installed)" in out


def test_a_group_module_is_loaded_only_when_its_command_runs() -> None:
    code = (
        "import sys; from rayqueue_sdk.cli.main import build_parser; build_parser(); "
        "print(sorted(m for m in sys.modules if m.startswith(('rayqueue_sdk.cli.', 'rayqueue_sdk.job', "
        "'rayqueue_sdk.cluster', 'pydantic')))); build_parser('job'); "
        "print('rayqueue_sdk.cli.job' in sys.modules, 'rayqueue_sdk.cli.cluster' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["['rayqueue_sdk.cli.exit_codes', 'rayqueue_sdk.cli.main']", "True False"]


def test_command_of_skips_the_global_options() -> None:
    assert cli_main.command_of(["-v", "job", "status", "x"]) == "job"
    assert cli_main.command_of(["--version"]) is None
