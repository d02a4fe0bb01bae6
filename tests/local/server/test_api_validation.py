"""CRD schema validation (422 Invalid naming the field) and the two Kueue versions of one stored object."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes.client.rest import ApiException

RAY = ("ray.io", "v1")
KUEUE = "kueue.x-k8s.io"


def test_schema_violation_is_422_naming_the_field(custom: Any, namespace: str, raycluster: Any) -> None:
    with pytest.raises(ApiException) as err:
        custom.create_namespaced_custom_object(
            *RAY, namespace, "rayclusters", raycluster("bad", replicas="two")
        )
    assert err.value.status == 422
    status = json.loads(err.value.body)
    assert status["reason"] == "Invalid"
    assert status["message"].startswith('RayCluster.ray.io "bad" is invalid: ')
    assert status["details"]["name"] == "bad" and status["details"]["kind"] == "RayCluster"
    fields = [c["field"] for c in status["details"]["causes"]]
    assert "spec.workerGroupSpecs[0].replicas" in fields
    # nothing was stored, and a valid object goes through afterwards
    assert custom.list_namespaced_custom_object(*RAY, namespace, "rayclusters")["items"] == []
    custom.create_namespaced_custom_object(*RAY, namespace, "rayclusters", raycluster("good"))


def test_schema_violation_on_update_and_patch(custom: Any, namespace: str, raycluster: Any) -> None:
    custom.create_namespaced_custom_object(*RAY, namespace, "rayclusters", raycluster("upd"))
    with pytest.raises(ApiException) as err:
        custom.patch_namespaced_custom_object(
            *RAY, namespace, "rayclusters", "upd", {"spec": {"suspend": "yes"}}
        )
    assert err.value.status == 422
    assert "spec.suspend" in json.loads(err.value.body)["message"]


def test_kueue_object_served_at_both_versions(custom: Any) -> None:
    cq = {
        "apiVersion": f"{KUEUE}/v1beta1",
        "kind": "ClusterQueue",
        "metadata": {"name": "conv-cq"},
        "spec": {"cohort": "research", "namespaceSelector": {}, "resourceGroups": []},
    }
    created = custom.create_cluster_custom_object(KUEUE, "v1beta1", "clusterqueues", cq)
    assert created["apiVersion"] == f"{KUEUE}/v1beta1" and created["spec"]["cohort"] == "research"
    v2 = custom.get_cluster_custom_object(KUEUE, "v1beta2", "clusterqueues", "conv-cq")
    assert v2["apiVersion"] == f"{KUEUE}/v1beta2"
    assert v2["spec"]["cohortName"] == "research" and "cohort" not in v2["spec"]
    v1 = custom.get_cluster_custom_object(KUEUE, "v1beta1", "clusterqueues", "conv-cq")
    assert v1["spec"]["cohort"] == "research" and "cohortName" not in v1["spec"]
    assert v1["metadata"]["uid"] == v2["metadata"]["uid"]
    # a merge patch against the v1beta1 view uses v1beta1 field names
    custom.patch_cluster_custom_object(
        KUEUE, "v1beta1", "clusterqueues", "conv-cq", {"spec": {"cohort": "other"}}
    )
    assert (
        custom.get_cluster_custom_object(KUEUE, "v1beta2", "clusterqueues", "conv-cq")["spec"]["cohortName"]
        == "other"
    )
    listed = custom.list_cluster_custom_object(KUEUE, "v1beta1", "clusterqueues")
    mine = [i for i in listed["items"] if i["metadata"]["name"] == "conv-cq"]
    assert mine[0]["spec"]["cohort"] == "other" and listed["apiVersion"] == f"{KUEUE}/v1beta1"
    custom.delete_cluster_custom_object(KUEUE, "v1beta2", "clusterqueues", "conv-cq")


def test_workload_priority_fields_converted(custom: Any, namespace: str) -> None:
    wl = {
        "apiVersion": f"{KUEUE}/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "wl"},
        "spec": {
            "queueName": "lq",
            "podSets": [
                {
                    "name": "head",
                    "count": 1,
                    "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
                }
            ],
            "priorityClassRef": {"group": KUEUE, "kind": "WorkloadPriorityClass", "name": "high"},
            "priority": 1000,  # a CEL rule of the CRD: priority must be set with priorityClassRef
        },
    }
    custom.create_namespaced_custom_object(KUEUE, "v1beta2", namespace, "workloads", wl)
    v1 = custom.get_namespaced_custom_object(KUEUE, "v1beta1", namespace, "workloads", "wl")
    assert v1["spec"]["priorityClassName"] == "high"
    assert v1["spec"]["priorityClassSource"] == "kueue.x-k8s.io/workloadpriorityclass"
    assert "priorityClassRef" not in v1["spec"]


def test_deprecated_version_sends_a_warning_header(raw: Any) -> None:
    status, _, resp = raw.request("GET", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues")
    assert status == 200
    assert (resp.getheader("Warning") or "").startswith("299 - ")


def test_watch_at_the_old_version_converts_events(custom: Any) -> None:
    from kubernetes import watch

    rv = custom.list_cluster_custom_object(KUEUE, "v1beta2", "clusterqueues")["metadata"]["resourceVersion"]
    cq = {
        "apiVersion": f"{KUEUE}/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "watched-cq"},
        "spec": {"cohortName": "team", "namespaceSelector": {}, "resourceGroups": []},
    }
    custom.create_cluster_custom_object(KUEUE, "v1beta2", "clusterqueues", cq)
    events = list(
        watch.Watch().stream(
            custom.list_cluster_custom_object,
            KUEUE,
            "v1beta1",
            "clusterqueues",
            resource_version=rv,
            timeout_seconds=1,
        )
    )
    mine = [e for e in events if e["object"]["metadata"]["name"] == "watched-cq"]
    assert [e["type"] for e in mine] == ["ADDED"]
    assert mine[0]["object"]["apiVersion"] == f"{KUEUE}/v1beta1"
    assert mine[0]["object"]["spec"]["cohort"] == "team" and "cohortName" not in mine[0]["object"]["spec"]
    custom.delete_cluster_custom_object(KUEUE, "v1beta2", "clusterqueues", "watched-cq")
