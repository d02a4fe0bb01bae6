"""Hypothesis: whatever the interleaving of submissions, deletions and passes, with fair sharing, Admission
Fair Sharing and topology-aware scheduling on, admission never over-commits a flavor, a cohort or a topology
domain (node), and a rack-required pod set always lands in one rack.

The check is written from Kueue's documented semantics (quotas, borrowing limits, node allocatable), not with
the engine's code.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kueue_factory import Cluster, cluster_queue, container, local_queue, ray_cluster

from rayqueue_local.controllers.kueue import admissionfairsharing as admission_fs
from rayqueue_local.controllers.kueue import fairsharing as fs
from rayqueue_local.controllers.kueue import topology as tas
from rayqueue_local.controllers.kueue.amounts import to_amount
from rayqueue_local.controllers.kueue.workloads import pod_requests

LEVELS = [tas.BLOCK_LABEL, tas.RACK_LABEL, tas.HOSTNAME_LABEL]
TOPOLOGY = {"metadata": {"name": "default"}, "spec": {"levels": [{"nodeLabel": lv} for lv in LEVELS]}}
NODE_GPUS = 2


def nodes() -> list[dict[str, Any]]:
    out = []
    for rack in ("r1", "r2", "r3"):
        for i in (1, 2):
            name = f"{rack}-n{i}"
            labels = {tas.BLOCK_LABEL: "b1", tas.RACK_LABEL: rack, tas.HOSTNAME_LABEL: name}
            allocatable = {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": str(NODE_GPUS)}
            out.append({"metadata": {"name": name, "labels": labels}, "status": {"allocatable": allocatable}})
    return out


NODES = nodes()
RACK_OF = {n["metadata"]["name"]: n["metadata"]["labels"][tas.RACK_LABEL] for n in NODES}

queue_spec = st.fixed_dictionaries(
    {
        "gpus": st.integers(0, 6),
        "borrowing": st.one_of(st.none(), st.integers(0, 4)),
        "weight": st.sampled_from([0, 1, 2]),
        "reclaim": st.sampled_from(["Never", "Any", "LowerPriority"]),
        "afs": st.booleans(),
    }
)
operation = st.one_of(
    st.tuples(
        st.just("submit"),
        st.integers(0, 2),  # queue
        st.integers(0, 1),  # local queue
        st.integers(0, 3),  # GPU workers
        st.sampled_from([None, "required", "preferred"]),
        st.sampled_from([0, 100]),  # priority
    ),
    st.tuples(st.just("delete"), st.integers(0, 50)),
    st.tuples(st.just("step")),
)


def build(specs: list[dict[str, Any]]) -> Cluster:
    cqs = []
    for i, spec in enumerate(specs):
        gpu: dict[str, Any] = {"name": "nvidia.com/gpu", "nominalQuota": spec["gpus"]}
        if spec["borrowing"] is not None:
            gpu["borrowingLimit"] = spec["borrowing"]
        extra: dict[str, Any] = {
            "fairSharing": {"weight": spec["weight"]},
            "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": spec["reclaim"]},
        }
        if spec["afs"]:
            extra["admissionScope"] = {"admissionMode": admission_fs.USAGE_BASED}
        cqs.append(
            cluster_queue(
                f"cq{i}",
                [
                    (
                        ["cpu", "memory"],
                        [
                            {
                                "name": "plain",
                                "resources": [
                                    {"name": "cpu", "nominalQuota": 100},
                                    {"name": "memory", "nominalQuota": "1000Gi"},
                                ],
                            }
                        ],
                    ),
                    (["nvidia.com/gpu"], [{"name": "tas-gpu", "resources": [gpu]}]),
                ],
                cohort="pool",
                **extra,
            )
        )
    lqs = [local_queue(f"ns{i}", f"lq{j}", f"cq{i}") for i in range(len(specs)) for j in range(2)]
    cluster = Cluster(cqs=cqs, lqs=lqs, flavors=["plain", "tas-gpu"], priorities={"p0": 0, "p100": 100})
    cluster.flavors[1]["spec"] = {"nodeLabels": {tas.BLOCK_LABEL: "b1"}, "topologyName": "default"}
    cluster.pass_options = {
        "fair_sharing": fs.FairSharingSettings(enabled=True, admission=admission_fs.AdmissionFairSharing()),
        "topologies": [TOPOLOGY],
        "nodes": NODES,
    }
    return cluster


def job(name: str, queue: int, lq: int, workers: int, mode: str | None, priority: int) -> dict[str, Any]:
    rc = ray_cluster(
        name,
        f"ns{queue}",
        queue=f"lq{lq}",
        head=container(cpu=1),
        workers=[("gpu", workers, container(cpu=1, gpu=1))] if workers else [],
        priority_class=f"p{priority}",
    )
    if workers and mode:
        annotation = tas.REQUIRED_ANNOTATION if mode == "required" else tas.PREFERRED_ANNOTATION
        rc["spec"]["workerGroupSpecs"][0]["template"]["metadata"] = {
            "annotations": {annotation: tas.RACK_LABEL}
        }
    return rc


def check(cluster: Cluster) -> None:
    usage: dict[tuple[str, str], int] = {}  # (cq, flavor) -> GPUs
    per_node: dict[str, int] = {}
    for wl in cluster.workloads.values():
        admission = (wl.get("status") or {}).get("admission")
        if not admission:
            continue
        specs = {ps["name"]: ps for ps in wl["spec"]["podSets"]}
        for psa in admission["podSetAssignments"]:
            spec = specs[psa["name"]]
            gpus = pod_requests(spec["template"]["spec"]).get("nvidia.com/gpu", 0) * spec["count"]
            if not gpus:
                continue
            flavor = psa["flavors"]["nvidia.com/gpu"]
            usage[(admission["clusterQueue"], flavor)] = (
                usage.get((admission["clusterQueue"], flavor), 0) + gpus
            )
            placed = tas.placed_pods(psa.get("topologyAssignment"))
            assert sum(placed.values()) == spec["count"], "a TAS pod set without a place for every pod"
            for node, pods in placed.items():
                per_node[node] = per_node.get(node, 0) + pods  # one GPU per worker pod
            if (spec.get("topologyRequest") or {}).get("required"):
                assert len({RACK_OF[n] for n in placed}) == 1, "a rack-required pod set spans racks"
    total_nominal = 0
    for cq in cluster.cqs:
        gpu = cq["spec"]["resourceGroups"][1]["flavors"][0]["resources"][0]
        nominal = to_amount("nvidia.com/gpu", gpu["nominalQuota"])
        total_nominal += nominal
        used = usage.get((cq["metadata"]["name"], "tas-gpu"), 0)
        if "borrowingLimit" in gpu:
            assert used <= nominal + gpu["borrowingLimit"], (
                f"{cq['metadata']['name']} over its borrowing limit"
            )
    assert sum(usage.values()) <= total_nominal, "the cohort is over-committed"
    for node, pods in per_node.items():
        assert pods <= NODE_GPUS, f"node {node} over-committed: {pods} GPUs"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=st.lists(queue_spec, min_size=2, max_size=3), ops=st.lists(operation, min_size=1, max_size=30))
def test_admission_never_over_commits_a_flavor_cohort_or_topology_domain(
    specs: list[dict[str, Any]], ops: list[tuple[Any, ...]]
) -> None:
    cluster = build(specs)
    for n, op in enumerate(ops):
        if op[0] == "submit":
            _, queue, lq, workers, mode, priority = op
            cluster.submit(job(f"job{n}", queue % len(specs), lq, workers, mode, priority))
        elif op[0] == "delete" and cluster.workloads:
            names = sorted(cluster.workloads)
            del cluster.workloads[names[op[1] % len(names)]]
        else:
            cluster.step()
            check(cluster)
    cluster.step()
    check(cluster)
