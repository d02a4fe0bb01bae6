"""``member_states``: how the plane sees that a head's GCS server died while `ray start` still waits on it
(a child that has exited and that its parent has not reaped yet is a zombie, ``Z``)."""

from __future__ import annotations

import sys
import time

from rayqueue_local.runtime.processes import spawn
from rayqueue_local.runtime.sessions import member_states

PARENT = "import subprocess, time; subprocess.Popen(['sleep', '{seconds}']); time.sleep(30)"


def _states_until(sid: int, done: object, timeout: float = 20.0) -> list[str]:
    deadline = time.monotonic() + timeout
    states = member_states(sid, "sleep")
    while states != done and time.monotonic() < deadline:
        time.sleep(0.05)
        states = member_states(sid, "sleep")
    return states


def test_a_child_that_runs_then_exits_unreaped_is_seen_running_then_as_a_zombie() -> None:
    parent = spawn([sys.executable, "-c", PARENT.format(seconds=1)], name="unreaping parent")
    try:
        assert _states_until(parent.sid, ["S"]) == ["S"]  # sleeping in its sleep
        assert _states_until(parent.sid, ["Z"]) == ["Z"]  # exited; the parent never waits for it
        assert member_states(parent.sid, "no-such-command") == []
    finally:
        parent.stop(0.0)
