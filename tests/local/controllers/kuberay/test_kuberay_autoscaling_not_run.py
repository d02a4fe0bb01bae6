"""KubeRay's in-tree autoscaler is not run by the local plane, and the plane says so (issue 24, part 5).

A RayCluster with ``spec.enableInTreeAutoscaling: true`` (as CodeFlare's ``enable_autoscaling=True``
renders it, outside Kueue) is run with its workers at the spec's replicas; the plane sets condition
``InTreeAutoscaling=False`` (reason ``NotRunByLocalControlPlane``), records one ``Warning`` Event, and
the SDK's status of the ready cluster carries that message, rather than a silent "ready".
Through the real kubernetes client and the SDK over HTTPS, without Ray processes (fast).
"""

from __future__ import annotations

import uuid

import pytest
from kuberay_helpers import raycluster, wait_for
from kubernetes import client

from rayqueue_sdk import get_cluster


@pytest.fixture
def apis(api_cp):
    api = api_cp.api_client()
    return client.CustomObjectsApi(api), client.CoreV1Api(api)


def test_autoscaling_cluster_runs_at_its_replicas_and_says_the_autoscaler_is_not_run(api_cp, apis):
    custom, core = apis
    ns = f"as-{uuid.uuid4().hex[:6]}"  # no LocalQueue: not managed by Kueue, as the peer's notebook asks
    api_cp.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    manifest = raycluster("autoscale-demo", queue=None, workers=1)
    manifest["spec"]["enableInTreeAutoscaling"] = True
    manifest["spec"]["workerGroupSpecs"][0]["maxReplicas"] = 2  # min 1, max 2, replicas 1
    custom.create_namespaced_custom_object("ray.io", "v1", ns, "rayclusters", manifest)

    rc = wait_for(
        lambda: custom.get_namespaced_custom_object("ray.io", "v1", ns, "rayclusters", "autoscale-demo"),
        lambda o: (o.get("status") or {}).get("state") == "ready",
    )
    status = rc["status"]
    assert status.get("state") == "ready", status
    assert (status["desiredWorkerReplicas"], status["minWorkerReplicas"], status["maxWorkerReplicas"]) == (
        1,
        1,
        2,
    )
    (cond,) = [c for c in status["conditions"] if c["type"] == "InTreeAutoscaling"]
    assert (cond["status"], cond["reason"]) == ("False", "NotRunByLocalControlPlane")
    assert "does not run KubeRay's autoscaler" in cond["message"] and "replicas" in cond["message"]
    workers = core.list_namespaced_pod(ns, label_selector="ray.io/node-type=worker").items
    assert len(workers) == 1

    warnings = [e for e in core.list_namespaced_event(ns).items if e.reason == "NotRunByLocalControlPlane"]
    assert [(e.type, e.involved_object.name, e.count, e.message) for e in warnings] == [
        ("Warning", "autoscale-demo", 1, cond["message"])
    ]

    seen = get_cluster("autoscale-demo", ns, client=api_cp.api_client()).status()
    assert seen.ready and seen.explanation.startswith("ready (1/1 workers ready); ")
    assert cond["message"] in seen.explanation


def test_without_autoscaling_there_is_no_such_condition(api_cp, apis):
    custom, _ = apis
    ns = f"as-{uuid.uuid4().hex[:6]}"
    api_cp.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    custom.create_namespaced_custom_object("ray.io", "v1", ns, "rayclusters", raycluster("fixed", queue=None))
    rc = wait_for(
        lambda: custom.get_namespaced_custom_object("ray.io", "v1", ns, "rayclusters", "fixed"),
        lambda o: (o.get("status") or {}).get("state") == "ready",
    )
    assert "InTreeAutoscaling" not in {c["type"] for c in rc["status"]["conditions"]}
    seen = get_cluster("fixed", ns, client=api_cp.api_client()).status()
    assert seen.explanation == "ready (1/1 workers ready)"
