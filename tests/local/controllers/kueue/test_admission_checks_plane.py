"""Seed 002 on a LocalControlPlane: Kueue's ProvisioningRequest admission check and the local autoscaler.

A RayCluster that fits the ClusterQueue's quota gets ``QuotaReserved`` but waits for check ``sample-prov``;
Kueue creates ProvisioningRequest ``<workload>-sample-prov-<attempt>`` with its PodTemplate; the local
autoscaler answers; the Workload is admitted, retried after a failure (evicted with reason
``AdmissionCheck``, requeued after the backoff) or, after ``backoffLimitCount`` retries, deactivated.
Waits poll with a deadline; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from kueue_factory import cluster_queue, container, flavor_resources, local_queue, ray_cluster

from rayqueue_local import LocalControlPlane
from rayqueue_local.controllers.autoscaler import LocalClusterAutoscaler
from rayqueue_local.scenarios import seed002_queues
from rayqueue_local.storage.store import StoreError

pytestmark = pytest.mark.slow

WL = "workloads.kueue.x-k8s.io"
PR = "provisioningrequests.autoscaling.x-k8s.io"
RC = "rayclusters.ray.io"
NS = "default"
T = TypeVar("T")


def wait_for(what: str, probe: Callable[[], T | None], timeout: float = 30.0) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def cp(crd_dir: Path) -> Iterator[LocalControlPlane]:
    plane = LocalControlPlane(
        crd_dir=crd_dir,
        ray_enabled=False,
        keda_enabled=False,
        prometheus_enabled=False,
        provisioning_delay_seconds=0.3,
    )
    plane.start()
    try:
        plane.apply(seed002_queues(backoff_base_seconds=1, backoff_max_seconds=2))
        yield plane
    finally:
        plane.stop()


@pytest.fixture(scope="module")
def scaler(cp: LocalControlPlane) -> LocalClusterAutoscaler:
    return next(c for c in cp.controllers if isinstance(c, LocalClusterAutoscaler))


def cond(obj: dict[str, Any], ctype: str) -> dict[str, Any]:
    return next((c for c in (obj.get("status") or {}).get("conditions") or () if c["type"] == ctype), {})


def submit(
    cp: LocalControlPlane, name: str, queue: str = "user-queue", **workers: Any
) -> Callable[[], dict[str, Any] | None]:
    cp.apply(ray_cluster(name, NS, queue=queue, head=container(cpu=2, memory="1Gi"), **workers))

    def workload() -> dict[str, Any] | None:
        for wl in cp.store.list(WL, NS):
            if any(ref.get("name") == name for ref in wl["metadata"].get("ownerReferences") or ()):
                return dict(wl)
        return None

    return workload


def events(cp: LocalControlPlane, wl_name: str) -> list[tuple[str, str]]:
    return [
        (e["reason"], e["message"])
        for e in cp.store.list("events", NS)
        if (e.get("involvedObject") or {}).get("name") == wl_name
    ]


def test_fitting_cluster_waits_for_provisioning_then_is_admitted(
    cp: LocalControlPlane, scaler: LocalClusterAutoscaler
) -> None:
    scaler.failures = 0
    workload = submit(cp, "ok")
    reserved = wait_for(
        "quota reserved", lambda: (w := workload()) and cond(w, "QuotaReserved").get("status") == "True" and w
    )
    name = reserved["metadata"]["name"]
    assert [c["name"] for c in reserved["status"]["admissionChecks"]] == ["sample-prov"]
    request = wait_for(
        "the ProvisioningRequest",
        lambda: [p for p in cp.store.list(PR, NS) if p["metadata"]["name"].startswith(name)],
    )[0]
    assert request["metadata"]["name"] == f"{name}-sample-prov-1"
    assert request["metadata"]["ownerReferences"][0]["kind"] == "Workload"
    assert request["spec"]["provisioningClassName"] == "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
    template_name = request["spec"]["podSets"][0]["podTemplateRef"]["name"]
    assert template_name == f"ppt-{name}-sample-prov-1-head"
    template = cp.store.get("podtemplates", NS, template_name)
    assert template["metadata"]["ownerReferences"][0]["kind"] == "ProvisioningRequest"
    admitted = wait_for(
        "admitted", lambda: (w := workload()) and cond(w, "Admitted").get("status") == "True" and w
    )
    check = admitted["status"]["admissionChecks"][0]
    assert (check["state"], check["message"]) == ("Ready", "Capacity is found in the cluster")
    reasons = [r for r, _ in events(cp, name)]
    assert (
        reasons.index("QuotaReserved")
        < reasons.index("ProvisioningRequestCreated")
        < reasons.index("Admitted")
    )
    wait_for("unsuspended", lambda: cp.store.get(RC, NS, "ok")["spec"].get("suspend") is False)
    ac = cp.store.get("admissionchecks.kueue.x-k8s.io", None, "sample-prov")
    assert cond(ac, "Active")["status"] == "True"


def test_a_failed_request_is_retried_after_the_backoff(
    cp: LocalControlPlane, scaler: LocalClusterAutoscaler
) -> None:
    scaler.failures = 1
    workload = submit(cp, "retry")
    admitted = wait_for(
        "admitted", lambda: (w := workload()) and cond(w, "Admitted").get("status") == "True" and w
    )
    name = admitted["metadata"]["name"]
    check = admitted["status"]["admissionChecks"][0]
    assert check["state"] == "Ready" and check["retryCount"] == 1
    assert [
        p["metadata"]["name"] for p in cp.store.list(PR, NS) if p["metadata"]["name"].startswith(name)
    ] == [f"{name}-sample-prov-2"]
    assert cond(admitted, "Requeued")["reason"] == "BackoffFinished"
    texts = dict(events(cp, name))
    assert texts["EvictedDueToAdmissionCheck"].startswith(
        'Evicted due to AdmissionCheck in Retry state: "sample-prov" (Retrying after failure: '
    )


def test_the_last_failure_rejects_the_check_and_deactivates(
    cp: LocalControlPlane, scaler: LocalClusterAutoscaler
) -> None:
    scaler.failures = 3  # backoffLimitCount 2: attempts 1 and 2 are retried, attempt 3 is the last
    workload = submit(cp, "doomed")
    gone = wait_for(
        "deactivated",
        lambda: (
            (w := workload())
            and w["spec"].get("active") is False
            and cond(w, "QuotaReserved").get("status") == "False"
            and w
        ),
    )
    evicted = cond(gone, "Evicted")
    assert evicted["reason"] == "DeactivatedDueToAdmissionCheck"
    assert evicted["message"].startswith(
        'The workload is deactivated due to AdmissionCheck in Rejected state: "sample-prov"'
    )
    name = gone["metadata"]["name"]
    reasons = [r for r, _ in events(cp, name)]
    assert reasons.count("ProvisioningRequestCreated") == 3 and "AdmissionCheckRejected" in reasons
    wait_for(
        "requests cleaned up",
        lambda: not [p for p in cp.store.list(PR, NS) if p["metadata"]["name"].startswith(name)] or None,
    )


def test_revoked_capacity_rejects_the_check_of_a_running_cluster(
    cp: LocalControlPlane, scaler: LocalClusterAutoscaler
) -> None:
    scaler.failures = 0
    workload = submit(cp, "revoked")
    admitted = wait_for(
        "admitted", lambda: (w := workload()) and cond(w, "Admitted").get("status") == "True" and w
    )
    name = admitted["metadata"]["name"]
    scaler.revoke_capacity(NS, f"{name}-sample-prov-1", "The nodes were reclaimed")
    gone = wait_for(
        "deactivated",
        lambda: (
            (w := workload()) and cond(w, "Evicted").get("reason") == "DeactivatedDueToAdmissionCheck" and w
        ),
    )
    assert gone["spec"]["active"] is False
    assert cond(gone, "Evicted")["message"] == (
        "The workload is deactivated due to AdmissionCheck in Rejected state: "
        '"sample-prov" (The nodes were reclaimed)'
    )
    wait_for("suspended", lambda: cp.store.get(RC, NS, "revoked")["spec"].get("suspend") is True)


def deactivate(cp: LocalControlPlane, name: str) -> None:
    """``spec.active=false`` on the current Workload, read again after a write conflict."""
    for _ in range(50):
        current = cp.store.get(WL, NS, name)
        try:
            cp.store.update(WL, dict(current, spec=dict(current["spec"], active=False)))
            return
        except StoreError as exc:
            if exc.code != 409:
                raise
    raise AssertionError(f"could not deactivate {name}")


PROVISIONING_ANNOTATIONS = (
    "autoscaling.x-k8s.io/consume-provisioning-request",
    "autoscaling.x-k8s.io/provisioning-class-name",
)


def template_annotations(rc: dict[str, Any]) -> list[dict[str, str]]:
    templates = [rc["spec"]["headGroupSpec"]["template"]]
    templates += [g["template"] for g in rc["spec"].get("workerGroupSpecs") or ()]
    return [(t.get("metadata") or {}).get("annotations") or {} for t in templates]


def test_the_ready_checks_pod_set_updates_annotate_the_pods_until_suspended(
    cp: LocalControlPlane, scaler: LocalClusterAutoscaler
) -> None:
    """Kueue starts the job with the check's podSetUpdates merged into its pod templates
    (jobframework/reconciler.go getPodSetsInfoFromStatus) and restores the templates on suspend."""
    scaler.failures = 0
    workload = submit(cp, "annotated", workers=[("w", 1, container(cpu=1, memory="1Gi"))])
    admitted = wait_for(
        "admitted", lambda: (w := workload()) and cond(w, "Admitted").get("status") == "True" and w
    )
    request = f"{admitted['metadata']['name']}-sample-prov-1"
    updates = admitted["status"]["admissionChecks"][0]["podSetUpdates"]
    assert sorted(u["name"] for u in updates) == ["head", "w"]
    expected = {
        PROVISIONING_ANNOTATIONS[0]: request,
        PROVISIONING_ANNOTATIONS[1]: "best-effort-atomic-scale-up.autoscaling.x-k8s.io",
        # Kueue's own pod-set info annotation, beside the check's (podset.FromAssignment).
        "kueue.x-k8s.io/workload": admitted["metadata"]["name"],
    }
    started = wait_for(
        "started", lambda: (rc := cp.store.get(RC, NS, "annotated"))["spec"].get("suspend") is False and rc
    )
    assert template_annotations(started) == [expected, expected]
    deactivate(cp, admitted["metadata"]["name"])
    stopped = wait_for(
        "suspended", lambda: (rc := cp.store.get(RC, NS, "annotated"))["spec"].get("suspend") is True and rc
    )
    assert template_annotations(stopped) == [{}, {}]


def test_a_cluster_queue_naming_a_missing_or_inactive_check_is_inactive_until_it_is_active(
    cp: LocalControlPlane, scaler: LocalClusterAutoscaler
) -> None:
    """pkg/cache/scheduler/clusterqueue.go: missing -> AdmissionCheckNotFound, not Active ->
    AdmissionCheckInactive; the Workloads read "ClusterQueue <name> is inactive" meanwhile."""
    scaler.failures = 0
    flavor = flavor_resources("default-flavor", cpu=8, memory="16Gi")
    cp.apply(
        [
            cluster_queue(
                "late-cq",
                [(["cpu", "memory"], [flavor])],
                admissionChecksStrategy={"admissionChecks": [{"name": "late-check"}]},
            ),
            local_queue(NS, "late-queue", "late-cq"),
        ]
    )

    def cq_active() -> dict[str, Any]:
        return cond(cp.store.get("clusterqueues.kueue.x-k8s.io", None, "late-cq"), "Active")

    missing = wait_for("inactive", lambda: (c := cq_active()) and c.get("status") == "False" and c)
    assert (missing["reason"], missing["message"]) == (
        "AdmissionCheckNotFound",
        "Can't admit new workloads: references missing AdmissionCheck(s): late-check.",
    )
    workload = submit(cp, "late", queue="late-queue")
    pending = wait_for("pending", lambda: (w := workload()) and cond(w, "QuotaReserved").get("message") and w)
    assert cond(pending, "QuotaReserved")["message"] == "ClusterQueue late-cq is inactive"
    lq = cp.store.get("localqueues.kueue.x-k8s.io", NS, "late-queue")
    assert cond(lq, "Active")["reason"] == "ClusterQueueIsInactive"
    cp.apply(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "AdmissionCheck",
            "metadata": {"name": "late-check"},
            "spec": {
                "controllerName": "kueue.x-k8s.io/provisioning-request",
                "parameters": {
                    "apiGroup": "kueue.x-k8s.io",
                    "kind": "ProvisioningRequestConfig",
                    "name": "late-config",
                },
            },
        }
    )
    inactive = wait_for(
        "check inactive", lambda: (c := cq_active()).get("reason") == "AdmissionCheckInactive" and c
    )
    assert (
        inactive["message"] == "Can't admit new workloads: references inactive AdmissionCheck(s): late-check."
    )
    assert cond(workload() or {}, "QuotaReserved")["status"] == "False"
    cp.apply(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ProvisioningRequestConfig",
            "metadata": {"name": "late-config"},
            "spec": {
                "provisioningClassName": "best-effort-atomic-scale-up.autoscaling.x-k8s.io",
                "managedResources": ["cpu"],
            },
        }
    )
    ready = wait_for("active", lambda: (c := cq_active()).get("status") == "True" and c)
    assert (ready["reason"], ready["message"]) == ("Ready", "Can admit new workloads")
    admitted = wait_for(
        "admitted", lambda: (w := workload()) and cond(w, "Admitted").get("status") == "True" and w
    )
    assert [c["name"] for c in admitted["status"]["admissionChecks"]] == ["late-check"]
