"""`rayqueue job status` and `rayqueue cluster status` of something that does not exist exit alike (3)."""

from __future__ import annotations

import pytest
from sdk_helpers import NS

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk.cli.exit_codes import code_for
from rayqueue_sdk.cli.main import main
from rayqueue_sdk.errors import NotFoundError


@pytest.mark.parametrize(
    "argv",
    [["cluster", "status", "nope"], ["job", "status", "nope"]],
    ids=["cluster", "job-owned"],
)
def test_status_of_a_missing_thing_exits_not_found(
    plane: LocalControlPlane, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    connection = ["--kubeconfig", str(plane.kubeconfig_path), "--context", "rayqueue-local", "-n", NS]
    assert main([*argv, *connection]) == code_for(NotFoundError) == 3
    err = capsys.readouterr().err
    assert "NotFound" in err and "'nope'" in err  # a pipeline's log says what was missing
