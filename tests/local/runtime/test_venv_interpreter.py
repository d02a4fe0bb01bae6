"""The plane run from a real ``python -m venv`` environment that is *not* activated: a job's ``python``
and a pod's ``python3`` are the venv's interpreter with the venv's packages (issue 24).

What users run, unlike the suite's bulk (installed into the machine's interpreter). To stay fast the venv
is made with ``--system-site-packages`` (Ray and the project come from the machine's interpreter) and gets
one marker module of its own in its site-packages, importable only through the venv: a job that reaches
the base interpreter instead (e.g. through a ``python`` symlink outside the venv) fails to import it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rayqueue_local.runtime.interpreter import write_python_shims

MARKER = "rq_venv_marker_2f9c"

HEAD_OWNER = textwrap.dedent(
    f"""
    import json, sys, time
    from ray.job_submission import JobSubmissionClient
    from rayqueue_local.runtime.raylocal import RayHead, RayHeadSpec
    from rayqueue_local.runtime.startslots import StartSlots

    head = RayHead(RayHeadSpec(num_cpus=1, label="venv-test"))
    try:
        with StartSlots().held():  # a machine start slot, as a plane takes one (runtime/startslots)
            head.start()
            head.wait_ready(timeout=300)
        client = JobSubmissionClient(head.dashboard_url)
        task = ("import {MARKER}, ray, sys; ray.init(); "
                "print('job', sys.prefix, {MARKER}.WHERE); "
                "print('task', ray.get(ray.remote(lambda: __import__('{MARKER}').WHERE).remote()))")
        job_id = client.submit_job(entrypoint=f'python -c "{{task}}" && python3 -c "import {MARKER}"')
        while not client.get_job_status(job_id).is_terminal():
            time.sleep(0.5)
        print(json.dumps({{"status": str(client.get_job_status(job_id)),
                          "logs": client.get_job_logs(job_id), "prefix": sys.prefix}}), flush=True)
    finally:
        head.stop()
    """
)

POD_RUNNER = textwrap.dedent(
    f"""
    import subprocess, sys, tempfile
    from pathlib import Path
    from rayqueue_local.runtime.kubelet import LocalPod, container_command

    pod = LocalPod(Path(tempfile.mkdtemp()))
    container = {{"command": ["/bin/sh", "-c", "python3 -c 'import {MARKER}, sys; print({MARKER}.WHERE)'"]}}
    argv, env, cwd = container_command(pod, container, {{"metadata": {{}}}})
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    print(done.returncode, done.stdout.strip(), done.stderr.strip()[-500:])
    """
)


@pytest.fixture(scope="module")
def outside_venv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A venv (``--system-site-packages``) with a marker module of its own, and an environment for a
    process started by the venv's interpreter *without* activating it (its ``bin`` not on ``PATH``)."""
    venv = tmp_path_factory.mktemp("venv") / "v"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert purelib.startswith(str(venv)), purelib
    (Path(purelib) / f"{MARKER}.py").write_text(f"WHERE = {str(venv)!r}\n")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "RAY_ADDRESS")}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(venv))]
    env["PATH"] = os.pathsep.join(path)
    # The marker is importable through the venv only: not by the interpreter running this suite.
    assert subprocess.run([sys.executable, "-c", f"import {MARKER}"], env=env).returncode != 0
    return python, env


def test_a_pods_python3_in_a_shell_script_is_the_venvs(outside_venv: tuple[Path, dict[str, str]]) -> None:
    python, env = outside_venv
    done = subprocess.run(
        [str(python), "-c", POD_RUNNER], env=env, capture_output=True, text=True, check=True
    )
    code, _, rest = done.stdout.strip().partition(" ")
    assert code == "0", done.stdout + done.stderr
    assert rest.startswith(str(python.parent.parent)), rest


@pytest.mark.ray
def test_a_jobs_python_on_a_head_started_from_the_venv_is_the_venvs(
    outside_venv: tuple[Path, dict[str, str]],
) -> None:
    python, env = outside_venv
    venv = str(python.parent.parent)
    done = subprocess.run(
        [str(python), "-c", HEAD_OWNER], env=env, capture_output=True, text=True, timeout=540
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["prefix"] == venv  # the head's owner really ran in the venv
    assert report["status"] == "SUCCEEDED", report["logs"][-3000:]
    assert f"job {venv} {venv}" in report["logs"]  # the entrypoint's `python` is the venv's
    assert f"task {venv}" in report["logs"]  # and so are Ray's workers


def test_a_python_symlink_left_in_a_heads_bin_is_replaced_by_an_exec_script(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)  # what an older plane left there
    write_python_shims(bin_dir)
    assert not (bin_dir / "python").is_symlink()
    assert (bin_dir / "python").read_text().startswith("#!/bin/sh\nexec ")
    assert sorted(p.name for p in bin_dir.iterdir()) == ["python", "python3"]  # no partial files left
