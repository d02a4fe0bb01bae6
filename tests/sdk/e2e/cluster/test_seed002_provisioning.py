"""Seed 002 end to end through the SDK: Kueue's ProvisioningRequest admission check on the local plane.

KubeRay runs without Ray heads (``ray_enabled=False``: an admitted cluster is ready at once) and the local
cluster autoscaler answers ProvisioningRequests after a short delay. A cluster that fits the ClusterQueue's
quota still waits for provisioning: ``status()`` says so in Kueue's words, with the check and the attempt;
then it is admitted and ready. With a failing provisioner the wait goes through Kueue's retries and ends
in the typed :class:`~rayqueue_sdk.errors.AdmissionCheckRejected`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster_helpers import eventually

from rayqueue_local.controllers.autoscaler import LocalClusterAutoscaler
from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_local.scenarios import seed002_queues
from rayqueue_sdk import (
    AdmissionCheckRejected,
    Cluster,
    ClusterConfiguration,
    ClusterPhase,
    PreemptedError,
    TokenAuthentication,
)
from rayqueue_sdk.cluster.observe import observe_cluster
from rayqueue_sdk.cluster.wait import wait_for_cluster
from rayqueue_sdk.kube.client import build_api_client, set_current_client

pytestmark = pytest.mark.slow

NS = "seed002"


@pytest.fixture(scope="module")
def prov_plane(crd_dir: Path) -> Iterator[LocalControlPlane]:
    cp = LocalControlPlane(
        crd_dir=crd_dir,
        ray_enabled=False,
        keda_enabled=False,
        prometheus_enabled=False,
        provisioning_delay_seconds=1.0,
    )
    with cp:
        cp.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        cp.apply(seed002_queues(NS, backoff_base_seconds=1, backoff_max_seconds=2))
        yield cp


@pytest.fixture
def admin_api(prov_plane: LocalControlPlane) -> Iterator[Any]:
    api = build_api_client(
        prov_plane.server, token=prov_plane.token, ca_cert_path=str(prov_plane.ca_cert_path)
    )
    set_current_client(api)
    yield api
    set_current_client(None)


def scaler(cp: LocalControlPlane, failures: int) -> None:
    next(c for c in cp.controllers if isinstance(c, LocalClusterAutoscaler)).failures = failures


def config(name: str) -> ClusterConfiguration:
    return ClusterConfiguration(
        name=name,
        namespace=NS,
        num_workers=1,
        head_cpu_requests=2,
        head_cpu_limits=2,
        head_memory_requests=2,
        head_memory_limits=2,
        worker_cpu_requests=2,
        worker_cpu_limits=2,
        worker_memory_requests=2,
        worker_memory_limits=2,
        local_queue="user-queue",
    )


def test_fitting_cluster_waits_for_provisioning_then_is_ready(
    prov_plane: LocalControlPlane, admin_api: Any
) -> None:
    scaler(prov_plane, 0)
    cluster = Cluster(config("fits"))
    cluster.up()
    waiting = eventually(
        lambda: (
            (st := cluster.status()).phase is ClusterPhase.QUEUED
            and "admission check" in st.explanation
            and st
        ),
        timeout=30,
        what="the admission check wait",
    )
    assert (
        "quota reserved in ClusterQueue 'cluster-queue'; waiting for admission check sample-prov: "
        in waiting.explanation
    )
    assert "ProvisioningRequest raycluster-fits-" in waiting.explanation
    assert "-sample-prov-1 Provisioned=False (attempt 1 of 3)" in waiting.explanation
    # A data scientist may not read the cluster-scoped AdmissionCheck: the attempt without its limit.
    token = prov_plane.add_user("dora", [NS])
    user_api = TokenAuthentication(
        token, prov_plane.server, ca_cert_path=str(prov_plane.ca_cert_path)
    ).api_client()
    as_user = observe_cluster("fits", NS, user_api)
    if as_user.phase is ClusterPhase.QUEUED:  # (unless provisioning finished meanwhile)
        assert "-sample-prov-1 Provisioned=False (attempt 1)" in as_user.explanation
    ready = cluster.wait_ready(timeout=60, dashboard_check=False)
    assert ready.ready
    cluster.down()


def test_a_failed_provisioning_is_retried_then_ready(prov_plane: LocalControlPlane, admin_api: Any) -> None:
    scaler(prov_plane, 1)
    cluster = Cluster(config("retried"))
    cluster.up()
    seen: list[str] = []
    final = wait_for_cluster(
        "retried", NS, timeout=60, client=admin_api, on_progress=lambda st: seen.append(st.explanation)
    )
    assert final.ready
    assert any("(attempt 1 of 3)" in text for text in seen)
    assert any("(attempt 2 of 3)" in text for text in seen)
    assert any("(AdmissionCheck); requeued" in text for text in seen), seen
    cluster.down()


def test_a_failing_provisioner_ends_in_admission_check_rejected(
    prov_plane: LocalControlPlane, admin_api: Any
) -> None:
    scaler(prov_plane, 3)
    cluster = Cluster(config("doomed"))
    cluster.up()
    seen: list[str] = []
    with pytest.raises(AdmissionCheckRejected) as info:
        wait_for_cluster(
            "doomed", NS, timeout=60, client=admin_api, on_progress=lambda st: seen.append(st.explanation)
        )
    # The wait fails as soon as Kueue rejects the check (before or after it deactivates the workload).
    assert isinstance(info.value, PreemptedError)
    assert info.value.reason in ("AdmissionCheck", "DeactivatedDueToAdmissionCheck")
    assert 'AdmissionCheck in Rejected state: "sample-prov"' in str(info.value)
    assert any("(attempt 3 of 3)" in text for text in seen), seen
    status = cluster.status()
    assert status.phase is ClusterPhase.DEACTIVATED and status.explanation.startswith(
        "admission check rejected: "
    )
    cluster.down()
