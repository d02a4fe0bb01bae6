"""codeflare-sdk's names under rayqueue_sdk, one by one, without a server (docs/migration.md's table).

Behaviour against the local control plane and a real Ray head: tests/sdk/e2e/job/test_codeflare_surface.py.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest
from crd_schema import validate

import rayqueue_sdk
from rayqueue_sdk import (
    Cluster,
    ClusterConfiguration,
    ClusterPhase,
    Codeflare,
    CodeFlareClusterStatus,
    ConfigError,
    JobPhase,
    RayClusterStatus,
    RayJob,
    RayJobClient,
    RayJobStatus,
    SDKConfig,
    TokenAuthentication,
    get_cluster,
    set_api_client,
)
from rayqueue_sdk.cluster.status import ClusterStatus
from rayqueue_sdk.common.kubernetes_cluster import get_api_client
from rayqueue_sdk.common.utils.constants import CUDA_PY312_RUNTIME_IMAGE, SUPPORTED_PYTHON_VERSIONS
from rayqueue_sdk.common.utils.utils import get_ray_image_for_python_version
from rayqueue_sdk.kube.client import build_api_client, current_client, set_current_client


@pytest.fixture(autouse=True)
def no_current_client() -> Any:
    set_current_client(None)
    yield
    set_current_client(None)


def plain_api_client(host: str = "https://k8s.example:6443", token: str = "s3cr3t") -> Any:
    """An ApiClient made with the kubernetes package alone, as kube-authkit or a kubeconfig loader does."""
    from kubernetes import client as k8s

    cfg = k8s.Configuration()
    cfg.host = host
    cfg.api_key = {"authorization": f"Bearer {token}"}
    return k8s.ApiClient(configuration=cfg)


# -- set_api_client / get_api_client ----------------------------------------------------------------
def test_set_api_client_takes_any_kubernetes_api_client() -> None:
    api = plain_api_client()
    set_api_client(api)
    assert current_client() is api and get_api_client() is api


def test_set_api_client_takes_what_makes_a_client() -> None:
    """Anything with ``api_client()`` (the SDK's authentication classes) hands over the client it makes."""
    made = build_api_client("https://k8s.example:6443")
    source = type("Source", (), {"api_client": lambda self: made})()
    set_api_client(source)
    assert get_api_client() is made


def test_set_api_client_refuses_what_is_not_a_client_and_names_the_field() -> None:
    with pytest.raises(ConfigError) as info:
        set_api_client("https://k8s.example:6443")  # type: ignore[arg-type]
    assert info.value.field == "api_client" and "ApiClient" in str(info.value)
    assert current_client() is None


# -- RayJobClient -------------------------------------------------------------------------------------
def test_ray_job_client_keeps_its_headers_out_of_its_repr() -> None:
    client = RayJobClient(
        address="https://ray.example", headers={"Authorization": "Bearer s3cr3t"}, verify=False
    )
    assert "s3cr3t" not in repr(client) and "Authorization" in repr(client)
    assert client.get_address() == "https://ray.example"


def test_ray_job_client_refuses_cluster_certificates() -> None:
    with pytest.raises(ConfigError) as info:
        RayJobClient(address="https://ray.example", create_cluster_cert=True)
    assert info.value.field == "create_cluster_cert"


def test_ray_job_client_does_not_import_ray_until_used() -> None:
    RayJobClient(address="http://127.0.0.1:9")
    code = (
        "import sys, rayqueue_sdk; rayqueue_sdk.RayJobClient(address='http://x'); print('ray' in sys.modules)"
    )
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- statuses unpack like codeflare's tuples -------------------------------------------------------------
@pytest.mark.parametrize(("phase", "ready"), [(ClusterPhase.READY, True), (ClusterPhase.QUEUED, False)])
def test_cluster_status_unpacks_to_phase_and_ready(phase: ClusterPhase, ready: bool) -> None:
    status, is_ready = ClusterStatus("ws", "ds", phase, ready, "explained")
    assert status is phase and is_ready is ready


def test_codeflare_cluster_status_names_are_our_phases() -> None:
    assert CodeFlareClusterStatus is ClusterPhase and RayClusterStatus is ClusterPhase
    for name in ("READY", "STARTING", "QUEUED", "QUEUEING", "FAILED", "UNKNOWN", "SUSPENDED"):
        assert isinstance(getattr(CodeFlareClusterStatus, name), ClusterPhase), name
    assert CodeFlareClusterStatus.QUEUEING is ClusterPhase.QUEUED
    assert RayClusterStatus.UNHEALTHY is ClusterPhase.FAILED
    assert [p.value for p in ClusterPhase].count("queued") == 1  # aliases are not listed twice


@pytest.mark.parametrize(("phase", "ready"), [(JobPhase.SUCCEEDED, True), (JobPhase.RUNNING, False)])
def test_rayjob_status_unpacks_to_phase_and_completed(phase: JobPhase, ready: bool) -> None:
    status, done = RayJobStatus("j", "ds", phase, "explained")
    assert status is phase and done is ready


# -- ClusterConfiguration: write_to_file, autoscaling, the peer's other fields ------------------------------
def test_write_to_file_writes_where_codeflare_does_when_the_cluster_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    caplog.set_level("INFO", logger="rayqueue_sdk")
    cluster = Cluster(ClusterConfiguration(name="raytest", num_workers=2, write_to_file=True))
    target = tmp_path / ".codeflare" / "resources" / "raytest.yaml"
    assert cluster.resource_yaml == str(target)
    assert target.read_text() == cluster.to_yaml()
    assert str(target) in caplog.text


def test_write_to_file_false_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    cluster = Cluster(ClusterConfiguration(name="raytest", write_to_file=False))
    assert not (tmp_path / ".codeflare").exists()
    assert isinstance(cluster.resource_yaml, dict)


def test_the_autoscaling_notebook_configuration_renders_a_valid_autoscaling_cluster(crd_dir: Path) -> None:
    cfg = ClusterConfiguration(
        name="autoscale-demo", namespace="rhods-notebooks", enable_autoscaling=True, min_workers=1,
        max_workers=2, head_extended_resource_requests={"nvidia.com/gpu": 0},
        worker_extended_resource_requests={"nvidia.com/gpu": 0}, write_to_file=False,
    )  # fmt: skip
    manifest = Cluster(cfg).to_dict()
    validate(manifest, crd_dir)
    group = manifest["spec"]["workerGroupSpecs"][0]
    assert manifest["spec"]["enableInTreeAutoscaling"] is True
    assert (group["minReplicas"], group["maxReplicas"]) == (1, 2)


def test_autoscaling_in_a_queue_needs_the_elastic_annotation() -> None:
    with pytest.raises(ConfigError) as info:
        ClusterConfiguration(
            name="a", enable_autoscaling=True, min_workers=1, max_workers=2, local_queue="q", elastic=False
        )
    assert info.value.field == "enable_autoscaling"
    assert ClusterConfiguration(name="a", enable_autoscaling=True, max_workers=2, local_queue="q").is_elastic


def test_the_peers_unsupported_field_says_why() -> None:
    with pytest.raises(ConfigError) as info:
        ClusterConfiguration(name="c", additional_worker_groups=[{"group_name": "g"}])
    assert info.value.field == "additional_worker_groups" and "not supported by rayqueue_sdk" in str(
        info.value
    )
    ClusterConfiguration(name="c", additional_worker_groups=None)


def test_gcs_fault_tolerance_renders_kuberays_options_and_validates(crd_dir: Path) -> None:
    cfg = ClusterConfiguration(
        name="ft", enable_gcs_ft=True, redis_address="redis.ds.svc:6379",
        redis_password_secret={"name": "redis-pw", "key": "password"}, external_storage_namespace="ws-ft",
    )  # fmt: skip
    manifest = Cluster(cfg).to_dict()
    validate(manifest, crd_dir)
    assert manifest["spec"]["gcsFaultToleranceOptions"] == {
        "redisAddress": "redis.ds.svc:6379",
        "redisPassword": {"valueFrom": {"secretKeyRef": {"name": "redis-pw", "key": "password"}}},
        "externalStorageNamespace": "ws-ft",
    }
    assert "gcsFaultToleranceOptions" not in Cluster(ClusterConfiguration(name="plain")).to_dict()["spec"]


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"enable_gcs_ft": True}, "redis_address", "required when enable_gcs_ft is True"),
        ({"enable_gcs_ft": True, "redis_address": "redis"}, "redis_address", "not host:port"),
        ({"enable_gcs_ft": True, "redis_address": "redis:0"}, "redis_address", "not host:port"),
        ({"enable_gcs_ft": True, "redis_address": "http://r:6379"}, "redis_address", "not host:port"),
        ({"redis_address": "redis:6379"}, "redis_address", "set without enable_gcs_ft=True"),
        (
            {"enable_gcs_ft": True, "redis_address": "r:6379", "redis_password_secret": {"name": "s"}},
            "redis_password_secret",
            "not a Secret reference",
        ),
        (
            {
                "enable_gcs_ft": True,
                "redis_address": "r:6379",
                "redis_password_secret": {"name": "S!", "key": "k"},
            },
            "redis_password_secret['name']",
            "Secret name",
        ),
    ],
)
def test_gcs_fault_tolerance_bad_fields_are_typed_errors(
    fields: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(ConfigError) as info:
        ClusterConfiguration(name="c", **fields)
    assert info.value.field == field and words in str(info.value)


def test_gcs_fault_tolerance_accepts_the_address_forms_ray_reads() -> None:
    for address in (
        "10.0.0.7:6379",
        "redis://redis.ns.svc.cluster.local:6379",
        "rediss://r:6380",
        "[::1]:6379",
    ):
        ClusterConfiguration(name="c", enable_gcs_ft=True, redis_address=address)


def test_a_jobs_cluster_config_refuses_gcs_fault_tolerance() -> None:
    cfg = ClusterConfiguration(enable_gcs_ft=True, redis_address="r:6379")
    with pytest.raises(ConfigError) as info:
        RayJob(job_name="j", entrypoint="python x.py", cluster_config=cfg)
    assert info.value.field == "cluster_config.enable_gcs_ft"


def test_enable_usage_stats_reaches_ray() -> None:
    head = Cluster(ClusterConfiguration(name="c", enable_usage_stats=True)).to_dict()["spec"]["headGroupSpec"]
    env = head["template"]["spec"]["containers"][0]["env"]
    assert {"name": "RAY_USAGE_STATS_ENABLED", "value": "1"} in env


def test_a_cluster_needs_a_name_that_a_jobs_cluster_config_may_leave_out() -> None:
    with pytest.raises(ConfigError) as info:
        Cluster(ClusterConfiguration(num_workers=1))
    assert info.value.field == "name"
    with pytest.raises(ConfigError):
        ClusterConfiguration(name="")


# -- api_client= --------------------------------------------------------------------------------------------
def test_cluster_rayjob_and_get_cluster_take_api_client() -> None:
    api = plain_api_client()
    assert Cluster(ClusterConfiguration(name="c"), api_client=api).session.api is api
    job = RayJob(job_name="j", entrypoint="python x.py", cluster_name="ws", namespace="ds", api_client=api)
    assert job.client is api
    with pytest.raises(ConfigError) as info:
        Cluster(ClusterConfiguration(name="c"), client=plain_api_client(), api_client=api)
    assert info.value.field == "api_client"
    with pytest.raises(ConfigError):
        get_cluster("c", "ds", client=plain_api_client(), api_client=api)


# -- RayJob(cluster_config=ClusterConfiguration(...)) (codeflare 0.40) ------------------------------------
def test_a_cluster_configuration_becomes_the_jobs_own_cluster_with_its_values() -> None:
    cfg = ClusterConfiguration(
        head_memory_requests=6, head_memory_limits=8, num_workers=1, worker_cpu_requests=1,
        worker_cpu_limits=1, worker_memory_requests=4, worker_memory_limits=6, local_queue="batch",
        worker_extended_resource_requests={"nvidia.com/gpu": 1},
    )  # fmt: skip
    job = RayJob(job_name="entrypoint-demo-job", entrypoint="python -c 'print(1)'", cluster_config=cfg)
    assert job.local_queue == "batch"
    spec = job.to_dict()["spec"]["rayClusterSpec"]
    head = spec["headGroupSpec"]["template"]["spec"]["containers"][0]["resources"]
    worker = spec["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["resources"]
    assert (
        head["requests"]["memory"] == "6G" and str(head["requests"]["cpu"]) == "1"
    )  # ClusterConfiguration's default
    assert worker["limits"]["memory"] == "6G" and worker["limits"]["nvidia.com/gpu"] == 1


def test_a_jobs_cluster_configuration_cannot_autoscale_or_be_named() -> None:
    for kwargs, field in (
        ({"enable_autoscaling": True, "max_workers": 2}, "cluster_config.enable_autoscaling"),
        ({"name": "mine"}, "cluster_config.name"),
    ):
        with pytest.raises(ConfigError) as info:
            RayJob(job_name="j", entrypoint="python x.py", cluster_config=ClusterConfiguration(**kwargs))
        assert info.value.field == field


# -- common.utils --------------------------------------------------------------------------------
def test_ray_image_for_python_version_follows_the_peers_fallbacks() -> None:
    assert get_ray_image_for_python_version("3.12") == CUDA_PY312_RUNTIME_IMAGE
    assert get_ray_image_for_python_version("3.8", warn_on_unsupported=False) == CUDA_PY312_RUNTIME_IMAGE
    with pytest.warns(UserWarning, match="3.8"):
        assert get_ray_image_for_python_version("3.8") is None
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert get_ray_image_for_python_version() == SUPPORTED_PYTHON_VERSIONS.get(here)


# -- Codeflare / SDKConfig ----------------------------------------------------------------------
def test_codeflare_binds_its_client_and_makes_it_current() -> None:
    api = plain_api_client()
    cf = Codeflare(config=SDKConfig(auth=api, namespace="ds"))
    assert cf.client is api and get_api_client() is api
    cluster = cf.clusters.create(ClusterConfiguration(name="ws"))
    assert cluster.namespace == "ds" and cluster.session.api is api
    job = cf.jobs.create("j", "python x.py", cluster_name="ws")
    assert job.namespace == "ds" and job.client is api


def test_codeflare_jobs_pass_every_job_option_to_the_rayjob() -> None:
    cf = Codeflare(config=SDKConfig(auth=plain_api_client(), namespace="ds"))
    job = cf.jobs.create(
        "j",
        "python x.py",
        "other",
        cluster_config=ClusterConfiguration(num_workers=1),
        runtime_env={"pip": ["numpy"]},
        ttl_seconds_after_finished=5,
        active_deadline_seconds=60,
        local_queue="q",
        priority_class="high",
    )
    assert (job.namespace, job.owns_cluster, job.runtime_env) == ("other", True, {"pip": ["numpy"]})
    assert (job.ttl_seconds_after_finished, job.active_deadline_seconds) == (5, 60)
    assert (job.local_queue, job.priority_class) == ("q", "high")
    with pytest.raises(TypeError, match="colour"):
        cf.jobs.submit("j", "python x.py", cluster_name="ws", colour="red")  # type: ignore[call-arg]


def test_codeflare_turns_a_kube_authkit_auth_config_into_a_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """kube-authkit is not a dependency: an ``AuthConfig`` goes through the user's own ``get_k8s_client``."""
    made = build_api_client("https://api.example.com:6443")
    fake = types.ModuleType("kube_authkit")
    seen: list[Any] = []
    fake.get_k8s_client = lambda config: seen.append(config) or made  # type: ignore[attr-defined]
    auth_config = type("AuthConfig", (), {"__module__": "kube_authkit.config"})()
    monkeypatch.setitem(sys.modules, "kube_authkit", fake)
    cf = Codeflare(config=SDKConfig(auth=auth_config))
    assert cf.client is made and seen == [auth_config]


def test_an_auth_config_without_kube_authkit_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "kube_authkit", None)  # import fails
    auth_config = type("AuthConfig", (), {"__module__": "kube_authkit.config"})()
    with pytest.raises(ConfigError) as info:
        Codeflare(config=SDKConfig(auth=auth_config))
    assert info.value.field == "auth" and "kube_authkit" in str(info.value)


def test_sdk_config_checks_the_log_level_and_hides_the_auth() -> None:
    with pytest.raises(ConfigError) as info:
        SDKConfig(log_level="LOUD")
    assert info.value.field == "log_level"
    auth = TokenAuthentication(token="s3cr3t", server="https://k8s.example:6443")
    assert "s3cr3t" not in repr(SDKConfig(auth=auth))


def test_every_codeflare_name_the_notebooks_use_is_exported() -> None:
    for name in (
        "set_api_client",
        "RayJobClient",
        "Codeflare",
        "SDKConfig",
        "list_all_clusters",
        "list_all_queued",
    ):
        assert name in rayqueue_sdk.__all__, name


def test_a_client_the_sdk_did_not_build_takes_the_kubeconfig_contexts_namespace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # codeflare's notebooks give no namespace: set_api_client(get_k8s_client(...)) hands over a client
    # with none, and the namespace comes from the environment (here the kubeconfig's current context).
    from kubernetes.client import ApiClient, Configuration

    from rayqueue_sdk.kube.client import default_namespace

    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        "current-context: mine\n"
        "contexts:\n- {name: other, context: {cluster: k, user: u, namespace: elsewhere}}\n"
        "- {name: mine, context: {cluster: k, user: u, namespace: team-a}}\n"
    )
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    cfg = Configuration()
    cfg.host = "https://k8s.example:6443"
    foreign = ApiClient(configuration=cfg)
    set_api_client(foreign)
    try:
        assert default_namespace() == "team-a"
        # a client the SDK built keeps its own namespace (or "default"), whatever the kubeconfig says
        assert default_namespace(build_api_client("https://k8s.example:6443", namespace="ds")) == "ds"
        assert default_namespace(build_api_client("https://k8s.example:6443", source="token")) == "default"
        kubeconfig.write_text("current-context: mine\ncontexts: [{name: mine, context: {cluster: k}}]\n")
        assert default_namespace() == "default"
    finally:
        set_current_client(None)
