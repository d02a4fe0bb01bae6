"""ClusterQueue/LocalQueue status fields and the Active condition, as Kueue reports them."""

from __future__ import annotations

from kueue_factory import cluster_queue, flavor_resources

from rayqueue_local.controllers.kueue.queue_status import (
    admission_check_problems,
    cluster_queue_active,
    cluster_queue_status,
    local_queue_status,
)

CQ = cluster_queue(
    "cq",
    [
        (
            ["cpu", "nvidia.com/gpu"],
            [flavor_resources("a100", cpu=8, gpu=2), flavor_resources("t4", cpu=8, gpu=4)],
        )
    ],
)


def test_usage_lists_every_flavor_and_resource_with_borrowed_beyond_nominal() -> None:
    status = cluster_queue_status(
        CQ,
        usage={("a100", "nvidia.com/gpu"): 3, ("t4", "cpu"): 500},
        pending=4,
        reserving=2,
        missing_flavors=[],
    )
    assert status["flavorsUsage"] == [
        {
            "name": "a100",
            "resources": [
                {"name": "cpu", "total": "0", "borrowed": "0"},
                {"name": "nvidia.com/gpu", "total": "3", "borrowed": "1"},
            ],
        },
        {
            "name": "t4",
            "resources": [
                {"name": "cpu", "total": "500m", "borrowed": "0"},
                {"name": "nvidia.com/gpu", "total": "0", "borrowed": "0"},
            ],
        },
    ]
    assert status["flavorsReservation"] == status["flavorsUsage"]
    assert (status["pendingWorkloads"], status["reservingWorkloads"], status["admittedWorkloads"]) == (
        4,
        2,
        2,
    )


def test_local_queue_totals_have_no_borrowed_column() -> None:
    status = local_queue_status(CQ, usage={("a100", "cpu"): 2000}, pending=1, reserving=1)
    assert status["flavorsUsage"][0]["resources"][0] == {"name": "cpu", "total": "2"}


def test_active_condition_reasons() -> None:
    assert cluster_queue_active(CQ, []) == (True, "Ready", "Can admit new workloads")
    assert cluster_queue_active(CQ, ["a100", "t4"]) == (
        False,
        "FlavorNotFound",
        "Can't admit new workloads: references missing ResourceFlavor(s): a100,t4.",
    )
    stopped = {**CQ, "spec": {**CQ["spec"], "stopPolicy": "Hold"}}
    assert cluster_queue_active(stopped, ["t4"]) == (
        False,
        "Stopped",
        "Can't admit new workloads: is stopped, references missing ResourceFlavor(s): t4.",
    )


def test_missing_or_inactive_admission_checks_make_the_cluster_queue_inactive() -> None:
    """Upstream's ``updateWithAdmissionChecks`` / ``inactiveReason`` (pkg/cache/scheduler/clusterqueue.go):
    every named check counts, whatever its ``onFlavors``; reasons in upstream's order."""
    cq = {
        **CQ,
        "spec": {
            **CQ["spec"],
            "admissionChecksStrategy": {"admissionChecks": [{"name": "prov", "onFlavors": ["t4"]}]},
            "admissionChecks": ["old"],
        },
    }
    active = {"status": {"conditions": [{"type": "Active", "status": "True"}]}}
    inactive = {"status": {"conditions": [{"type": "Active", "status": "False"}]}}
    assert admission_check_problems(cq, {}) == (["old", "prov"], [])
    assert admission_check_problems(cq, {"prov": inactive, "old": {}}) == ([], ["old", "prov"])
    assert admission_check_problems(cq, {"prov": active, "old": active}) == ([], [])
    assert admission_check_problems(CQ, {}) == ([], [])
    assert cluster_queue_active(cq, [], ["old"], ["prov"]) == (
        False,
        "AdmissionCheckNotFound",
        "Can't admit new workloads: references missing AdmissionCheck(s): old, "
        "references inactive AdmissionCheck(s): prov.",
    )
    assert cluster_queue_active(cq, ["t4"], [], ["prov"])[1] == "FlavorNotFound"
