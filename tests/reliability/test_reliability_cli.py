"""The catalogue's CLI cases: one line (no traceback) naming the option, field or file, a table exit code.

The CLI runs in-process against the catalogue's plane as a user limited to the catalogue's namespace
(a kubeconfig written with the plane's CA), and every case ends with the namespace unchanged.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from reliability_catalogue import CLI_CASES, NS, CliCase

from rayqueue_local import LocalControlPlane
from rayqueue_local.apiserver.kubeconfig import merge_context
from rayqueue_sdk.cli.exit_codes import MEANINGS
from rayqueue_sdk.cli.main import main

pytestmark = pytest.mark.usefixtures("assert_state_unchanged")


@pytest.fixture(scope="module")
def rel_kubeconfig(
    rel_plane: LocalControlPlane, rel_user_token: str, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    path = tmp_path_factory.mktemp("cli") / "kubeconfig"
    merge_context(
        path,
        "rel",
        server=rel_plane.server,
        ca_path=str(rel_plane.ca_cert_path),
        user="rel-user",
        token=rel_user_token,
        namespace=NS,
    )
    return path


@pytest.mark.parametrize("case", CLI_CASES, ids=[c.id for c in CLI_CASES])
def test_cli_bad_input_is_one_line_with_the_documented_exit_code(
    case: CliCase, rel_kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "input.yaml"
    if case.file is not None:
        file.write_bytes(case.file)
    places = {"file": str(file), "missing": str(tmp_path / "missing.yaml"), "dir": str(tmp_path)}
    argv = [arg.format(**places) for arg in case.argv]
    if "--kubeconfig" not in argv:
        argv += ["--kubeconfig", str(rel_kubeconfig)]
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's usage errors
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    # argparse's own errors come after a usage block (its continuation lines are indented).
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith(("usage:", " "))]
    assert code == case.exit_code, (code, err)
    assert case.exit_code in MEANINGS
    assert "Traceback" not in err + out, err
    assert len(lines) == 1, err
    assert case.names in lines[0], (case.names, lines[0])
    if case.file is not None and ": --file:" in lines[0] + ": --cluster-config:":
        assert str(file) in lines[0], lines[0]  # a problem with the file names the file
