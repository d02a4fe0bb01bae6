"""``pod_security="restricted"`` reaches every pod a RayJob makes: the head, the workers and KubeRay's
submitter pod (K8sJobMode), with or without a shipped working_dir; each passes the plane's Pod Security
"restricted" checks (the API server's own rules) and the RayJob fits KubeRay's CRD."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from crd_schema import validate

from rayqueue_local.apiserver.podsecurity import violations
from rayqueue_local.controllers.kuberay.submitter import submitter_pod
from rayqueue_sdk import ConfigError, ManagedClusterConfig, RayJob
from rayqueue_sdk.job.runtime_env import ship_working_dir
from rayqueue_sdk.manifests.rayjob import SUBMITTER_CONTAINER


def _job(**config: Any) -> dict[str, Any]:
    extra = {k: config.pop(k) for k in ("submission_mode",) if k in config}
    cluster = ManagedClusterConfig(num_workers=1, **config)
    return RayJob(
        job_name="nightly", entrypoint="python x.py", cluster_config=cluster, namespace="ds", **extra
    ).to_dict()


def _pods(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every pod the RayJob makes, as its controllers would create it: head, workers, and KubeRay's
    submitter (from the template, else KubeRay's default), with the command and env KubeRay adds."""
    spec = manifest["spec"]
    cluster = spec["rayClusterSpec"]
    pods = {"head": {"spec": cluster["headGroupSpec"]["template"]["spec"]}}
    for group in cluster["workerGroupSpecs"]:
        pods[group["groupName"]] = {"spec": group["template"]["spec"]}
    job = {**manifest, "metadata": {**manifest["metadata"], "uid": "u1"}}
    pods["submitter"] = submitter_pod(
        job, spec.get("submitterPodTemplate"), "nightly-abcde", dashboard="10.0.0.1:8265", job_id="nightly-x"
    )
    return pods


def test_restricted_reaches_the_submitter_pod_too(crd_dir: Path) -> None:
    manifest = _job(pod_security="restricted")
    validate(manifest, crd_dir)
    pods = _pods(manifest)
    assert set(pods) == {"head", "worker-group", "submitter"}
    assert {name: violations(pod, "restricted") for name, pod in pods.items()} == dict.fromkeys(pods, [])
    # KubeRay's default submitter, made to comply: the head's image, its small requests, never restarted
    template = manifest["spec"]["submitterPodTemplate"]["spec"]
    head = manifest["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    (container,) = template["containers"]
    assert (container["name"], container["image"], template["restartPolicy"]) == (
        SUBMITTER_CONTAINER,
        head["image"],
        "Never",
    )
    assert container["resources"]["requests"] == {"cpu": "500m", "memory": "200Mi"}
    assert "command" not in container  # KubeRay writes its `ray job submit` command itself


def test_without_it_kuberays_default_submitter_is_what_restricted_refuses() -> None:
    """The control: no template, so KubeRay's default submitter pod, which has no securityContext."""
    manifest = _job()
    assert "submitterPodTemplate" not in manifest["spec"]
    found = violations(_pods(manifest)["submitter"], "restricted")
    assert [v.split(" (")[0] for v in found] == [
        "allowPrivilegeEscalation != false",
        "unrestricted capabilities",
        "runAsNonRoot != true",
        "seccompProfile",
    ]


def test_a_shipped_working_dir_keeps_the_submitter_restricted(crd_dir: Path) -> None:
    manifest, secret = ship_working_dir(_job(pod_security="restricted"), {"env_vars": {"A": "1"}}, b"PK")
    validate(manifest, crd_dir)
    template = manifest["spec"]["submitterPodTemplate"]["spec"]
    assert [c["name"] for c in template["initContainers"]] == ["unpack-working-dir"]
    assert template["volumes"][0]["secret"]["secretName"] == secret["metadata"]["name"]
    assert violations(_pods(manifest)["submitter"], "restricted") == []
    # and as before without pod_security: KubeRay's default, plus the unpacking
    plain, _ = ship_working_dir(_job(), {}, b"PK")
    plain_pod = plain["spec"]["submitterPodTemplate"]["spec"]
    assert "securityContext" not in plain_pod and "securityContext" not in plain_pod["initContainers"][0]
    assert plain_pod["containers"][0]["resources"] == template["containers"][0]["resources"]


def test_the_submitter_pulls_the_head_image_with_the_heads_pull_secrets() -> None:
    manifest = _job(pod_security="restricted", image_pull_secrets=["registry-creds"])
    template = manifest["spec"]["submitterPodTemplate"]["spec"]
    assert template["imagePullSecrets"] == [{"name": "registry-creds"}]


def test_sidecar_mode_cannot_be_restricted_and_http_mode_has_no_submitter_pod() -> None:
    with pytest.raises(ConfigError) as info:
        _job(pod_security="restricted", submission_mode="SidecarMode")
    assert info.value.field == "cluster_config.pod_security"
    assert "SidecarMode" in str(info.value) and "'K8sJobMode'" in str(info.value)
    assert "submitterPodTemplate" not in _job(pod_security="restricted", submission_mode="HTTPMode")["spec"]
