"""Every seed configuration renders offline, and every rendered manifest fits the real upstream CRDs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from crd_schema import SchemaError, validate
from seed_configs import (
    production_job,
    quick_job,
    seed000_admin,
    seed000_cluster,
    seed001_admin,
    seed004_admin,
    seed004_cluster,
    workspace_cluster,
    write_requirements,
)

CLUSTERS = {
    "seed001-workspace": workspace_cluster,
    "seed000-first": lambda: seed000_cluster("first-raycluster"),
    "seed000-second": lambda: seed000_cluster("second-raycluster"),
    "seed004-team-a-prod": lambda: seed004_cluster("team-a"),
    "seed004-team-b-dev": lambda: seed004_cluster("team-b"),
}
ADMIN = {"seed000": seed000_admin, "seed001": seed001_admin, "seed004": seed004_admin}


@pytest.mark.parametrize("key", sorted(CLUSTERS))
def test_seed_cluster_renders_and_fits_the_raycluster_crd(key: str, crd_dir: Path) -> None:
    cluster = CLUSTERS[key]()
    manifest = cluster.to_dict()
    validate(manifest, crd_dir)
    assert manifest["metadata"]["name"] == cluster.config.name
    assert yaml.safe_load(cluster.to_yaml()) == manifest


def test_production_job_renders_and_fits_the_rayjob_crd(
    crd_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_requirements(tmp_path)
    monkeypatch.chdir(tmp_path)
    job = production_job()
    manifest = job.to_dict()
    validate(manifest, crd_dir)
    assert manifest["kind"] == "RayJob"
    assert manifest["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "batch-jobs-queue"
    assert manifest["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "prod-priority"
    env = yaml.safe_load(manifest["spec"]["runtimeEnvYAML"])
    assert env == {
        "working_dir": "https://github.com/your-org/your-repo/archive/main.zip",
        "pip": ["torch", "numpy>=1.26"],
    }
    workers = manifest["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    assert [w["replicas"] for w in workers] == [4]
    assert workers[0]["rayStartParams"]["num-gpus"] == "2"
    assert yaml.safe_load(job.to_yaml()) == manifest


def test_quick_job_renders_the_submission_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "requirements.txt").write_text("pandas\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    body = quick_job().to_dict()
    assert body == {
        "entrypoint": "python test_model.py",
        "submission_id": "quick-dev-test",
        "runtime_env": {"working_dir": ".", "pip": ["pandas"]},
    }


@pytest.mark.parametrize("seed", sorted(ADMIN))
def test_seed_kueue_admin_objects_fit_the_kueue_crds(seed: str, crd_dir: Path) -> None:
    objects = ADMIN[seed]()
    kinds = {o["kind"] for o in objects}
    assert {"ClusterQueue", "LocalQueue", "ResourceFlavor"} <= kinds
    for obj in objects:
        assert obj["apiVersion"] == "kueue.x-k8s.io/v1beta2"
        validate(obj, crd_dir)


def test_seed004_admin_objects_keep_the_seed_policies() -> None:
    by_name = {(o["kind"], o["metadata"]["name"]): o for o in seed004_admin()}
    team_a = by_name[("ClusterQueue", "team-a-cq")]["spec"]
    assert team_a["cohortName"] == "team-ab"
    assert team_a["preemption"]["withinClusterQueue"] == "LowerPriority"
    assert team_a["preemption"]["borrowWithinCohort"] == {
        "policy": "LowerPriority",
        "maxPriorityThreshold": 100,
    }
    team_b = by_name[("ClusterQueue", "team-b-cq")]["spec"]
    gpu = team_b["resourceGroups"][0]["flavors"][0]["resources"][0]
    assert gpu == {"name": "nvidia.com/gpu", "nominalQuota": "0", "borrowingLimit": "0"}
    wpc = by_name[("WorkloadPriorityClass", "prod-priority")]
    assert wpc["value"] == 1000 and "spec" not in wpc


def _all_rendered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    write_requirements(tmp_path)
    monkeypatch.chdir(tmp_path)
    out = [factory().to_dict() for factory in CLUSTERS.values()]
    out.append(production_job().to_dict())
    for factory in ADMIN.values():
        out.extend(factory())
    return out


def test_the_validator_is_not_vacuous(crd_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each rendered manifest, broken in a way an API server would reject or prune, fails validation."""
    for manifest in _all_rendered(tmp_path, monkeypatch):
        broken = yaml.safe_load(yaml.safe_dump(manifest))
        broken.get("spec", broken)["noSuchField"] = 1
        with pytest.raises(SchemaError, match="noSuchField"):
            validate(broken, crd_dir)


def test_validator_catches_a_non_string_start_param_and_label(crd_dir: Path) -> None:
    manifest = workspace_cluster().to_dict()
    manifest["spec"]["workerGroupSpecs"][0]["rayStartParams"]["num-gpus"] = 1
    manifest["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = 7
    with pytest.raises(SchemaError) as info:
        validate(manifest, crd_dir)
    assert "num-gpus" in str(info.value) and "queue-name" in str(info.value)
