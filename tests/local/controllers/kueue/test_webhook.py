"""Kueue's RayCluster/RayJob webhooks as store admission hooks (through the real Store)."""

from __future__ import annotations

from typing import Any

import pytest
from kueue_factory import container, local_queue, ray_cluster

from rayqueue_local.controllers.kueue import webhook
from rayqueue_local.storage.store import Store, StoreError

RC, RJ, LQ = "rayclusters.ray.io", "rayjobs.ray.io", "localqueues.kueue.x-k8s.io"


@pytest.fixture
def store() -> Store:
    s = Store()
    s.create("namespaces", {"metadata": {"name": "ns"}})
    webhook.install(s)
    return s


def ray_job(name: str, **spec: Any) -> dict[str, Any]:
    cluster = ray_cluster("x", "ns", queue=None, workers=[("w", 1, container(cpu=1))])["spec"]
    body = {"entrypoint": "python -c 1", "rayClusterSpec": cluster, "shutdownAfterJobFinishes": True, **spec}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": name, "namespace": "ns", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": body,
    }


def denied(store: Store, key: str, obj: dict[str, Any]) -> str:
    with pytest.raises(StoreError) as info:
        store.create(key, obj)
    assert info.value.code == 403 and info.value.reason == "Forbidden"
    return info.value.message


def test_objects_with_a_queue_label_are_suspended_on_create(store: Store) -> None:
    queued = store.create(RC, ray_cluster("a", "ns", queue="lq"))
    plain = store.create(RC, ray_cluster("b", "ns", queue=None))
    assert queued["spec"]["suspend"] is True
    assert "suspend" not in plain["spec"]


def test_a_default_local_queue_fills_the_label_and_suspends(store: Store) -> None:
    store.create(LQ, local_queue("ns", "default", "cq"))
    rc = store.create(RC, ray_cluster("a", "ns", queue=None))
    assert rc["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "default"
    assert rc["spec"]["suspend"] is True
    rc["metadata"]["labels"].pop("kueue.x-k8s.io/queue-name")
    with pytest.raises(StoreError, match="queue-name must not be empty in namespace with default queue"):
        store.update(RC, rc)


def test_in_tree_autoscaling_needs_the_elastic_annotation(store: Store) -> None:
    rc = ray_cluster("a", "ns", queue="lq", workers=[("w", 1, container(cpu=1))])
    rc["spec"]["enableInTreeAutoscaling"] = True
    assert denied(store, RC, rc) == (
        'admission webhook "vraycluster.kb.io" denied the request: spec.enableInTreeAutoscaling: '
        "Invalid value: true: a kueue-managed RayCluster can use autoscaling only as an elastic job: enable "
        'the ElasticJobsViaWorkloadSlices feature gate and set the "kueue.x-k8s.io/elastic-job": '
        '"true" annotation'
    )
    rc["metadata"]["annotations"] = {"kueue.x-k8s.io/elastic-job": "true"}
    stored = store.create(RC, rc)
    gates = stored["spec"]["workerGroupSpecs"][0]["template"]["spec"]["schedulingGates"]
    assert gates == [{"name": "kueue.x-k8s.io/elastic-job"}]


def test_too_many_worker_groups_and_a_head_group_name_are_rejected(store: Store) -> None:
    rc = ray_cluster("a", "ns", queue="lq", workers=[(f"g{i}", 1, container(cpu=1)) for i in range(18)])
    rc["spec"]["workerGroupSpecs"][0]["groupName"] = "head"
    assert denied(store, RC, rc) == (
        'admission webhook "vraycluster.kb.io" denied the request: [spec.workerGroupSpecs: Too many: 19: '
        "must have at most 18 items, spec.workerGroupSpecs[0].groupName: Forbidden: "
        '"head" is reserved for the head group]'
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"shutdownAfterJobFinishes": False},
            "spec.shutdownAfterJobFinishes: Invalid value: false: "
            "a kueue managed job should delete the cluster after finishing",
        ),
        (
            {"clusterSelector": {"ray.io/cluster": "c"}},
            'spec.clusterSelector: Invalid value: map[string]string{"ray.io/cluster":"c"}: '
            "a kueue managed job should not use an existing cluster",
        ),
        (
            {"rayClusterSpec": None},
            "spec.rayClusterSpec: Required value: rayClusterSpec is required for Kueue-managed jobs "
            "that don't use clusterSelector",
        ),
    ],
)
def test_rayjob_rules(store: Store, spec: dict[str, Any], message: str) -> None:
    job = ray_job("j", **spec)
    if spec.get("rayClusterSpec", 1) is None:
        del job["spec"]["rayClusterSpec"]
    assert denied(store, RJ, job) == f'admission webhook "vrayjob.kb.io" denied the request: {message}'


def test_a_valid_rayjob_is_suspended(store: Store) -> None:
    assert store.create(RJ, ray_job("j"))["spec"]["suspend"] is True


def test_priority_class_only_while_suspended_and_never_removed(store: Store) -> None:
    rc = store.create(RC, ray_cluster("a", "ns", queue="lq"))
    rc["spec"]["suspend"] = False
    rc = store.update(RC, rc)
    rc["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "high"
    with pytest.raises(StoreError, match="WorkloadPriorityClass cannot be added to a non-suspended workload"):
        store.update(RC, rc)
    rc["spec"]["suspend"] = True
    rc = store.update(RC, rc)
    rc["metadata"]["labels"].pop("kueue.x-k8s.io/priority-class")
    with pytest.raises(StoreError, match="WorkloadPriorityClass cannot be removed from a workload"):
        store.update(RC, rc)


def test_queue_name_is_immutable_while_running(store: Store) -> None:
    rc = store.create(RC, ray_cluster("a", "ns", queue="lq"))
    rc["spec"]["suspend"] = False
    rc = store.update(RC, rc)
    rc["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "other"
    with pytest.raises(
        StoreError,
        match=r"metadata.labels\[kueue.x-k8s.io/queue-name\]: Invalid value: \"other\": field is immutable",
    ):
        store.update(RC, rc)


def test_a_cluster_owned_by_a_queued_rayjob_is_left_alone(store: Store) -> None:
    job = store.create(RJ, ray_job("j"))
    rc = ray_cluster("j-abcde", "ns", queue="lq")
    rc["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayJob",
            "name": "j",
            "uid": job["metadata"]["uid"],
            "controller": True,
        }
    ]
    assert "suspend" not in store.create(RC, rc)["spec"]
