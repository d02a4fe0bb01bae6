"""`rayqueue --help` tells a CI pipeline every exit code the commands use."""

from __future__ import annotations

import subprocess
import sys

from rayqueue_sdk.cli.exit_codes import EXIT_CODES, JOB_FAILED, MEANINGS


def test_help_lists_every_exit_code_with_its_meaning() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "rayqueue_sdk.cli.main", "--help"], capture_output=True, text=True, check=True
    ).stdout
    table = out[out.index("exit codes:") :]
    for code, meaning in MEANINGS.items():
        assert f"  {code}  {meaning}" in table, (code, meaning)
    for cls, code in EXIT_CODES.items():
        line = next(line for line in table.splitlines() if line.strip().startswith(f"{code} "))
        assert cls.__name__ in line, (cls, code, line)
    assert f"{JOB_FAILED}  a job failed or was stopped" in table
    assert "0  success" in table
