"""Pure pieces of RayJob: runtime_env packaging, the typed status, following a stream of log chunks."""

from __future__ import annotations

import asyncio
import base64
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml

from rayqueue_sdk import ConfigError, JobPhase, ManagedClusterConfig, RayJob
from rayqueue_sdk.admission.cluster import assess_job
from rayqueue_sdk.job.logs import follow_lines, split_lines, tail
from rayqueue_sdk.job.rayjob import render_rayjob
from rayqueue_sdk.job.runtime_env import (
    SUBMITTER_WORKING_DIR,
    WORKING_DIR_SECRET_KEY,
    check_package_size,
    entrypoint_script,
    ship_working_dir,
    zip_working_dir,
)
from rayqueue_sdk.job.status import status_from_assessment, status_from_ray


@pytest.mark.parametrize(
    ("entrypoint", "script"),
    [
        ("python test_model.py", "test_model.py"),
        ("python3 -u sub/train.py --lr 0.1", "sub/train.py"),
        ("/usr/bin/python3.11 x.py", "x.py"),
        ("python -m pkg.train", None),
        ("python -c 'print(1)'", None),
        ("bash run.sh", None),
        ("python", None),
        ("python 'unterminated", None),
    ],
)
def test_entrypoint_script(entrypoint: str, script: str | None) -> None:
    assert entrypoint_script(entrypoint) == script


def _tree(root: Path) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "model.py").write_text("X = 1\n", encoding="utf-8")
    (root / "train.py").write_text("import pkg.model\n", encoding="utf-8")
    (root / "notes.md").write_text("# notes\n", encoding="utf-8")
    (root / "data.bin").write_bytes(b"\0" * 10)


def test_zip_keeps_every_file_unless_excluded(tmp_path: Path) -> None:
    import io
    import zipfile

    _tree(tmp_path)
    names = zipfile.ZipFile(io.BytesIO(zip_working_dir(tmp_path))).namelist()
    assert sorted(names) == ["data.bin", "notes.md", "pkg/model.py", "train.py"]
    names = zipfile.ZipFile(io.BytesIO(zip_working_dir(tmp_path, ["*.bin", "pkg"]))).namelist()
    assert sorted(names) == ["notes.md", "train.py"]


def test_package_size_limit_for_an_existing_cluster(tmp_path: Path) -> None:
    _tree(tmp_path)
    (tmp_path / "big.bin").write_bytes(bytes(range(256)) * 64)
    assert check_package_size(tmp_path) > 0
    with pytest.raises(ConfigError, match="Ray's package limit") as info:
        check_package_size(tmp_path, limit=200)
    assert "big.bin" in str(info.value)


