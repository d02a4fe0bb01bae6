"""What rendered manifests say: Kueue labels, Ray resources, units, limits, worker groups, RayJob fields."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from crd_schema import validate
from seed_configs import seed000_cluster, seed004_cluster, workspace_cluster

from rayqueue_sdk import Cluster, ClusterConfiguration, ConfigError, ManagedClusterConfig, RayJob, WorkerGroup
from rayqueue_sdk.errors import RayQueueError
from rayqueue_sdk.manifests.raycluster import build_raycluster


def _resources_param(text: str) -> dict[str, int]:
    # KubeRay pastes the value into a shell command line, so it is a double-quoted, escaped JSON word.
    assert text.startswith('"') and text.endswith('"')
    return dict(json.loads(text[1:-1].replace('\\"', '"')))


def test_config_error_is_a_value_error_and_a_rayqueue_error() -> None:
    with pytest.raises(ValueError) as info:
        ClusterConfiguration(name="c", worker_cpu_requests=-1)
    assert isinstance(info.value, ConfigError)
    assert isinstance(info.value, RayQueueError)


def test_kueue_labels_go_on_the_raycluster_metadata_not_the_pods() -> None:
    manifest = workspace_cluster().to_dict()
    labels = manifest["metadata"]["labels"]
    assert labels["kueue.x-k8s.io/queue-name"] == "ds-workspace-queue"
    assert labels["kueue.x-k8s.io/priority-class"] == "rd-priority"
    assert labels["app.kubernetes.io/managed-by"] == "rayqueue-sdk"
    pods = [manifest["spec"]["headGroupSpec"]["template"]] + [
        g["template"] for g in manifest["spec"]["workerGroupSpecs"]
    ]
    for pod in pods:
        assert not any(key.startswith("kueue.x-k8s.io/") for key in pod.get("metadata", {}).get("labels", {}))


def test_priority_class_field_and_label_mean_the_same() -> None:
    by_field = ClusterConfiguration(name="c", local_queue="q", priority_class="rd-priority")
    by_label = ClusterConfiguration(
        name="c", local_queue="q", labels={"kueue.x-k8s.io/priority-class": "rd-priority"}
    )
    assert by_field.priority_class == by_label.priority_class == "rd-priority"
    assert (
        build_raycluster(by_field)["metadata"]["labels"]["kueue.x-k8s.io/priority-class"]
        == build_raycluster(by_label)["metadata"]["labels"]["kueue.x-k8s.io/priority-class"]
    )


def test_gpu_maps_to_num_gpus_and_is_requested_and_limited() -> None:
    manifest = seed000_cluster("first-raycluster").to_dict()
    head = manifest["spec"]["headGroupSpec"]
    worker = manifest["spec"]["workerGroupSpecs"][0]
    assert head["rayStartParams"]["num-gpus"] == "1"
    assert worker["rayStartParams"]["num-gpus"] == "1"
    resources = worker["template"]["spec"]["containers"][0]["resources"]
    assert resources["requests"]["nvidia.com/gpu"] == 1 and resources["limits"]["nvidia.com/gpu"] == 1
    assert "resources" not in worker["rayStartParams"]


def test_gpus_of_several_vendors_are_summed_into_num_gpus() -> None:
    cfg = ClusterConfiguration(
        name="c", worker_extended_resource_requests={"nvidia.com/gpu": 2, "amd.com/gpu": 1}
    )
    assert build_raycluster(cfg)["spec"]["workerGroupSpecs"][0]["rayStartParams"]["num-gpus"] == "3"


@pytest.mark.parametrize(
    ("resource", "ray_name"),
    [
        ("google.com/tpu", "TPU"),
        ("habana.ai/gaudi", "HPU"),
        ("huawei.com/Ascend910", "NPU"),
        ("aws.amazon.com/neuroncore", "neuron_cores"),
    ],
)
def test_other_accelerators_go_into_the_resources_json(resource: str, ray_name: str, crd_dir: Path) -> None:
    cfg = ClusterConfiguration(name="c", worker_extended_resource_requests={resource: 4})
    manifest = build_raycluster(cfg)
    params = manifest["spec"]["workerGroupSpecs"][0]["rayStartParams"]
    assert params["num-gpus"] == "0"
    assert _resources_param(params["resources"]) == {ray_name: 4}
    validate(manifest, crd_dir)


def test_extended_mapping_and_overwrite() -> None:
    cfg = ClusterConfiguration(
        name="c",
        extended_resource_mapping={"example.com/fpga": "FPGA", "nvidia.com/gpu": "A100"},
        overwrite_default_resource_mapping=True,
        worker_extended_resource_requests={"example.com/fpga": 2, "nvidia.com/gpu": 1},
    )
    params = build_raycluster(cfg)["spec"]["workerGroupSpecs"][0]["rayStartParams"]
    assert params["num-gpus"] == "0"
    assert _resources_param(params["resources"]) == {"A100": 1, "FPGA": 2}


def test_integer_memory_means_gigabytes() -> None:
    manifest = seed000_cluster("first-raycluster").to_dict()
    head = manifest["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["resources"]
    assert head["requests"]["memory"] == "8G" and head["limits"]["memory"] == "8G"
    cfg = ClusterConfiguration(name="c", worker_memory_requests="512Mi", worker_memory_limits="1Gi")
    worker = build_raycluster(cfg)["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]
    assert worker["resources"]["requests"]["memory"] == "512Mi"
    assert worker["resources"]["limits"]["memory"] == "1Gi"


def test_an_unset_limit_is_the_larger_of_default_and_request() -> None:
    """Seed 001 gives worker_cpu_requests=2, worker_memory_requests=8 and no limits (defaults 1 and 6G)."""
    manifest = workspace_cluster().to_dict()
    resources = manifest["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["resources"]
    assert resources["requests"] == {"cpu": "2", "memory": "8G", "nvidia.com/gpu": 1}
    assert resources["limits"] == {"cpu": "2", "memory": "8G", "nvidia.com/gpu": 1}
    head = manifest["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["resources"]
    assert head["requests"] == {"cpu": "1", "memory": "5G"}
    assert head["limits"] == {"cpu": "2", "memory": "8G"}  # request below the default: the default stays


def test_fractional_cpu_becomes_millicores_and_num_cpus_rounds_up() -> None:
    cfg = ClusterConfiguration(name="c", worker_cpu_requests=0.5, worker_cpu_limits="1500m")
    worker = build_raycluster(cfg)["spec"]["workerGroupSpecs"][0]
    assert worker["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "500m"
    assert worker["rayStartParams"]["num-cpus"] == "2"


def test_head_ports_and_default_image() -> None:
    manifest = workspace_cluster().to_dict()
    head = manifest["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    assert {p["name"]: p["containerPort"] for p in head["ports"]} == {
        "gcs": 6379,
        "dashboard": 8265,
        "client": 10001,
    }
    import importlib.metadata
    import sys

    expected = (
        f"rayproject/ray:{importlib.metadata.version('ray')}-py{sys.version_info[0]}{sys.version_info[1]}"
    )
    assert head["image"] == expected
    assert manifest["spec"]["rayVersion"] == importlib.metadata.version("ray")


def test_seed004_prod_cluster_matches_the_seed_yaml() -> None:
    manifest = seed004_cluster("team-a").to_dict()
    assert manifest["metadata"]["namespace"] == "team-a"
    assert manifest["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "prod-priority"
    worker = manifest["spec"]["workerGroupSpecs"][0]
    assert (worker["replicas"], worker["minReplicas"], worker["maxReplicas"]) == (1, 1, 1)
    pod = worker["template"]["spec"]
    assert pod["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert pod["containers"][0]["resources"]["limits"] == {"cpu": "2", "memory": "3G", "nvidia.com/gpu": "1"}
    assert pod["containers"][0]["image"] == "quay.io/project-codeflare/ray:2.20.0-py39-cu118"
    dev = seed004_cluster("team-b").to_dict()
    assert "tolerations" not in dev["spec"]["workerGroupSpecs"][0]["template"]["spec"]


def test_several_worker_groups_render_in_order_with_their_own_shape(crd_dir: Path) -> None:
    cfg = ClusterConfiguration(
        name="hetero",
        local_queue="q",
        image="example.org/ray:custom",
        worker_groups=[
            WorkerGroup(
                name="gpu",
                replicas=2,
                cpu_requests=8,
                memory_requests="32Gi",
                extended_resource_requests={"nvidia.com/gpu": 4},
                tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                node_selector={"nvidia.com/gpu.present": "true"},
            ),
            WorkerGroup(
                name="cpu", replicas=3, min_replicas=1, max_replicas=5, envs={"OMP_NUM_THREADS": "4"}
            ),
        ],
    )
    manifest = Cluster(cfg).to_dict()
    validate(manifest, crd_dir)
    gpu, cpu = manifest["spec"]["workerGroupSpecs"]
    assert (gpu["groupName"], gpu["replicas"], gpu["rayStartParams"]["num-gpus"]) == ("gpu", 2, "4")
    assert gpu["template"]["spec"]["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    assert gpu["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] == "8"
    assert (cpu["groupName"], cpu["replicas"], cpu["minReplicas"], cpu["maxReplicas"]) == ("cpu", 3, 1, 5)
    assert cpu["template"]["spec"]["containers"][0]["env"] == [{"name": "OMP_NUM_THREADS", "value": "4"}]
    assert "tolerations" not in cpu["template"]["spec"]


def test_pod_options_render(crd_dir: Path) -> None:
    cfg = ClusterConfiguration(
        name="opts",
        namespace="ds",
        envs={"HF_HOME": "/data/hf", "RETRIES": 3},
        annotations={"example.com/owner": "ds-team"},
        image_pull_secrets=["regcred"],
        head_tolerations=[{"key": "dedicated", "operator": "Equal", "value": "ray", "effect": "NoSchedule"}],
        head_node_selector={"pool": "cpu"},
        volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "datasets"}}],
        volume_mounts=[{"name": "data", "mountPath": "/data"}],
    )
    manifest = build_raycluster(cfg)
    validate(manifest, crd_dir)
    head = manifest["spec"]["headGroupSpec"]["template"]
    container = head["spec"]["containers"][0]
    assert container["env"] == [{"name": "HF_HOME", "value": "/data/hf"}, {"name": "RETRIES", "value": "3"}]
    assert container["volumeMounts"] == [{"name": "data", "mountPath": "/data"}]
    assert head["spec"]["imagePullSecrets"] == [{"name": "regcred"}]
    assert head["spec"]["nodeSelector"] == {"pool": "cpu"}
    assert head["metadata"]["annotations"] == {"example.com/owner": "ds-team"}
    assert manifest["metadata"]["annotations"] == {"example.com/owner": "ds-team"}
    worker = manifest["spec"]["workerGroupSpecs"][0]["template"]["spec"]
    assert worker["volumes"] == head["spec"]["volumes"]


def test_kubernetes_client_objects_are_accepted() -> None:
    from kubernetes.client import V1EmptyDirVolumeSource, V1Toleration, V1Volume, V1VolumeMount

    cfg = ClusterConfiguration(
        name="c",
        worker_tolerations=[V1Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")],
        volumes=[V1Volume(name="scratch", empty_dir=V1EmptyDirVolumeSource())],
        volume_mounts=[V1VolumeMount(name="scratch", mount_path="/scratch")],
    )
    pod = build_raycluster(cfg)["spec"]["workerGroupSpecs"][0]["template"]["spec"]
    assert pod["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert pod["containers"][0]["volumeMounts"] == [{"name": "scratch", "mountPath": "/scratch"}]
    assert pod["volumes"] == [{"name": "scratch", "emptyDir": {}}]


def test_elastic_autoscaling_under_a_queue(crd_dir: Path) -> None:
    cfg = ClusterConfiguration(
        name="elastic", local_queue="q", enable_autoscaling=True, min_workers=1, max_workers=4, elastic=True
    )
    manifest = build_raycluster(cfg)
    validate(manifest, crd_dir)
    assert manifest["metadata"]["annotations"]["kueue.x-k8s.io/elastic-job"] == "true"
    assert manifest["spec"]["enableInTreeAutoscaling"] is True
    group = manifest["spec"]["workerGroupSpecs"][0]
    assert (group["replicas"], group["minReplicas"], group["maxReplicas"]) == (1, 1, 4)
    pod_annotations = group["template"].get("metadata", {}).get("annotations", {})
    assert "kueue.x-k8s.io/elastic-job" not in pod_annotations


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"num_workers": 5, "min_workers": 1, "max_workers": 4}, "num_workers", "within [min_workers=1"),
        ({"num_workers": 2, "min_workers": 3, "max_workers": 2}, "min_workers", "at most max_workers=2"),
        ({"num_workers": 0, "min_workers": 0, "max_workers": 0}, "max_workers", "at least 1"),
    ],
)
def test_autoscaling_bounds_that_contradict_the_worker_counts_are_refused(
    fields: dict[str, int], field: str, words: str
) -> None:
    with pytest.raises(ConfigError) as err:
        ClusterConfiguration(name="bad", enable_autoscaling=True, elastic=True, **fields)
    assert err.value.field == field and words in str(err.value)


def test_autoscaling_under_a_queue_with_elastic_false_says_how_and_which_kueue() -> None:
    with pytest.raises(ConfigError) as err:
        ClusterConfiguration(
            name="as", local_queue="q", enable_autoscaling=True, max_workers=2, elastic=False
        )
    text = str(err.value)
    assert err.value.field == "enable_autoscaling"
    assert "elastic=True" in text and "kueue.x-k8s.io/elastic-job" in text
    assert "v0.14" in text and "ElasticJobsViaWorkloadSlices" in text and "v0.18" in text


@pytest.mark.parametrize(
    ("fields", "elastic"),
    [
        ({"local_queue": "q", "enable_autoscaling": True, "max_workers": 2}, True),  # the default rule
        ({"enable_autoscaling": True, "max_workers": 2}, False),  # no queue: no gate nobody would lift
        ({"local_queue": "q"}, False),  # a fixed size needs no slices
        ({"elastic": True}, True),
        (
            {
                "local_queue": "q",
                "enable_autoscaling": True,
                "annotations": {"kueue.x-k8s.io/elastic-job": "true"},
            },
            True,
        ),
    ],
)
def test_elastic_by_default_when_autoscaling_under_a_queue(fields: dict[str, object], elastic: bool) -> None:
    manifest = build_raycluster(ClusterConfiguration(name="e", **fields))  # type: ignore[arg-type]
    annotations = manifest["metadata"].get("annotations", {})
    assert (annotations.get("kueue.x-k8s.io/elastic-job") == "true") is elastic


def test_to_dict_returns_a_fresh_copy() -> None:
    cluster = workspace_cluster()
    first = cluster.to_dict()
    first["spec"]["workerGroupSpecs"][0]["replicas"] = 99
    assert cluster.to_dict()["spec"]["workerGroupSpecs"][0]["replicas"] == 2


def test_yaml_has_no_aliases() -> None:
    text = seed000_cluster("first-raycluster").to_yaml()
    assert "&id" not in text and "*id" not in text
    assert yaml.safe_load(text)["kind"] == "RayCluster"


def test_rayjob_manifest_fields(crd_dir: Path) -> None:
    job = RayJob(
        job_name="nightly",
        entrypoint="python batch.py",
        cluster_config=ManagedClusterConfig(num_workers=2, worker_accelerators={"google.com/tpu": 4}),
        namespace="prod",
        local_queue="batch-jobs-queue",
        priority_class="prod-priority",
        runtime_env={"env_vars": {"STAGE": "prod"}, "pip": ["pyarrow"]},
        ttl_seconds_after_finished=300,
        active_deadline_seconds=7200,
        submission_mode="HTTPMode",
    )
    manifest = job.to_dict()
    validate(manifest, crd_dir)
    spec = manifest["spec"]
    assert manifest["metadata"]["namespace"] == "prod"
    assert manifest["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "batch-jobs-queue"
    assert spec["submissionMode"] == "HTTPMode"
    assert (
        spec["shutdownAfterJobFinishes"],
        spec["ttlSecondsAfterFinished"],
        spec["activeDeadlineSeconds"],
    ) == (
        True,
        300,
        7200,
    )
    assert yaml.safe_load(spec["runtimeEnvYAML"]) == {"env_vars": {"STAGE": "prod"}, "pip": ["pyarrow"]}
    worker = spec["rayClusterSpec"]["workerGroupSpecs"][0]
    assert _resources_param(worker["rayStartParams"]["resources"]) == {"TPU": 4}
    assert "clusterSelector" not in spec


def test_rayjob_defaults_are_explicit() -> None:
    spec = RayJob(job_name="j", entrypoint="python x.py", cluster_config=ManagedClusterConfig()).to_dict()[
        "spec"
    ]
    assert spec["submissionMode"] == "K8sJobMode"
    assert spec["shutdownAfterJobFinishes"] is True
    assert spec["ttlSecondsAfterFinished"] == 0
    assert "activeDeadlineSeconds" not in spec and "runtimeEnvYAML" not in spec


def test_managed_cluster_labels_go_on_the_pods() -> None:
    job = RayJob(
        job_name="j",
        entrypoint="python x.py",
        cluster_config=ManagedClusterConfig(labels={"team": "ml"}),
        labels={"kueue.x-k8s.io/queue-name": "q"},
    )
    manifest = job.to_dict()
    assert job.local_queue == "q"
    assert manifest["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["metadata"]["labels"] == {
        "team": "ml"
    }
    assert "team" not in manifest["metadata"]["labels"]


def test_requirements_file_is_read_with_includes(tmp_path: Path) -> None:
    from rayqueue_sdk.job.rayjob import render_rayjob

    (tmp_path / "base.txt").write_text("numpy\n", encoding="utf-8")
    (tmp_path / "req.txt").write_text("# top\n-r base.txt\ntorch==2.4  # cuda\n", encoding="utf-8")
    job = RayJob(
        job_name="j",
        entrypoint="python x.py",
        cluster_config=ManagedClusterConfig(),
        runtime_env={"pip": "req.txt"},
    )
    env = yaml.safe_load(render_rayjob(job, base_dir=tmp_path)["spec"]["runtimeEnvYAML"])
    assert env == {"pip": ["numpy", "torch==2.4"]}


def test_constructors_do_no_io(monkeypatch: pytest.MonkeyPatch) -> None:
    """No file is opened and no socket is made while building configurations, clusters and jobs."""
    import builtins
    import io
    import socket

    from rayqueue_sdk.config.models import default_image

    default_image()  # the Ray version is read from package metadata once per process, then cached

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"I/O during construction: {args!r}")

    monkeypatch.setattr(builtins, "open", refuse)
    monkeypatch.setattr(io, "open", refuse)
    monkeypatch.setattr(socket, "socket", refuse)
    Cluster(
        ClusterConfiguration(
            name="c", local_queue="q", worker_extended_resource_requests={"nvidia.com/gpu": 1}
        )
    )
    RayJob(
        job_name="j",
        entrypoint="python x.py",
        cluster_config=ManagedClusterConfig(),
        runtime_env={"pip": "does-not-exist.txt"},
    )
