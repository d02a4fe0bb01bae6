"""A Ray token of the user's (``~/.ray/auth_token``, which a plain ``ray.init()`` writes under Ray 2.5x+,
or ``RAY_AUTH_TOKEN_PATH``) does not reach the plane's heads; where a head fails for such a reason, its
error names the cause and the file (issue 38).

Hermetic: ``HOME`` is a temp dir holding a token this test writes; nothing of the real home is read.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from pathlib import Path

import pytest

from rayqueue_local.controllers.kuberay import runtime as kuberay_runtime
from rayqueue_local.runtime import raylocal
from rayqueue_local.runtime.processes import ProcessStartError
from rayqueue_local.runtime.rayenv import diagnose, ray_process_env, token_sources
from rayqueue_local.runtime.raylocal import RayHead, RayHeadSpec
from rayqueue_local.runtime.startslots import StartSlots


@pytest.fixture
def foreign_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home with a Ray token in it, as a user's earlier ``ray.init()`` leaves one; auth mode unset."""
    home = tmp_path / "home"
    (home / ".ray").mkdir(parents=True)
    (home / ".ray" / "auth_token").write_text(uuid.uuid4().hex)
    monkeypatch.setenv("HOME", str(home))
    for var in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_TMPDIR"):
        monkeypatch.delenv(var, raising=False)
    return home


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode(errors="replace").partition("=")[::2] for item in raw if b"=" in item)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:120]
    except OSError:
        return "(exited)"


def _kept_its_environ(pid: int) -> bool:
    """Whether ``/proc/<pid>/environ`` still shows the process's environment: a process that set its
    title (Ray's agents: ``ray::DashboardAgent``, ``ray-dashboard-JobHead-0 (...)``) writes the title
    over its argv and the start of its environ (py-setproctitle), so its argv[0] is no longer the file it
    was started from, and the first variables there are gone or half-written. A loaded machine read
    such an agent mid-write: PATH and RAY_TMPDIR there, RAY_AUTH_MODE (second in the raylet's order) not.
    """
    argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0]
    return argv0.startswith(b"/") and Path(argv0.decode(errors="replace")).is_file()


def _session_environs(sid: int, pids: list[int]) -> dict[int, dict[str, str]]:
    """The environment of each of ``pids`` still in session ``sid`` once read, of the processes whose
    environ still reads (:func:`_kept_its_environ`): a short-lived process that exited after the
    listing, its pid taken by an unrelated process (another test's, another worker's), is left out
    rather than read as the head's."""
    found = {}
    for pid in pids:
        try:
            env = _environ(pid)
            if os.getsid(pid) == sid and _kept_its_environ(pid):
                found[pid] = env
        except OSError:  # exited meanwhile
            continue
    return found


@pytest.mark.ray
@pytest.mark.slow
def test_a_head_starts_with_a_foreign_token_in_home_and_reads_nothing_of_it(foreign_home: Path) -> None:
    token_file = foreign_home / ".ray" / "auth_token"
    before = token_file.read_text()
    head = RayHead(RayHeadSpec(num_cpus=1))
    try:
        with StartSlots().held():  # a start slot of the machine's, as a plane takes one (runtime/startslots)
            head.start()
            head.wait_ready()  # the client proxy connected to the GCS: no InvalidAuthToken
        assert head.process is not None and head.temp_dir is not None
        assert head.client_proxy is not None
        # Processes that set their title (Ray's agents) overwrite /proc/<pid>/environ: only those
        # that did not are checked (ray start, the GCS, the raylet, the dashboard, the client proxies).
        envs = _session_environs(head.process.sid, head.process.pids())
        envs |= _session_environs(head.client_proxy.sid, head.client_proxy.pids())
        assert {head.process.pid, head.client_proxy.pid} <= set(envs)
        assert len(envs) >= 5, {pid: _cmdline(pid) for pid in envs}
        # On a failure, which process and what it had (how the agent read mid-title was found).
        seen = {
            pid: (_cmdline(pid), env.get("RAY_AUTH_MODE"), env.get("RAY_TMPDIR")) for pid, env in envs.items()
        }
        odd = {pid: what for pid, what in seen.items() if what[1] != "disabled"}  # only those, untruncated
        assert {e.get("RAY_AUTH_MODE") for e in envs.values()} == {"disabled"}, "\n".join(
            map(str, odd.items())
        )
        assert {e.get("RAY_TMPDIR") for e in envs.values()} == {str(head.temp_dir)}, seen
        assert not any("RAY_AUTH_TOKEN" in e or "RAY_AUTH_TOKEN_PATH" in e for e in envs.values())
    finally:
        assert head.stop() == []
    # nothing of the head's landed in the user's ~/.ray, and their token is as it was
    assert sorted(p.name for p in (foreign_home / ".ray").iterdir()) == ["auth_token"]
    assert token_file.read_text() == before


@pytest.mark.ray
@pytest.mark.slow
def test_a_head_that_reads_the_token_fails_saying_the_cause_and_the_file(
    foreign_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The failure as it was before the plane set its heads' auth mode: the error's first line, which
    the RayCluster's ReplicaFailure condition keeps, says why and names the token file."""

    def unset_mode(base: Mapping[str, str], temp_dir: Path) -> dict[str, str]:
        env = ray_process_env(base, temp_dir)
        del env["RAY_AUTH_MODE"]
        return env

    monkeypatch.setattr(raylocal, "ray_process_env", unset_mode)
    head = RayHead(RayHeadSpec(num_cpus=1))
    try:
        with StartSlots().held(), pytest.raises(ProcessStartError) as caught:
            head.start()
            head.wait_ready()
    finally:
        head.stop(grace=0)
    condition_message = kuberay_runtime._failure_summary(str(caught.value))
    assert "InvalidAuthToken" in condition_message
    assert str(foreign_home / ".ray" / "auth_token") in condition_message


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"HOME": "/home/u"}, ["/home/u/.ray/auth_token"]),
        ({"HOME": "/h", "RAY_AUTH_TOKEN_PATH": "/etc/t"}, ["/etc/t", "/h/.ray/auth_token"]),
    ],
)
def test_token_sources_follow_rays_order(env: dict[str, str], named: list[str]) -> None:
    assert token_sources(env) == named


def test_a_token_in_the_environment_is_named_never_shown() -> None:
    secret = uuid.uuid4().hex
    cause = diagnose("AuthenticationError: InvalidAuthToken", {"HOME": "/h", "RAY_AUTH_TOKEN": secret})
    assert cause is not None and "RAY_AUTH_TOKEN environment variable" in cause
    assert secret not in cause


def test_a_full_disk_names_the_temp_dirs_parent() -> None:
    cause = diagnose("OSError: [Errno 28] No space left on device", {}, Path("/scratch/rqray-x"))
    assert cause == "the disk holding /scratch is full (No space left on device)"
    assert diagnose("ValueError: something else", {"HOME": "/h"}) is None
