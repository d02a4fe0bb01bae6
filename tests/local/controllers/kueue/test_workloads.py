"""Pure Workload builders: names, pod sets, requests, metadata, flavor injection (Kueue v0.19.2)."""

from __future__ import annotations

import copy

import pytest
from kueue_factory import container, ray_cluster

from rayqueue_local.controllers.kueue.amounts import format_amount, to_amount
from rayqueue_local.controllers.kueue.workloads import (
    JOB_UID_LABEL,
    RESOURCE_IN_USE_FINALIZER,
    apply_admission,
    build_workload,
    job_pod_sets,
    pod_requests,
    pod_set_updates,
    pod_sets_match,
    restore_pod_templates,
    workload_name,
)

UID = "11111111-2222-3333-4444-555555555555"


@pytest.mark.parametrize(
    ("kind", "group", "name", "uid", "expected"),
    [
        ("Job", "batch", "name", "uid", "job-name-ef3a1"),  # upstream test vector (workload_names_test.go)
        ("RayCluster", "ray.io", "demo", UID, "raycluster-demo-4e803"),
        (
            "RayJob",
            "ray.io",
            "demo",
            UID,
            "rayjob-demo-" + workload_name("RayJob", "ray.io", "demo", UID)[-5:],
        ),
    ],
)
def test_workload_names_follow_kueue(kind: str, group: str, name: str, uid: str, expected: str) -> None:
    assert workload_name(kind, group, name, uid) == expected


def test_long_owner_names_are_cut_to_247_before_the_hash() -> None:
    name = workload_name("RayCluster", "ray.io", "x" * 300, UID)
    assert len(name) == 253 and name[:247] == ("raycluster-" + "x" * 300)[:247] and name[247] == "-"


def test_the_hash_depends_on_kind_and_uid() -> None:
    assert workload_name("RayCluster", "ray.io", "a", "1") != workload_name("RayJob", "ray.io", "a", "1")
    assert workload_name("RayCluster", "ray.io", "a", "1") != workload_name("RayCluster", "ray.io", "a", "2")


@pytest.mark.parametrize(
    ("resource", "text", "amount", "shown"),
    [
        ("cpu", "2", 2000, "2"),
        ("cpu", "500m", 500, "500m"),
        ("cpu", "0.25", 250, "250m"),
        ("cpu", "12k", 12_000_000, "12k"),
        ("memory", "8Gi", 8 * 2**30, "8Gi"),
        ("memory", "3G", 3 * 10**9, "3G"),
        ("memory", "1.5", 2, "2"),
        ("nvidia.com/gpu", "2", 2, "2"),
        ("pods", "1e3", 1000, "1k"),
    ],
)
def test_amounts_use_kueue_units_and_format(resource: str, text: str, amount: int, shown: str) -> None:
    assert to_amount(resource, text) == amount
    assert format_amount(resource, amount) == shown


def test_bad_quantities_are_rejected() -> None:
    with pytest.raises(ValueError, match="quantities must match"):
        to_amount("cpu", "two")


