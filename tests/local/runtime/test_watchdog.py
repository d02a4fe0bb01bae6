"""The process watchdog as a module: light to import, and it stops what its owner recorded."""

from __future__ import annotations

import doctest
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rayqueue_local.runtime import sessions, watchdog
from rayqueue_local.runtime.sessions import session_pids


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen(["sleep", "600"], start_new_session=True)


def _start_watchdog() -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "rayqueue_local.runtime.watchdog", str(os.getpid())],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_importing_it_loads_nothing_heavy() -> None:
    code = (
        "import sys, rayqueue_local.runtime.watchdog; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('rayqueue_local', 'yaml', 'ray')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    light = [  # the package face (errors and options are stdlib-only), runtime, sessions, watchdog
        "rayqueue_local",
        "rayqueue_local.errors",
        "rayqueue_local.options",
        "rayqueue_local.runtime",
        "rayqueue_local.runtime.sessions",
        "rayqueue_local.runtime.watchdog",
    ]
    assert out.stdout.strip() == str(light)


def test_eof_stops_the_recorded_sessions_and_removes_their_dirs(tmp_path: Path) -> None:
    kept, stopped = _sleeper(), _sleeper()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    dog = _start_watchdog()
    try:
        assert dog.stdin is not None
        dog.stdin.write(f"+{stopped.pid} {scratch}\n+{kept.pid}\n-{kept.pid}\n".encode())
        dog.stdin.close()  # what the owner's death looks like from here
        assert dog.wait(timeout=30) == 0
        assert stopped.wait(timeout=5) == -15 and session_pids(stopped.pid) == []
        assert not scratch.exists()
        assert kept.poll() is None  # discarded with '-': left alone
    finally:
        for proc in (kept, stopped):
            proc.kill()
            proc.wait()


def test_usage_error_without_an_owner_pid() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "rayqueue_local.runtime.watchdog"], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 2 and "usage" in out.stderr


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["+1 /tmp/a", "+2"], {1: "/tmp/a", 2: ""}),
        (["+1", "-1"], {}),
        (["-5"], {}),
        (["", "+x", "?3", "+3 /d"], {3: "/d"}),
    ],
)
def test_apply_line(lines: list[str], expected: dict[int, str]) -> None:
    state: dict[int, str] = {}
    for line in lines:
        watchdog.apply_line(state, line)
    assert state == expected


def test_stop_sessions_reports_nothing_left() -> None:
    procs = [_sleeper(), _sleeper()]
    started = time.monotonic()
    assert sessions.stop_sessions([p.pid for p in procs], grace=2.0) == {}
    assert time.monotonic() - started < 5
    assert [p.wait(timeout=5) for p in procs] == [-15, -15]


@pytest.mark.parametrize("module", [sessions, watchdog])
def test_docstring_examples(module: object) -> None:
    result = doctest.testmod(module)  # type: ignore[arg-type]
    assert result.attempted > 0 and result.failed == 0
