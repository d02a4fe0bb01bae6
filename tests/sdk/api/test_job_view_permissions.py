"""The job view's Stop asks the server (SelfSubjectAccessReview) whether the user may stop the job: a
job-owned job is stopped by deactivating its Kueue Workload, so ``patch workloads.kueue.x-k8s.io``; a job on
an existing cluster goes through Ray's job API, which has no Kubernetes verb to ask about."""

from __future__ import annotations

from typing import Any

from sdk_helpers import NS

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import JobPhase, ManagedClusterConfig, RayJob, RayJobStatus, TokenAuthentication


def owned(client: Any) -> RayJob:
    return RayJob(
        job_name="nightly",
        entrypoint="python train.py",
        cluster_config=ManagedClusterConfig(num_workers=1),
        local_queue="team-q",
        namespace=NS,
        client=client,
    )


def test_stop_needs_patch_on_workloads_for_a_job_owned_job(
    plane: LocalControlPlane, user_token: str, admin: Any
) -> None:
    user = TokenAuthentication(token=user_token, server=plane.server, ca_cert_path=str(plane.ca_cert_path))
    assert owned(user).stop_permission() == f"may not patch workloads.kueue.x-k8s.io in namespace {NS!r}"
    assert owned(admin).stop_permission() is None
    # A running job is stopped through Ray's job API: nothing to ask the Kubernetes API about.
    running = RayJobStatus("nightly", NS, JobPhase.RUNNING, "running", owns_cluster=True)
    assert owned(user).stop_permission(running) is None


def test_stop_on_an_existing_cluster_is_rays_to_refuse(admin: Any) -> None:
    job = RayJob(job_name="quick", entrypoint="python x.py", cluster_name="ws", namespace=NS, client=admin)
    assert job.stop_permission() is None
