"""Configuration behaviour: defaults, derived limits, assignment, and properties over generated inputs."""

from __future__ import annotations

from pathlib import Path

import pytest
from crd_schema import validate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rayqueue_sdk import Cluster, ClusterConfiguration, ConfigError, ManagedClusterConfig, WorkerGroup
from rayqueue_sdk.config.models import DEFAULT_ACCELERATORS, accelerator_mapping
from rayqueue_sdk.manifests.quantities import compare_quantities


def test_peer_defaults() -> None:
    cfg = ClusterConfiguration(name="c")
    assert (cfg.head_cpu_requests, cfg.head_cpu_limits, cfg.head_memory_requests, cfg.head_memory_limits) == (
        1,
        2,
        5,
        8,
    )
    assert (
        cfg.worker_cpu_requests,
        cfg.worker_cpu_limits,
        cfg.worker_memory_requests,
        cfg.worker_memory_limits,
    ) == (
        1,
        1,
        3,
        6,
    )
    managed = ManagedClusterConfig()
    assert (managed.head_cpu_requests, managed.head_memory_requests, managed.worker_memory_limits) == (
        2,
        8,
        2,
    )


def test_default_mapping_covers_the_peer_accelerators() -> None:
    assert accelerator_mapping() == dict(DEFAULT_ACCELERATORS)
    assert {DEFAULT_ACCELERATORS[k] for k in ("nvidia.com/gpu", "intel.com/gpu", "amd.com/gpu")} == {"GPU"}
    assert (
        DEFAULT_ACCELERATORS["huawei.com/Ascend310"] == DEFAULT_ACCELERATORS["huawei.com/Ascend910"] == "NPU"
    )


def test_assigning_a_field_revalidates_and_rederives() -> None:
    cfg = ClusterConfiguration(name="first-raycluster", num_workers=2, worker_cpu_requests=2)
    cfg.name = "second-raycluster"  # seed 000: "re-use the same configuration, but change the name"
    assert Cluster(cfg).to_dict()["metadata"]["name"] == "second-raycluster"
    cfg.num_workers = 3
    assert cfg.resolved_worker_groups()[0].replicas == 3
    cfg.worker_cpu_requests = 4
    assert cfg.worker_cpu_limits == 4  # the derived limit follows the request


def test_a_rejected_assignment_leaves_the_model_unchanged() -> None:
    cfg = ClusterConfiguration(name="c", worker_cpu_requests=2, worker_cpu_limits=2)
    with pytest.raises(ConfigError) as info:
        cfg.worker_cpu_requests = 3
    assert info.value.field == "worker_cpu_limits"
    assert (cfg.worker_cpu_requests, cfg.worker_cpu_limits) == (2, 2)


def test_worker_group_bounds_default_to_replicas() -> None:
    group = WorkerGroup(name="g", replicas=3)
    assert (group.min_replicas, group.max_replicas) == (3, 3)
    group = WorkerGroup(name="g", replicas=3, max_replicas=6)
    assert (group.min_replicas, group.max_replicas) == (3, 6)


def test_unknown_field_suggests_the_close_name() -> None:
    with pytest.raises(ConfigError) as info:
        ClusterConfiguration(name="c", worker_cpu_request=2)  # type: ignore[call-arg]
    assert "did you mean 'worker_cpu_requests'" in str(info.value)


cpu_amounts = st.one_of(
    st.integers(min_value=0, max_value=64),
    st.integers(min_value=1, max_value=64_000).map(lambda m: f"{m}m"),
)
memory_amounts = st.one_of(
    st.integers(min_value=1, max_value=512),
    st.integers(min_value=1, max_value=512).map(lambda g: f"{g}Gi"),
    st.integers(min_value=1, max_value=4096).map(lambda m: f"{m}Mi"),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    head_cpu=cpu_amounts,
    worker_cpu=cpu_amounts,
    worker_memory=memory_amounts,
    gpus=st.integers(min_value=0, max_value=8),
    workers=st.integers(min_value=0, max_value=10),
)
def test_any_valid_request_renders_a_manifest_that_fits_the_crd(
    crd_dir: Path,
    head_cpu: int | str,
    worker_cpu: int | str,
    worker_memory: int | str,
    gpus: int,
    workers: int,
) -> None:
    cfg = ClusterConfiguration(
        name="generated",
        local_queue="q",
        num_workers=workers,
        head_cpu_requests=head_cpu,
        worker_cpu_requests=worker_cpu,
        worker_memory_requests=worker_memory,
        worker_extended_resource_requests={"nvidia.com/gpu": gpus},
    )
    manifest = Cluster(cfg).to_dict()
    validate(manifest, crd_dir)
    worker = manifest["spec"]["workerGroupSpecs"][0]
    resources = worker["template"]["spec"]["containers"][0]["resources"]
    for key in ("cpu", "memory"):
        assert compare_quantities(resources["limits"][key], resources["requests"][key]) >= 0
    assert worker["replicas"] == workers
    assert worker["rayStartParams"]["num-gpus"] == str(gpus)


def test_a_rayjob_reads_its_validated_spec_and_revalidates_an_assignment() -> None:
    from rayqueue_sdk.job.rayjob import RayJob

    job = RayJob(job_name="j", entrypoint="python x.py", cluster_name="ws", labels={"team": "a"})
    job.entrypoint = "python y.py"
    assert job.to_dict()["entrypoint"] == "python y.py"
    with pytest.raises(ConfigError) as info:
        job.entrypoint = ""  # the spec's rule: a non-empty command
    assert info.value.field == "entrypoint"
    assert job.entrypoint == "python y.py"  # a rejected assignment leaves the job as it was
    job.labels = {"team": "b"}
    assert job.labels == {"team": "b"}
    with pytest.raises(ConfigError):  # a queue label: Kueue cannot manage a job on an existing cluster
        job.labels = {"kueue.x-k8s.io/queue-name": "q"}
    assert (job.labels, job.local_queue) == ({"team": "b"}, None)
    with pytest.raises(ConfigError) as fixed:
        job.cluster_name = "other"  # the backend took it at construction
    assert fixed.value.field == "cluster_name"
    assert job.cluster_name == "ws"
