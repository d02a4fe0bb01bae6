"""Pure helpers of the SDK layer: Kueue v1beta1 normalisation, Workload choice, ClusterStatus."""

from __future__ import annotations

from rayqueue_sdk import ClusterPhase
from rayqueue_sdk.cluster.status import status_from
from rayqueue_sdk.kube.lookups import pick_workload
from rayqueue_sdk.kube.normalize import normalize_kueue


def test_v1beta1_local_queue_and_workload_fields_are_renamed() -> None:
    lq = {
        "kind": "LocalQueue",
        "status": {"flavorUsage": [{"name": "a100", "resources": []}], "flavors": [{"name": "a100"}]},
    }
    out = normalize_kueue(lq, "v1beta1")
    assert out["status"]["flavorsUsage"] == [{"name": "a100", "resources": []}]
    assert "flavorUsage" not in out["status"] and "flavorUsage" in lq["status"]  # a copy
    wl = {
        "kind": "Workload",
        "spec": {
            "priorityClassName": "prod-priority",
            "priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass",
        },
    }
    ref = normalize_kueue(wl, "v1beta1")["spec"]["priorityClassRef"]
    assert ref == {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "prod-priority"}
    pc = {
        "kind": "Workload",
        "spec": {"priorityClassName": "high", "priorityClassSource": "scheduling.k8s.io/priorityclass"},
    }
    assert normalize_kueue(pc, "v1beta1")["spec"]["priorityClassRef"]["kind"] == "PriorityClass"
    assert normalize_kueue(lq, "v1beta2") is lq


def test_v1beta1_cluster_queue_and_workload_status_renames_by_plural_when_items_carry_no_kind() -> None:
    cq = {"spec": {"cohort": "ml", "admissionChecks": ["prov"]}}
    spec = normalize_kueue(cq, "v1beta1", "clusterqueues")["spec"]
    assert spec == {"cohortName": "ml", "admissionChecksStrategy": {"admissionChecks": [{"name": "prov"}]}}
    wl = {"spec": {"priorityClassName": "p"}, "status": {"accumulatedPastExexcutionTimeSeconds": 7}}
    out = normalize_kueue(wl, "v1beta1", "workloads")
    assert out["spec"] == {
        "priorityClassRef": {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "p"}
    }
    assert out["status"] == {"accumulatedPastExecutionTimeSeconds": 7}
    flavor = {"spec": {"nodeLabels": {}}}
    assert normalize_kueue(flavor, "v1beta1", "resourceflavors") is flavor  # nothing renamed there


def test_pick_workload_prefers_live_unfinished_newest() -> None:
    def w(name: str, created: str, *, deleting: bool = False, finished: bool = False) -> dict:
        meta = {"name": name, "creationTimestamp": created}
        if deleting:
            meta["deletionTimestamp"] = created
        conds = [{"type": "Finished", "status": "True"}] if finished else []
        return {"metadata": meta, "status": {"conditions": conds}}

    assert pick_workload([]) is None
    chosen = pick_workload(
        [
            w("old", "2026-01-01T00:00:01Z"),
            w("new", "2026-01-01T00:00:02Z", deleting=True),
            w("done", "2026-01-01T00:00:03Z", finished=True),
        ]
    )
    assert chosen is not None and chosen["metadata"]["name"] == "old"


def test_status_from_reads_priority_from_the_workload_and_ports_from_the_status() -> None:
    rc = {
        "metadata": {"name": "ws", "namespace": "ds", "labels": {"kueue.x-k8s.io/queue-name": "q"}},
        "spec": {"suspend": False},
        "status": {
            "head": {"serviceName": "ws-head"},
            "endpoints": {"dashboard": "8266", "client": "10002"},
            "conditions": [
                {"type": "HeadPodReady", "status": "True"},
                {"type": "RayClusterProvisioned", "status": "True"},
            ],
        },
    }
    wl = {
        "metadata": {"name": "raycluster-ws-abcde"},
        "spec": {"priorityClassRef": {"name": "rd-priority"}},
        "status": {
            "conditions": [{"type": "Admitted", "status": "True", "reason": "Admitted"}],
            "admission": {"clusterQueue": "cq"},
        },
    }
    st = status_from(rc, wl)
    assert (st.phase, st.ready, st.priority_class, st.workload) == (
        ClusterPhase.READY,
        True,
        "rd-priority",
        "raycluster-ws-abcde",
    )
    assert st.dashboard_url == "http://ws-head.ds.svc:8266" and st.cluster_uri == "ray://ws-head.ds.svc:10002"
    assert st.to_dict()["phase"] == "ready"
