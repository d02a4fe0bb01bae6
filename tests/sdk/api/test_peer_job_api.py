"""``job._api.get_job_status(name=..., k8s_namespace=...)``: codeflare-sdk's private call that its
checkpointing notebook makes to find ``rayClusterName``, answered by the compatibility shim against the local
control plane (no controllers: the test writes KubeRay's status itself, from the shim's wait)."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client as k8s
from sdk_helpers import NS

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import RayJob
from rayqueue_sdk.config.models import ManagedClusterConfig
from rayqueue_sdk.job.peer_api import PeerJobApi
from rayqueue_sdk.kube.session import KubeSession

RAY = ("ray.io", "v1")
HEAD = {"rayStartParams": {}, "template": {"spec": {"containers": [{"name": "ray-head", "image": "r:1"}]}}}


def _rayjob(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"entrypoint": "python x.py", "rayClusterSpec": {"headGroupSpec": HEAD}},
    }


def test_get_job_status_waits_for_kuberay_and_returns_the_status_dict(plane: LocalControlPlane) -> None:
    custom = k8s.CustomObjectsApi(plane.api_client())
    custom.create_namespaced_custom_object(*RAY, NS, "rayjobs", _rayjob("peer-ckpt"))
    slept: list[float] = []

    def kuberay_writes_status(seconds: float) -> None:  # the shim's wait: KubeRay sets the status meanwhile
        slept.append(seconds)
        custom.patch_namespaced_custom_object_status(
            *RAY,
            NS,
            "rayjobs",
            "peer-ckpt",
            {"status": {"rayClusterName": "peer-ckpt-x7k2p", "jobDeploymentStatus": "Initializing"}},
        )

    job = RayJob(
        job_name="peer-ckpt",
        entrypoint="python x.py",
        cluster_config=ManagedClusterConfig(),
        namespace=NS,
        client=plane.api_client(),
    )
    job.__dict__["_api"] = PeerJobApi(job.session, sleep=kuberay_writes_status)
    status = job._api.get_job_status(name=job.name, k8s_namespace=NS)
    assert status is not None  # the status as stored (with the CRD's defaults), a plain dict
    assert status["rayClusterName"] == "peer-ckpt-x7k2p"
    assert status["jobDeploymentStatus"] == "Initializing"
    assert slept == [5.0]  # one wait of the peer's default delay, then the status was there


def test_the_rayjob_has_the_shim_and_a_missing_job_or_a_status_that_never_comes_is_none(
    plane: LocalControlPlane,
) -> None:
    job = RayJob(
        job_name="peer-none",
        entrypoint="python x.py",
        cluster_config=ManagedClusterConfig(),
        namespace=NS,
        client=plane.api_client(),
    )
    assert isinstance(job._api, PeerJobApi)
    assert job._api.get_job_status(name="peer-none", k8s_namespace=NS) is None  # never submitted

    k8s.CustomObjectsApi(plane.api_client()).create_namespaced_custom_object(
        *RAY, NS, "rayjobs", _rayjob("peer-empty")
    )
    slept: list[float] = []
    shim = PeerJobApi(KubeSession.of(plane.api_client()), sleep=slept.append)
    answer = shim.get_job_status(name="peer-empty", k8s_namespace=NS, timeout=12, delay_between_attempts=5)
    assert answer is None
    assert slept == [5.0, 5.0, 2.0]  # the peer's timeout, spent in its own steps


def test_other_private_methods_name_the_public_one() -> None:
    job = RayJob(job_name="j", entrypoint="python x.py", cluster_config=ManagedClusterConfig(), namespace=NS)
    with pytest.raises(AttributeError, match=r"RayjobApi.resubmit_job .*use RayJob.resubmit\(\)"):
        job._api.resubmit_job  # noqa: B018
    with pytest.raises(AttributeError):
        job._api.no_such_thing  # noqa: B018
