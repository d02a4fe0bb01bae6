"""The kube-state-metrics- and Kueue-style exporter: upstream's series names and labels, served over HTTP
by prometheus_client's exposition, from the store's pods, Workloads and ClusterQueues."""

from __future__ import annotations

import re
import urllib.request
from typing import Any

from rayqueue_local.runtime.kubestate import CLUSTERQUEUES, PODS, WORKLOADS, KubeStateExporter

SERIES = re.compile(r"^(\w+)\{(.*)\} (\S+)$")


def parse(text: str) -> list[tuple[str, dict[str, str], float]]:
    out = []
    for line in text.splitlines():
        m = SERIES.match(line)
        if m:
            out.append((m.group(1), dict(re.findall(r'(\w+)="([^"]*)"', m.group(2))), float(m.group(3))))
    return out


def pod(name: str, phase: str, gpus: str = "1") -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "team-a",
            "uid": f"uid-{name}",
            "ownerReferences": [{"kind": "RayCluster", "name": "ws", "controller": True}],
        },
        "spec": {
            "nodeName": "node-1",
            "containers": [
                {
                    "name": "ray-head",
                    "resources": {"requests": {"nvidia.com/gpu": gpus, "cpu": "500m", "memory": "1Gi"}},
                }
            ],
        },
        "status": {"phase": phase},
    }


OBJECTS: dict[str, list[dict[str, Any]]] = {
    PODS: [pod("ws-head-abcde", "Running", "2"), pod("ws-g-worker-fghij", "Succeeded")],
    WORKLOADS: [
        {
            "metadata": {"name": "raycluster-ws", "namespace": "team-a"},
            "status": {
                "admission": {"clusterQueue": "cq-a"},
                "conditions": [{"type": "Admitted", "status": "True"}],
            },
        }
    ],
    CLUSTERQUEUES: [
        {
            "metadata": {"name": "cq-a"},
            "spec": {
                "cohortName": "org",
                "resourceGroups": [
                    {
                        "flavors": [
                            {"name": "gpu", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 4}]}
                        ]
                    }
                ],
            },
            "status": {
                "pendingWorkloads": 3,
                "flavorsUsage": [{"name": "gpu", "resources": [{"name": "nvidia.com/gpu", "total": "2"}]}],
            },
        }
    ],
}


def test_series_have_upstream_names_labels_and_values() -> None:
    exp = KubeStateExporter(objects=lambda key: OBJECTS.get(key, []))
    exp.start()
    try:
        with urllib.request.urlopen(f"http://{exp.target}/metrics", timeout=5) as resp:
            series = parse(resp.read().decode())
    finally:
        exp.stop()
    requests = [(lab, v) for name, lab, v in series if name == "kube_pod_container_resource_requests"]
    gpu = [(lab, v) for lab, v in requests if lab["resource"] == "nvidia_com_gpu"]
    assert gpu == [
        (
            {
                "container": "ray-head",
                "namespace": "team-a",
                "node": "node-1",
                "pod": "ws-head-abcde",
                "resource": "nvidia_com_gpu",
                "uid": "uid-ws-head-abcde",
                "unit": "integer",
            },
            2.0,
        )
    ]  # the Succeeded pod's requests are not exported, as kube-state-metrics drops terminated ones
    units = {lab["resource"]: (lab["unit"], v) for lab, v in requests}
    assert units["cpu"] == ("core", 0.5) and units["memory"] == ("byte", 1024.0**3)
    owners = {
        lab["pod"]: (lab["owner_kind"], lab["owner_name"], lab["owner_is_controller"])
        for n, lab, _ in series
        if n == "kube_pod_owner"
    }
    assert owners == {
        "ws-head-abcde": ("RayCluster", "ws", "true"),
        "ws-g-worker-fghij": ("RayCluster", "ws", "true"),
    }
    phases = {(lab["pod"], lab["phase"]) for n, lab, v in series if n == "kube_pod_status_phase" and v == 1}
    assert phases == {("ws-head-abcde", "Running"), ("ws-g-worker-fghij", "Succeeded")}
    kueue = {(n, tuple(sorted(lab.items()))): v for n, lab, v in series if n.startswith("kueue_")}
    assert kueue[("kueue_admitted_active_workloads", (("cluster_queue", "cq-a"),))] == 1
    assert kueue[("kueue_pending_workloads", (("cluster_queue", "cq-a"), ("status", "active")))] == 3
    quota_labels = (
        ("cluster_queue", "cq-a"),
        ("cohort", "org"),
        ("flavor", "gpu"),
        ("resource", "nvidia.com/gpu"),
    )
    assert kueue[("kueue_cluster_queue_nominal_quota", quota_labels)] == 4
    assert kueue[("kueue_cluster_queue_resource_usage", quota_labels)] == 2


def test_a_failing_source_never_breaks_a_scrape() -> None:
    def broken(key: str) -> list[dict[str, Any]]:
        raise KeyError(key)

    text = KubeStateExporter(objects=broken).render()
    assert "# TYPE kube_pod_owner gauge" in text and "kube_pod_owner{" not in text
