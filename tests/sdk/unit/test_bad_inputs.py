"""Bad input is rejected before anything is sent: a ConfigError naming field, value and what is allowed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rayqueue_sdk import Cluster, ClusterConfiguration, ConfigError, ManagedClusterConfig, RayJob, WorkerGroup
from rayqueue_sdk.manifests import kueue as k


def cc(**kw: Any) -> Callable[[], Any]:
    return lambda: ClusterConfiguration(**{"name": "c", **kw})


def job(**kw: Any) -> Callable[[], Any]:
    base: dict[str, Any] = {"job_name": "j", "entrypoint": "python x.py"}
    if "cluster_name" not in kw:
        base["cluster_config"] = ManagedClusterConfig()
    return lambda: RayJob(**{**base, **kw})


def groups(n: int) -> list[WorkerGroup]:
    return [WorkerGroup(name=f"g{i}") for i in range(n)]


# (id, action, text naming the field, text showing the bad value)
CASES: list[tuple[str, Callable[[], Any], str, str]] = [
    ("negative-cpu", cc(worker_cpu_requests=-1), "worker_cpu_requests", "-1"),
    ("non-numeric-cpu", cc(head_cpu_requests="lots"), "head_cpu_requests", "'lots'"),
    ("boolean-cpu", cc(worker_cpu_requests=True), "worker_cpu_requests", "True"),
    ("cpu-below-1m", cc(worker_cpu_requests=0.0005), "worker_cpu_requests", "0.0005"),
    ("unparseable-memory", cc(worker_memory_requests="8 GB"), "worker_memory_requests", "'8 GB'"),
    ("memory-string-in-bytes", cc(head_memory_requests="8"), "head_memory_requests", "'8'"),
    ("negative-memory", cc(worker_memory_requests=-4), "worker_memory_requests", "-4"),
    ("zero-memory", cc(worker_memory_requests=0), "worker_memory_requests", "0"),
    ("cpu-limit-below-request", cc(worker_cpu_requests=4, worker_cpu_limits=2), "worker_cpu_limits", "2"),
    (
        "memory-limit-below-request",
        cc(head_memory_requests="8Gi", head_memory_limits="4Gi"),
        "head_memory_limits",
        "'4Gi'",
    ),
    (
        "unmapped-extended-resource",
        cc(worker_extended_resource_requests={"example.com/fpga": 1}),
        "worker_extended_resource_requests['example.com/fpga']",
        "'example.com/fpga'",
    ),
    (
        "fractional-gpu",
        cc(worker_extended_resource_requests={"nvidia.com/gpu": 0.5}),
        "worker_extended_resource_requests['nvidia.com/gpu']",
        "0.5",
    ),
    (
        "override-default-mapping",
        cc(extended_resource_mapping={"nvidia.com/gpu": "A100"}),
        "extended_resource_mapping['nvidia.com/gpu']",
        "'A100'",
    ),
    (
        "mapping-to-ray-cpu",
        cc(extended_resource_mapping={"example.com/x": "CPU"}),
        "extended_resource_mapping['example.com/x']",
        "'CPU'",
    ),
    ("name-too-long", lambda: ClusterConfiguration(name="a" * 54), "name", "'" + "a" * 20),
    ("name-upper-case", lambda: ClusterConfiguration(name="MyCluster"), "name", "'MyCluster'"),
    ("name-underscore", lambda: ClusterConfiguration(name="my_cluster"), "name", "'my_cluster'"),
    ("name-starts-with-digit", lambda: ClusterConfiguration(name="1cluster"), "name", "'1cluster'"),
    (
        "name-missing",
        lambda: ClusterConfiguration(num_workers=1),  # type: ignore[call-arg]
        "name",
        "None",
    ),
    (
        "priority-twice",
        cc(priority_class="prod-priority", labels={"kueue.x-k8s.io/priority-class": "dev-priority"}),
        "priority_class",
        "'dev-priority'",
    ),
    (
        "queue-twice",
        cc(local_queue="a", labels={"kueue.x-k8s.io/queue-name": "b"}),
        "local_queue",
        "'b'",
    ),
    ("bad-namespace", cc(namespace="Team A"), "namespace", "'Team A'"),
    ("bad-queue-name", cc(local_queue="My Queue"), "local_queue", "'My Queue'"),
    ("unknown-field", cc(worker_gpus=2), "worker_gpus", "2"),
    ("negative-num-workers", cc(num_workers=-1), "num_workers", "-1"),
    ("non-integer-num-workers", cc(num_workers="two"), "num_workers", "'two'"),
    ("groups-and-flat-fields", cc(worker_groups=groups(1), num_workers=3), "worker_groups", "['g0']"),
    (
        "duplicate-group-names",
        cc(worker_groups=[WorkerGroup(name="gpu"), WorkerGroup(name="gpu")]),
        "worker_groups[1].name",
        "'gpu'",
    ),
    ("group-named-head", cc(worker_groups=[{"name": "head"}]), "worker_groups[0].name", "'head'"),
    ("group-name-upper-case", cc(worker_groups=[{"name": "GPU"}]), "worker_groups[0].name", "'GPU'"),
    ("replicas-above-max", lambda: WorkerGroup(name="g", replicas=5, max_replicas=3), "replicas", "5"),
    ("replicas-below-min", lambda: WorkerGroup(name="g", replicas=1, min_replicas=2), "replicas", "1"),
    (
        "min-above-max",
        lambda: WorkerGroup(name="g", replicas=3, min_replicas=4, max_replicas=2),
        "min_replicas",
        "4",
    ),
    ("num-workers-outside-bounds", cc(num_workers=5, min_workers=1, max_workers=3), "num_workers", "5"),
    (
        "autoscaling-under-queue-without-elastic",
        cc(enable_autoscaling=True, max_workers=4, local_queue="q"),
        "enable_autoscaling",
        "True",
    ),
    ("too-many-cluster-groups", cc(local_queue="q", worker_groups=groups(18)), "worker_groups", "['g0'"),
    ("group-bad-toleration", cc(worker_tolerations=[{"key": "a", "operator": "In"}]), "operator", "'In'"),
    (
        "mount-without-volume",
        cc(volume_mounts=[{"name": "data", "mountPath": "/data"}]),
        "volume_mounts[0].name",
        "'data'",
    ),
    ("label-value-not-string", cc(labels={"team": 1}), "labels['team']", "1"),
    ("env-value-dict", cc(envs={"A": {"b": 1}}), "envs['A']", "{'b': 1}"),
    ("pull-secrets-not-a-list", cc(image_pull_secrets="regcred"), "image_pull_secrets", "'regcred'"),
    (
        "managed-config-with-kueue-label",
        lambda: ManagedClusterConfig(labels={"kueue.x-k8s.io/queue-name": "q"}),
        "labels['kueue.x-k8s.io/queue-name']",
        "'q'",
    ),
    (
        "cluster-given-managed-config",
        lambda: Cluster(ManagedClusterConfig()),  # type: ignore[arg-type]
        "config",
        "ManagedClusterConfig",
    ),
    (
        "job-cluster-name-and-config",
        job(cluster_name="ws", cluster_config=ManagedClusterConfig()),
        "cluster_name/cluster_config",
        "'ws'",
    ),
    (
        "job-neither-cluster",
        lambda: RayJob(job_name="j", entrypoint="python x.py"),
        "cluster_name/cluster_config",
        "None",
    ),
    ("job-name-too-long", job(job_name="j" * 48), "job_name", "'jjjj"),
    ("job-name-upper-case", job(job_name="Train"), "job_name", "'Train'"),
    (
        "job-ttl-without-shutdown",
        job(shutdown_after_job_finishes=False, ttl_seconds_after_finished=60),
        "ttl_seconds_after_finished",
        "60",
    ),
    (
        "job-queued-without-shutdown",
        job(local_queue="q", shutdown_after_job_finishes=False),
        "shutdown_after_job_finishes",
        "False",
    ),
    ("job-zero-deadline", job(active_deadline_seconds=0), "active_deadline_seconds", "0"),
    ("job-negative-ttl", job(ttl_seconds_after_finished=-5), "ttl_seconds_after_finished", "-5"),
    ("job-bad-submission-mode", job(submission_mode="Batch"), "submission_mode", "'Batch'"),
    (
        "job-too-many-groups-under-queue",
        job(local_queue="q", cluster_config=ManagedClusterConfig(worker_groups=groups(17))),
        "cluster_config.worker_groups",
        "['g0'",
    ),
    ("job-queue-on-existing-cluster", job(cluster_name="ws", local_queue="q"), "local_queue", "'q'"),
    (
        "job-ttl-on-existing-cluster",
        job(cluster_name="ws", ttl_seconds_after_finished=30),
        "ttl_seconds",
        "30",
    ),
    (
        "job-priority-twice",
        job(priority_class="a", labels={"kueue.x-k8s.io/priority-class": "b"}),
        "priority_class",
        "'b'",
    ),
    ("job-pip-not-a-list", job(runtime_env={"pip": 3}), "runtime_env['pip']", "3"),
    (
        "job-empty-entrypoint",
        lambda: RayJob(job_name="j", entrypoint="", cluster_name="ws"),
        "entrypoint",
        "''",
    ),
    (
        "kueue-borrowing-without-cohort",
        lambda: k.cluster_queue(
            "cq",
            resource_groups=[k.resource_group(k.flavor_quotas("f", {"cpu": 1}, borrowing_limits={"cpu": 1}))],
        ),
        "borrowing_limits['cpu']",
        "1",
    ),
    (
        "kueue-borrow-without-reclaim",
        lambda: k.preemption(borrow_within_cohort="LowerPriority"),
        "borrow_within_cohort",
        "'LowerPriority'",
    ),
    (
        "kueue-flavors-disagree",
        lambda: k.resource_group(k.flavor_quotas("a", {"cpu": 1}), k.flavor_quotas("b", {"memory": "1Gi"})),
        "flavors[1]",
        "['memory']",
    ),
    (
        "kueue-priority-not-int",
        lambda: k.workload_priority_class("p", "high"),  # type: ignore[arg-type]
        "value",
        "'high'",
    ),
    ("kueue-negative-quota", lambda: k.flavor_quotas("f", {"cpu": -1}), "nominal['cpu']", "-1"),
    # A trailing newline passed patterns ending in `$` (which also matches before a final "\n").
    ("name-trailing-newline", cc(name="c\n"), "name", "'c\\n'"),
    ("queue-trailing-newline", cc(local_queue="team-queue\n"), "local_queue", "'team-queue\\n'"),
    ("label-key-trailing-newline", cc(labels={"team\n": "a"}), "labels", "'team\\n'"),
    ("label-value-trailing-newline", cc(labels={"team": "a\n"}), "labels", "'a\\n'"),
    ("env-name-trailing-newline", cc(envs={"PATH\n": "x"}), "envs", "'PATH\\n'"),
    # int32 fields take real ints within int32; bools, floats and NaN are refused, not coerced.
    ("workers-past-int32", cc(num_workers=2**31), "num_workers", "2147483648"),
    ("workers-bool", cc(num_workers=True), "num_workers", "True"),
    ("workers-nan", cc(num_workers=float("nan")), "num_workers", "nan"),
    ("max-workers-past-int32", cc(min_workers=0, max_workers=2**31), "max_workers", "2147483648"),
    ("replicas-bool", lambda: WorkerGroup(name="g", replicas=True), "replicas", "True"),
    (
        "max-replicas-past-int32",
        lambda: WorkerGroup(name="g", max_replicas=2**31),
        "max_replicas",
        "2147483648",
    ),
    (
        "quantity-huge-exponent",
        cc(worker_memory_requests="1e999999999"),
        "worker_memory_requests",
        "'1e999999999'",
    ),
    ("cpu-past-int64", cc(head_cpu_requests=2**70), "head_cpu_requests", str(2**70)),
    ("kueue-name-trailing-newline", lambda: k.local_queue("q\n", "team", "cq"), "name", "'q\\n'"),
]


def test_there_are_at_least_thirty_distinct_cases() -> None:
    assert len({case[0] for case in CASES}) == len(CASES) >= 30


@pytest.mark.parametrize(("action", "field", "value"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_config_error_naming_field_value_and_allowed(
    action: Callable[[], Any], field: str, value: str
) -> None:
    with pytest.raises(ConfigError) as info:
        action()
    err = info.value
    message = str(err)
    assert isinstance(err, ValueError)
    assert field in err.field, (field, err.field)
    assert message.startswith(err.field)
    assert value in message, (value, message)
    assert "; allowed: " in message and err.allowed.strip()


def test_missing_requirements_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    job_ = RayJob(
        job_name="j",
        entrypoint="python x.py",
        cluster_config=ManagedClusterConfig(),
        runtime_env={"pip": "./path/to/requirements.txt"},
    )  # the constructor does no I/O: the file is read when rendering
    with pytest.raises(ConfigError) as info:
        job_.to_dict()
    assert info.value.field == "runtime_env['pip']"
    assert "./path/to/requirements.txt" in str(info.value)
    assert "not found" in str(info.value)


def test_no_pydantic_error_escapes_model_validate() -> None:
    with pytest.raises(ConfigError) as info:
        ClusterConfiguration.model_validate({"name": "c", "worker_groups": [{"name": "a", "replicas": "x"}]})
    assert info.value.field == "worker_groups[0].replicas"


def test_no_pydantic_error_escapes_model_validate_json() -> None:
    with pytest.raises(ConfigError) as info:
        ClusterConfiguration.model_validate_json('{"name": "c", "num_workers": -2}')
    assert info.value.field == "num_workers"


def test_several_problems_are_reported_as_a_note() -> None:
    with pytest.raises(ConfigError) as info:
        ClusterConfiguration(name="c", head_cpu_requests="x", worker_memory_requests="y")
    assert info.value.field == "head_cpu_requests"
    assert any("worker_memory_requests" in note for note in info.value.__notes__)
