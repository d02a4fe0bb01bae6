"""Kueue's elastic Workload slices for a RayCluster resized by hand, without Ray processes (issue 36).

The same Kueue behaviour the autoscaler drives (test_kuberay_autoscaling_slices.py), fast: an admitted
elastic RayCluster whose worker replicas grow gets a new slice that queues for the added quota while the
cluster keeps running (its new worker Pod gated); freeing quota admits it and finishes the old slice;
shrinking writes the smaller count into the admitted Workload and returns the quota at once.
"""

from __future__ import annotations

import uuid
from typing import Any

from kuberay_helpers import queues, raycluster, wait_for

WORKLOADS = "workloads.kueue.x-k8s.io"
REPLACES = "kueue.x-k8s.io/workload-slice-replacement-for"


def _condition(obj: dict[str, Any], ctype: str) -> dict[str, Any]:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == ctype), {})


def _cq_cpu(cp: Any, cq: str) -> str:
    obj = cp.store.get("clusterqueues.kueue.x-k8s.io", None, cq)
    for flavor in (obj.get("status") or {}).get("flavorsUsage") or []:
        for res in flavor.get("resources") or []:
            if res["name"] == "cpu":
                return str(res.get("total"))
    return ""


def _set_replicas(cp: Any, ns: str, count: int) -> None:
    rc = cp.store.get("rayclusters.ray.io", ns, "grow")
    rc["spec"]["workerGroupSpecs"][0]["replicas"] = count
    cp.store.update("rayclusters.ray.io", rc)


def test_a_resized_elastic_cluster_grows_by_a_queued_slice_and_shrinks_in_place(api_cp) -> None:
    cp = api_cp
    ns = f"els-{uuid.uuid4().hex[:6]}"
    cq = f"cq-{ns}"
    queues(cp, ns, cpu=3)
    rc = raycluster("grow", workers=1)
    rc["metadata"]["namespace"] = ns
    rc["metadata"]["annotations"] = {"kueue.x-k8s.io/elastic-job": "true"}
    rc["spec"]["workerGroupSpecs"][0].update({"minReplicas": 0, "maxReplicas": 3})
    cp.apply(rc)
    ready = wait_for(
        lambda: cp.store.get("rayclusters.ray.io", ns, "grow"),
        lambda o: (o.get("status") or {}).get("state") == "ready",
    )
    assert ready["status"]["state"] == "ready"
    assert _cq_cpu(cp, cq) == "2"  # head + one worker
    (first,) = cp.store.list(WORKLOADS, ns)

    _set_replicas(cp, ns, 3)  # two more CPUs, one is free: the slice waits
    slices = wait_for(
        lambda: [
            w for w in cp.store.list(WORKLOADS, ns) if REPLACES in (w["metadata"].get("annotations") or {})
        ],
        lambda ws: ws and _condition(ws[0], "QuotaReserved").get("reason") == "Pending",
    )
    (waiting,) = slices
    assert waiting["metadata"]["annotations"][REPLACES] == f"{ns}/{first['metadata']['name']}"
    assert [p["count"] for p in waiting["spec"]["podSets"]] == [1, 3]  # the whole new size...
    message = _condition(waiting, "QuotaReserved")["message"]
    assert (
        "insufficient unused quota for cpu in flavor default-flavor, 1 more needed" in message
    )  # ...its delta
    assert (
        _cq_cpu(cp, cq) == "2"
        and cp.store.get("rayclusters.ray.io", ns, "grow")["spec"].get("suspend") is False
    )
    assert (
        _condition(cp.store.get(WORKLOADS, ns, first["metadata"]["name"]), "Admitted").get("status") == "True"
    )

    _set_replicas(cp, ns, 2)  # now it fits: a new slice for 2 workers is admitted, the old one finished
    admitted = wait_for(
        lambda: [
            w
            for w in cp.store.list(WORKLOADS, ns)
            if REPLACES in (w["metadata"].get("annotations") or {})
            and _condition(w, "Admitted").get("status") == "True"
        ],
        lambda ws: bool(ws),
    )
    (grown,) = admitted
    assert [p["count"] for p in grown["status"]["admission"]["podSetAssignments"]] == [1, 2]
    old = cp.store.get(WORKLOADS, ns, first["metadata"]["name"])
    assert (_condition(old, "Finished").get("status"), _condition(old, "Finished").get("reason")) == (
        "True",
        "WorkloadSliceReplaced",
    )
    wait_for(lambda: _cq_cpu(cp, cq), lambda v: v == "3")
    assert _cq_cpu(cp, cq) == "3"
    pods = wait_for(
        lambda: cp.store.list("pods", ns, label_selector="ray.io/node-type=worker"),
        lambda ps: len(ps) == 2 and not any((p.get("spec") or {}).get("schedulingGates") for p in ps),
    )
    assert len(pods) == 2 and not any((p.get("spec") or {}).get("schedulingGates") for p in pods)

    _set_replicas(cp, ns, 0)  # scale down: the admitted slice shrinks, the quota comes back at once
    wait_for(lambda: _cq_cpu(cp, cq), lambda v: v == "1")
    assert _cq_cpu(cp, cq) == "1"
    current = cp.store.get(WORKLOADS, ns, grown["metadata"]["name"])
    assert _condition(current, "Admitted").get("status") == "True"
    assert [p["count"] for p in current["spec"]["podSets"]] == [1, 0]
    assert cp.store.get("rayclusters.ray.io", ns, "grow")["spec"].get("suspend") is False
