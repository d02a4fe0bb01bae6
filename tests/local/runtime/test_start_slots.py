"""Machine-wide start slots: planes in other processes share them, a dead holder gives its slot back, and
a start waiting for one can be called off (runtime/startslots.py)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rayqueue_local.runtime.startslots import StartSlots

HOLD = """
import fcntl, sys, time
handle = open(sys.argv[1], "ab")
fcntl.flock(handle, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(60)
"""


def test_a_slot_held_by_one_plane_is_not_given_to_another_until_it_is_released(tmp_path: Path) -> None:
    first, second = StartSlots(2, tmp_path), StartSlots(2, tmp_path)
    a, b = first.try_acquire(), second.try_acquire()
    assert a is not None and b is not None
    assert StartSlots(2, tmp_path).try_acquire() is None  # both slots taken, whoever asks
    a.close()
    c = second.try_acquire()
    assert c is not None
    b.close()
    c.close()


def test_a_slot_held_in_another_process_counts_and_comes_back_when_that_process_dies(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path / "slot-0.lock")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert StartSlots(1, tmp_path).try_acquire() is None
    finally:
        holder.kill()
        holder.wait()
    again = StartSlots(1, tmp_path).try_acquire()
    assert again is not None  # the kernel gave the dead holder's lock back
    again.close()


def test_a_start_waits_for_a_slot_then_gets_it(tmp_path: Path) -> None:
    slots = StartSlots(1, tmp_path)
    taken = slots.try_acquire()
    assert taken is not None
    events: list[str] = []

    def start() -> None:
        with StartSlots(1, tmp_path).held() as go:
            events.append(f"got {go}")

    thread = threading.Thread(target=start)
    thread.start()
    time.sleep(0.5)
    assert events == []  # still waiting
    taken.close()
    thread.join(timeout=10)
    assert events == ["got True"]


def test_a_waiting_start_is_called_off(tmp_path: Path) -> None:
    taken = StartSlots(1, tmp_path).try_acquire()
    released = threading.Event()
    result: list[bool] = []

    def start() -> None:
        with StartSlots(1, tmp_path).held(released.is_set) as go:
            result.append(go)

    thread = threading.Thread(target=start)
    thread.start()
    released.set()
    thread.join(timeout=10)
    assert result == [False]
    assert taken is not None
    taken.close()


def test_an_unusable_directory_lets_the_start_go_ahead(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    with StartSlots(1, blocker / "slots").held() as go:
        assert go is True
    assert "unusable" in caplog.text


def test_the_default_is_one_slot_per_core_in_a_directory_of_the_users_own() -> None:
    import os

    slots = StartSlots()
    assert slots.count == max(1, os.cpu_count() or 1)
    assert slots.directory.name.endswith(f"-{os.getuid()}")
