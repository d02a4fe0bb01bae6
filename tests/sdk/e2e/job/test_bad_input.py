"""Bad input is refused with an error a data scientist can act on, before anything is sent."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s

from rayqueue_sdk import (
    ClusterNotFoundError,
    ConfigError,
    ManagedClusterConfig,
    PriorityClassNotFoundError,
    QueueNotFoundError,
    RayJob,
)
from rayqueue_sdk.job.runtime_env import OWNED_WORKING_DIR_LIMIT
from rayqueue_sdk.kube.kinds import RAYJOBS

NS = "your-namespace"


def rayjob_names(api: Any) -> list[str]:
    items = k8s.CustomObjectsApi(api).list_namespaced_custom_object(
        RAYJOBS.group, RAYJOBS.version, NS, RAYJOBS.plural
    )["items"]
    return [i["metadata"]["name"] for i in items]


def owned(**kw: Any) -> RayJob:
    base: dict[str, Any] = {
        "job_name": "bad-input",
        "entrypoint": "python train.py",
        "cluster_config": ManagedClusterConfig(num_workers=1),
        "local_queue": "batch-jobs-queue",
        "namespace": NS,
    }
    return RayJob(**{**base, **kw})


# -- pure: the constructor --------------------------------------------------------------------------


def test_both_cluster_name_and_cluster_config() -> None:
    with pytest.raises(ConfigError, match="both given") as info:
        RayJob(
            job_name="j", entrypoint="python x.py", cluster_name="ws", cluster_config=ManagedClusterConfig()
        )
    assert info.value.field == "cluster_name/cluster_config"


def test_neither_cluster_name_nor_cluster_config() -> None:
    with pytest.raises(ConfigError, match="neither given"):
        RayJob(job_name="j", entrypoint="python x.py")


def test_job_name_over_47_characters() -> None:
    name = "a" * 48
    with pytest.raises(ConfigError) as info:
        RayJob(job_name=name, entrypoint="python x.py", cluster_config=ManagedClusterConfig())
    assert info.value.field == "job_name" and "47" in str(info.value)
    RayJob(job_name="a" * 47, entrypoint="python x.py", cluster_config=ManagedClusterConfig())


def test_remote_working_dir_passes_through_unchanged_into_runtime_env_yaml() -> None:
    url = "https://github.com/your-org/your-repo/archive/main.zip"
    job = owned(runtime_env={"working_dir": url, "env_vars": {"A": "1"}})
    env = yaml.safe_load(job.to_dict()["spec"]["runtimeEnvYAML"])
    assert env == {"working_dir": url, "env_vars": {"A": "1"}}
    assert "submitterPodTemplate" not in job.to_dict()["spec"]


# -- before anything is sent: the submit-time checks -------------------------------------------------


def test_entrypoint_script_missing_from_working_dir(tmp_path: Path, logged_in: Any) -> None:
    (tmp_path / "train.py").write_text("print(1)\n", encoding="utf-8")
    job = owned(entrypoint="python trian.py --epochs 1", runtime_env={"working_dir": str(tmp_path)})
    with pytest.raises(ConfigError, match="'trian.py' is not in runtime_env\\['working_dir'\\]") as info:
        job.submit()
    assert info.value.field == "entrypoint"
    assert "bad-input" not in rayjob_names(logged_in)
    existing = RayJob(
        job_name="bad-input",
        entrypoint="python trian.py",
        cluster_name="no-cluster-needed",
        namespace=NS,
        runtime_env={"working_dir": str(tmp_path)},
    )
    with pytest.raises(ConfigError, match="trian.py"):
        existing.submit()  # refused before the cluster is even looked up


def test_working_dir_over_the_limit(tmp_path: Path, logged_in: Any) -> None:
    (tmp_path / "train.py").write_text("print(1)\n", encoding="utf-8")
    (tmp_path / "weights.bin").write_bytes(os.urandom(OWNED_WORKING_DIR_LIMIT + 1024))
    job = owned(runtime_env={"working_dir": str(tmp_path)})
    with pytest.raises(ConfigError) as info:
        job.submit()
    message = str(info.value)
    assert "larger than" in message and "weights.bin" in message and "remote archive" in message
    assert "bad-input" not in rayjob_names(logged_in)
    # With the big file excluded, the same directory fits (nothing else is left out).
    ok = owned(
        job_name="bad-input-excluded",
        entrypoint="python -c 'print(1)'",
        runtime_env={"working_dir": str(tmp_path), "excludes": ["*.bin"]},
    )
    from rayqueue_sdk.job.runtime_env import local_working_dir, zip_working_dir

    wd = local_working_dir(ok.runtime_env)
    assert wd is not None
    assert len(zip_working_dir(wd, ["*.bin"])) < 1024


def test_missing_requirements_file_names_it(tmp_path: Path, logged_in: Any) -> None:
    job = owned(runtime_env={"pip": str(tmp_path / "path" / "to" / "requirements.txt")})
    with pytest.raises(ConfigError, match="requirements file not found at .*path/to/requirements.txt"):
        job.submit()
    assert "bad-input" not in rayjob_names(logged_in)


def test_missing_working_dir_directory(tmp_path: Path, logged_in: Any) -> None:
    job = owned(runtime_env={"working_dir": str(tmp_path / "nope")})
    with pytest.raises(ConfigError, match="no directory at"):
        job.submit()


# -- against the control plane ----------------------------------------------------------------------


def test_unknown_cluster_lists_the_users_clusters(workspace: str) -> None:
    job = RayJob(
        job_name="quick-dev-test", entrypoint="python -c 'print(1)'", cluster_name="my-workspce", namespace=NS
    )
    with pytest.raises(ClusterNotFoundError) as info:
        job.submit()
    assert info.value.available == ["my-workspace-cluster"]
    assert "RayCluster 'my-workspce' does not exist" in str(info.value)
    assert "my-workspace-cluster" in str(info.value)


def test_unknown_queue_lists_the_queues(logged_in: Any) -> None:
    job = owned(local_queue="batch-queue")
    with pytest.raises(QueueNotFoundError) as info:
        job.submit()
    assert info.value.available == ["batch-jobs-queue", "ds-workspace-queue"]
    assert "bad-input" not in rayjob_names(logged_in)


def test_unknown_priority_class_lists_the_classes(logged_in: Any) -> None:
    job = owned(labels={"kueue.x-k8s.io/priority-class": "production-priority"})
    with pytest.raises(PriorityClassNotFoundError) as info:
        job.submit()
    assert any(a.startswith("prod-priority") for a in info.value.available)
    assert "bad-input" not in rayjob_names(logged_in)


def test_status_before_submit_on_an_existing_cluster_says_so() -> None:
    from rayqueue_sdk import RayQueueError

    job = RayJob(job_name="j", entrypoint="python x.py", cluster_name="ws", namespace=NS)
    with pytest.raises(RayQueueError, match="has not been submitted"):
        job.status()
