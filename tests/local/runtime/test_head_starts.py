"""Every Ray head start is recorded where the environment asks (runtime/headstarts), from any process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rayqueue_local.runtime.headstarts import HEAD_STARTS_VAR, read_head_starts, record_head_start
from rayqueue_local.runtime.raylocal import RayHead, RayHeadSpec


def test_starts_from_several_processes_are_whole_lines(tmp_path: Path) -> None:
    record = tmp_path / "starts"
    writer = textwrap.dedent(
        f"""
        from rayqueue_local.runtime.headstarts import record_head_start
        environ = {{"{HEAD_STARTS_VAR}": {str(record)!r}}}
        for i in range(200):
            record_head_start("ns-" + str(i % 7) + "/a head with spaces in its label", environ)
        """
    )
    procs = [subprocess.Popen([sys.executable, "-c", writer]) for _ in range(4)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]
    starts = read_head_starts(str(record))
    assert len(starts) == 800
    assert {s.pid for s in starts} == {p.pid for p in procs}
    assert {s.label for s in starts} == {f"ns-{i}/a head with spaces in its label" for i in range(7)}


def test_an_unwritable_record_does_not_fail_the_caller(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    record_head_start("ns/a", {HEAD_STARTS_VAR: str(tmp_path / "no-such-dir" / "starts")})
    assert "could not record the start of Ray head ns/a" in caplog.text
    assert read_head_starts(str(tmp_path / "no-such-dir" / "starts")) == []


@pytest.mark.ray
def test_a_head_start_is_recorded_by_the_process_that_started_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "starts"
    monkeypatch.setenv(HEAD_STARTS_VAR, str(record))
    head = RayHead(RayHeadSpec(num_cpus=1, label="ns/recorded"))
    try:
        head.start()  # returns once `ray start` is spawned; the head is not waited for
    finally:
        assert head.stop(grace=0) == []
    (start,) = read_head_starts(str(record))
    assert (start.label, start.pid) == ("ns/recorded", os.getpid())
