"""Process hygiene: what the local control plane starts is stopped, whatever happens to its owner."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from rayqueue_local.runtime.processes import free_port_range, free_ports, registry, session_pids, spawn

# A process tree whose grandchild leaves the process group (but not the session), as Ray's workers do.
TREE = textwrap.dedent(
    """
    import os, subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import os, time; os.setpgid(0, 0); time.sleep(600)"])
    print(child.pid, flush=True)
    time.sleep(600)
    """
)


def wait_gone(sid: int, timeout: float = 30.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while session_pids(sid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return session_pids(sid)


def test_stop_kills_the_whole_session_including_members_that_left_the_group(tmp_path):
    proc = spawn([sys.executable, "-c", TREE], name="tree", log_path=tmp_path / "tree.log")
    deadline = time.monotonic() + 30
    while len(proc.pids()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(proc.pids()) == 2
    assert proc.sid in registry().sessions()

    assert proc.stop(grace=1.0) == []
    assert session_pids(proc.sid) == []
    assert proc.sid not in registry().sessions()
    assert proc.stop() == []  # idempotent


def test_memory_is_reported_for_the_tree():
    proc = spawn([sys.executable, "-c", TREE], name="tree")
    try:
        deadline = time.monotonic() + 30
        while len(proc.pids()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        mem = proc.memory()
        assert mem["processes"] == 2
        assert mem["rss"] > 1_000_000 and 0 < mem["pss"] <= mem["rss"]
    finally:
        proc.stop(grace=1.0)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_owner_crash_leaves_nothing(sig, tmp_path):
    owner_code = textwrap.dedent(
        f"""
        import signal, sys, time
        from pathlib import Path
        from rayqueue_local.runtime.processes import spawn
        # Ctrl-C is Python's KeyboardInterrupt, also when this test runs where SIGINT is ignored (a
        # job a shell put in the background: its children start with SIGINT ignored, and Python then
        # installs no handler of its own, so the owner would sleep on).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        d = Path({str(tmp_path)!r}) / "scratch"; d.mkdir()
        p = spawn([sys.executable, "-c", {TREE!r}], name="tree", cleanup_dir=d)
        print(p.sid, flush=True)
        time.sleep(600)
        """
    )
    owner = subprocess.Popen([sys.executable, "-c", owner_code], stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    sid = int(owner.stdout.readline())
    deadline = time.monotonic() + 30
    while len(session_pids(sid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(session_pids(sid)) == 2

    os.kill(owner.pid, sig)
    owner.wait(timeout=30)
    assert wait_gone(sid) == []
    deadline = time.monotonic() + 10
    while (tmp_path / "scratch").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not (tmp_path / "scratch").exists()


def test_a_forked_child_does_not_stop_its_parents_processes():
    proc = spawn(["sleep", "600"], name="sleeper")
    try:
        pid = os.fork()
        if pid == 0:  # the child runs the exit handlers, as a normal interpreter exit would
            import atexit

            atexit._run_exitfuncs()
            os._exit(0)
        os.waitpid(pid, 0)
        assert proc.alive()
    finally:
        proc.stop()


def test_ports_are_distinct_and_the_worker_range_is_free():
    ports = free_ports(9)
    assert len(set(ports)) == 9
    rng = free_port_range(16)
    assert len(rng) == 16 and not set(rng) & set(ports)