def test_shipped_rayjob_unpacks_in_the_submitter(tmp_path: Path) -> None:
    """The init container's own command, run here against the Secret's bytes, restores the tree."""
    src = tmp_path / "src"
    src.mkdir()
    _tree(src)
    job = RayJob(
        job_name="ship",
        entrypoint="python train.py",
        cluster_config=ManagedClusterConfig(),
        runtime_env={"working_dir": str(src), "env_vars": {"A": "1"}},
    )
    manifest, secret = ship_working_dir(render_rayjob(job), {"env_vars": {"A": "1"}}, zip_working_dir(src))
    env = yaml.safe_load(manifest["spec"]["runtimeEnvYAML"])
    assert env == {"env_vars": {"A": "1"}, "working_dir": SUBMITTER_WORKING_DIR}
    pod = manifest["spec"]["submitterPodTemplate"]["spec"]
    assert pod["volumes"][0]["secret"]["secretName"] == secret["metadata"]["name"] == "ship-working-dir"
    init = pod["initContainers"][0]
    assert (
        init["image"]
        == manifest["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["image"]
    )
    # Run the unpack command with the pod paths mapped into a scratch root.
    root = tmp_path / "pod"
    mounts = {m["mountPath"]: root / m["mountPath"].lstrip("/") for m in init["volumeMounts"]}
    package_dir = next(p for p in mounts if p != SUBMITTER_WORKING_DIR)
    mounts[package_dir].mkdir(parents=True)
    (mounts[package_dir] / WORKING_DIR_SECRET_KEY).write_bytes(
        base64.b64decode(secret["data"][WORKING_DIR_SECRET_KEY])
    )
    command = init["command"][2]
    for pod_path, local in mounts.items():
        command = command.replace(pod_path, str(local))
    subprocess.run([sys.executable, *command.split()[1:]], check=True)
    unpacked = mounts[SUBMITTER_WORKING_DIR]
    assert sorted(p.relative_to(unpacked).as_posix() for p in unpacked.rglob("*") if p.is_file()) == [
        "data.bin",
        "notes.md",
        "pkg/model.py",
        "train.py",
    ]


def test_status_from_ray_maps_every_state() -> None:
    expected = {
        "PENDING": JobPhase.STARTING,
        "RUNNING": JobPhase.RUNNING,
        "SUCCEEDED": JobPhase.SUCCEEDED,
        "FAILED": JobPhase.FAILED,
        "STOPPED": JobPhase.STOPPED,
        "WEIRD": JobPhase.UNKNOWN,
    }
    for ray_state, phase in expected.items():
        st = status_from_ray("j", "ds", "j-1", "ws", ray_state, "msg")
        assert st.phase is phase and st.owns_cluster is False and st.ray_status == ray_state


def test_status_from_assessment_queued_with_kueue_reason_and_position() -> None:
    job = {
        "metadata": {"labels": {"kueue.x-k8s.io/queue-name": "batch-jobs-queue"}},
        "spec": {"suspend": True},
        "status": {"jobDeploymentStatus": "Suspended"},
    }
    message = "couldn't assign flavors to pod set head: insufficient unused quota for nvidia.com/gpu"
    pending = {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": message}
    wl = {"status": {"conditions": [pending]}}
    st = status_from_assessment("final-training-run", "ds", assess_job(job, wl, position=2), job)
    assert (st.phase, st.position, st.reason, st.message) == (JobPhase.QUEUED, 2, "Pending", message)
    assert "batch-jobs-queue" in str(st) and "position 2" in str(st)
    assert st.to_dict()["phase"] == "queued"


def test_split_lines_and_tail() -> None:
    assert split_lines("", "a\r\nb") == (["a"], "b")
    assert tail("\n".join(str(i) for i in range(100)), 3) == "97\n98\n99"


def test_follow_lines_raises_stream_errors_in_the_caller() -> None:
    async def broken() -> AsyncIterator[str]:
        yield "first line\n"
        raise RuntimeError("websocket closed unexpectedly")

    lines = follow_lines(broken)
    assert next(lines) == "first line"
    with pytest.raises(RuntimeError, match="websocket closed"):
        next(lines)


def test_follow_lines_stops_when_closed_early_without_leaking_its_thread() -> None:
    released = threading.Event()

    async def endless() -> AsyncIterator[str]:
        try:
            while True:
                yield "x\n"
                await asyncio.sleep(0.01)
        finally:
            released.set()

    lines = follow_lines(endless)
    assert next(lines) == "x"
    lines.close()
    assert released.wait(10)
    assert not any(t.name == "rayqueue-log-follower" and t.is_alive() for t in threading.enumerate())


def test_follow_lines_inside_a_running_loop() -> None:
    async def stream() -> AsyncIterator[str]:
        yield "a\nb"
        yield "c\n"

    async def cell() -> list[str]:
        return list(follow_lines(stream))

    assert asyncio.run(cell()) == ["a", "bc"]


@pytest.mark.parametrize(
    "name",
    [
        # rayqueue_sdk.job.rayjob's examples submit to an API server: tests/project/test_module_doctests.py
        "rayqueue_sdk.job.backend",
        "rayqueue_sdk.job.spec",
        "rayqueue_sdk.job.status",
        "rayqueue_sdk.job.existing",
        "rayqueue_sdk.job.owned",
        "rayqueue_sdk.cli.job",
        "rayqueue_sdk.job.runtime_env",
        "rayqueue_sdk.job.logs",
    ],
)
def test_docstring_examples(name: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
