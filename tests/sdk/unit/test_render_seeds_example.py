"""examples/render_seeds.py (the README's main job for now) runs offline; the CRDs accept its output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml
from crd_schema import validate
from seed_configs import seed000_cluster, seed004_cluster, workspace_cluster

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "render_seeds.py"


def _run(*args: str, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG",)}
    env["KUBECONFIG"] = str(cwd / "no-such-kubeconfig")  # no credentials anywhere
    out = subprocess.run(
        [sys.executable, str(EXAMPLE), *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return out.stdout


def test_stream_mode_is_valid_yaml_of_kubernetes_objects(crd_dir: Path, tmp_path: Path) -> None:
    docs = [d for d in yaml.safe_load_all(_run(cwd=tmp_path)) if d is not None]
    kinds = [d["kind"] for d in docs]
    assert kinds.count("RayCluster") == 5 and kinds.count("RayJob") == 1
    assert {"ClusterQueue", "LocalQueue", "ResourceFlavor", "WorkloadPriorityClass", "Cohort"} <= set(kinds)
    for doc in docs:
        validate(doc, crd_dir)
    by_name = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    # the example spells the seeds the same way the tests do
    assert by_name[("RayCluster", "my-workspace-cluster")] == workspace_cluster().to_dict()
    assert by_name[("RayCluster", "second-raycluster")] == seed000_cluster("second-raycluster").to_dict()
    assert by_name[("RayCluster", "raycluster-prod")] == seed004_cluster("team-a").to_dict()


def test_directory_mode_writes_one_file_per_object(crd_dir: Path, tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    narration = _run(str(out_dir), cwd=tmp_path)
    files = sorted(out_dir.glob("*.yaml"))
    assert f"{len(files)} files written" in narration
    submissions = [f for f in files if "job-submission" in f.name]
    assert [f.name for f in submissions] == ["seed001-job-submission-quick-dev-test.yaml"]
    body = yaml.safe_load(submissions[0].read_text())
    assert body["entrypoint"] == "python test_model.py" and body["runtime_env"]["working_dir"] == "."
    for path in files:
        if path not in submissions:
            validate(yaml.safe_load(path.read_text()), crd_dir)
    assert not list(tmp_path.glob("requirements.txt")), (
        "the example must not write into the working directory"
    )