def test_pod_requests_fall_back_to_limits_and_take_init_containers_into_account() -> None:
    spec = {
        "containers": [
            {"resources": {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1"}}},
            {"resources": {"requests": {"cpu": "500m", "nvidia.com/gpu": "1"}}},
        ],
        "initContainers": [{"resources": {"requests": {"cpu": "4"}}}],
        "overhead": {"memory": "1Gi"},
    }
    assert pod_requests(spec) == {"cpu": 4000, "memory": 2 * 2**30, "nvidia.com/gpu": 1}


def test_raycluster_pod_sets_head_first_then_lowercased_groups_with_hosts() -> None:
    rc = ray_cluster(
        "c", "ns", queue="q", workers=[("GPU-Group", 3, container(cpu=1, gpu=1)), ("small", 0, container())]
    )
    rc["spec"]["workerGroupSpecs"][0]["numOfHosts"] = 2
    rc["spec"]["workerGroupSpecs"].append(
        {"groupName": "defaulted", "template": {"spec": {"containers": []}}}
    )
    pod_sets = job_pod_sets(rc)
    assert [(p["name"], p["count"]) for p in pod_sets] == [
        ("head", 1),
        ("gpu-group", 6),
        ("small", 0),
        ("defaulted", 1),
    ]


def test_in_tree_autoscaling_adds_the_autoscaler_to_the_head_pod_set() -> None:
    rc = ray_cluster("c", "ns", queue="q", head=container(cpu=1))
    rc["spec"]["enableInTreeAutoscaling"] = True
    head = job_pod_sets(rc)[0]
    assert pod_requests(head["template"]["spec"]) == {"cpu": 1500, "memory": 512 * 2**20}


def test_rayjob_pod_sets_add_the_submitter_in_k8s_job_mode_only() -> None:
    rc = ray_cluster("c", "ns", queue="q", head=container(cpu=1), workers=[("w", 2, container(cpu=1))])
    job = {
        "kind": "RayJob",
        "metadata": {"name": "j"},
        "spec": {"rayClusterSpec": rc["spec"], "entrypoint": "python x.py"},
    }
    pod_sets = job_pod_sets(job)
    assert [p["name"] for p in pod_sets] == ["head", "w", "submitter"]
    assert pod_requests(pod_sets[-1]["template"]["spec"]) == {"cpu": 500, "memory": 200 * 2**20}
    assert pod_sets[-1]["template"]["spec"]["containers"][0]["image"] == "rayproject/ray:2.40.0"
    job["spec"]["submissionMode"] = "HTTPMode"
    assert [p["name"] for p in job_pod_sets(job)] == ["head", "w"]
    job["spec"]["submissionMode"] = "SidecarMode"
    assert pod_requests(job_pod_sets(job)[0]["template"]["spec"])["cpu"] == 1500


def test_build_workload_carries_owner_label_finalizer_queue_and_priority() -> None:
    rc = ray_cluster("demo", "team", queue="lq", priority_class="prod", workers=[("w", 1, container(cpu=1))])
    rc["metadata"]["uid"] = UID
    wl = build_workload(rc, {"prod": 1000})
    meta, spec = wl["metadata"], wl["spec"]
    assert meta["name"] == "raycluster-demo-4e803" and meta["namespace"] == "team"
    assert meta["labels"] == {JOB_UID_LABEL: UID}
    assert meta["finalizers"] == [RESOURCE_IN_USE_FINALIZER]
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayCluster",
            "name": "demo",
            "uid": UID,
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert spec["queueName"] == "lq" and spec["active"] is True and spec["priority"] == 1000
    assert spec["priorityClassRef"] == {
        "group": "kueue.x-k8s.io",
        "kind": "WorkloadPriorityClass",
        "name": "prod",
    }
    with pytest.raises(KeyError):
        build_workload(rc, {})
    del rc["metadata"]["labels"]["kueue.x-k8s.io/priority-class"]
    assert (
        build_workload(rc, {})["spec"]["priority"] == 0
        and "priorityClassRef" not in build_workload(rc, {})["spec"]
    )


def test_pod_sets_match_detects_a_changed_worker_count() -> None:
    rc = ray_cluster("demo", "team", queue="lq", workers=[("w", 1, container(cpu=1))])
    rc["metadata"]["uid"] = UID
    wl = build_workload(rc, {})
    assert pod_sets_match(wl, rc)
    rc["spec"]["workerGroupSpecs"][0]["replicas"] = 2
    assert not pod_sets_match(wl, rc)


def test_admission_merges_flavor_node_labels_and_tolerations_and_restore_undoes_it() -> None:
    rc = ray_cluster("demo", "team", queue="lq", workers=[("w", 1, container(cpu=1, gpu=1))])
    rc["metadata"]["uid"] = UID
    rc["spec"]["suspend"] = True
    wl = build_workload(rc, {})
    original = copy.deepcopy(rc)
    flavors = {
        "gpu-flavor": {
            "spec": {
                "nodeLabels": {"nvidia.com/gpu.present": "true"},
                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            }
        },
        "default-flavor": {"spec": {}},
    }
    admission = {
        "clusterQueue": "cq",
        "podSetAssignments": [
            {"name": "head", "flavors": {"cpu": "default-flavor"}, "count": 1},
            {"name": "w", "flavors": {"cpu": "default-flavor", "nvidia.com/gpu": "gpu-flavor"}, "count": 1},
        ],
    }
    apply_admission(rc, admission, flavors)
    worker = rc["spec"]["workerGroupSpecs"][0]["template"]["spec"]
    assert rc["spec"]["suspend"] is False
    assert worker["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    assert worker["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert "nodeSelector" not in rc["spec"]["headGroupSpec"]["template"]["spec"]
    restore_pod_templates(rc, wl)
    assert rc == original


def test_admission_check_pod_set_updates_are_applied_on_start_and_restored_on_suspend() -> None:
    """Kueue's startJob merges each Ready check's ``podSetUpdates`` into the pod templates
    (``getPodSetsInfoFromStatus``, jobframework/reconciler.go); RestorePodSetsInfo puts them back."""
    rc = ray_cluster("demo", "ns", queue="q", workers=[("w", 1, container(cpu=1))])
    rc["metadata"]["uid"] = UID
    rc["spec"]["suspend"] = True
    rc["spec"]["headGroupSpec"]["template"]["metadata"] = {"annotations": {"mine": "kept"}}
    wl = build_workload(rc, {})
    original = copy.deepcopy(rc)
    admission = {
        "clusterQueue": "cq",
        "podSetAssignments": [
            {"name": "head", "flavors": {"cpu": "default-flavor"}, "count": 1},
            {"name": "w", "flavors": {"cpu": "default-flavor"}, "count": 1},
        ],
    }
    prov = {
        "autoscaling.x-k8s.io/consume-provisioning-request": "wl-prov-1",
        "autoscaling.x-k8s.io/provisioning-class-name": "best-effort-atomic-scale-up.autoscaling.x-k8s.io",
    }
    checks = [
        {
            "name": "prov",
            "state": "Ready",
            "podSetUpdates": [
                {"name": "head", "annotations": prov},
                {
                    "name": "w",
                    "annotations": prov,
                    "labels": {"l": "v"},
                    "nodeSelector": {"pool": "new"},
                    "tolerations": [{"key": "k", "operator": "Exists"}],
                },
            ],
        },
        {"name": "other", "state": "Ready"},
    ]
    apply_admission(rc, admission, {"default-flavor": {"spec": {}}}, checks)
    head = rc["spec"]["headGroupSpec"]["template"]
    worker = rc["spec"]["workerGroupSpecs"][0]["template"]
    assert head["metadata"]["annotations"] == {"mine": "kept", **prov}
    assert worker["metadata"] == {"annotations": prov, "labels": {"l": "v"}}
    assert worker["spec"]["nodeSelector"] == {"pool": "new"}
    assert worker["spec"]["tolerations"] == [{"key": "k", "operator": "Exists"}]
    restore_pod_templates(rc, wl)
    assert rc == original
    assert pod_set_updates(checks, "w")[0]["nodeSelector"] == {"pool": "new"}
    assert pod_set_updates(checks, "missing") == []


def test_a_rayjobs_head_worker_and_submitter_templates_get_their_pod_set_updates() -> None:
    rc = ray_cluster("c", "ns", queue="q", head=container(cpu=1), workers=[("w", 1, container(cpu=1))])
    job = {
        "kind": "RayJob",
        "metadata": {
            "name": "j",
            "namespace": "ns",
            "uid": UID,
            "labels": {"kueue.x-k8s.io/queue-name": "q"},
        },
        "spec": {"rayClusterSpec": rc["spec"], "entrypoint": "python x.py", "suspend": True},
    }
    wl = build_workload(job, {})
    admission = {"podSetAssignments": [{"name": n, "flavors": {}} for n in ("head", "w", "submitter")]}
    updates = [{"name": n, "annotations": {"a": n}} for n in ("submitter", "head", "w")]
    apply_admission(job, admission, {}, [{"name": "prov", "state": "Ready", "podSetUpdates": updates}])
    cluster = job["spec"]["rayClusterSpec"]
    templates = [
        cluster["headGroupSpec"]["template"],
        cluster["workerGroupSpecs"][0]["template"],
        job["spec"]["submitterPodTemplate"],
    ]
    assert [t["metadata"]["annotations"] for t in templates] == [
        {"a": "head"},
        {"a": "w"},
        {"a": "submitter"},
    ]
    restore_pod_templates(job, wl)
    assert ["metadata" in t for t in templates] == [False, False, False]
