"""Topology-aware scheduling in the pure engine: a rack-required cluster waits while no rack has room and
is admitted when one does; a preferred one spreads; Kueue's messages; the topologyAssignment it writes
validates against the Workload CRD."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kueue_factory import Cluster, cluster_queue, container, flavor_resources, local_queue, ray_cluster

from rayqueue_local.controllers.kueue import topology as tas
from rayqueue_local.controllers.kueue.workloads import build_workload

TOPOLOGY = {
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "Topology",
    "metadata": {"name": "default"},
    "spec": {
        "levels": [
            {"nodeLabel": tas.BLOCK_LABEL},
            {"nodeLabel": tas.RACK_LABEL},
            {"nodeLabel": tas.HOSTNAME_LABEL},
        ]
    },
}


def node(name: str, rack: str, gpus: int = 2) -> dict[str, Any]:
    labels = {tas.BLOCK_LABEL: "b1", tas.RACK_LABEL: rack, tas.HOSTNAME_LABEL: name, "gpu": "true"}
    allocatable = {"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": str(gpus), "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": allocatable, "capacity": allocatable},
    }


NODES = [node("n1", "r1"), node("n2", "r1"), node("n3", "r2"), node("n4", "r2")]  # 4 GPUs per rack


def tas_cluster() -> Cluster:
    flavor = flavor_resources("tas-gpu", cpu=1000, memory="4000Gi", gpu=16)
    cq = cluster_queue("cq", [(["cpu", "memory", "nvidia.com/gpu"], [flavor])])
    cluster = Cluster(cqs=[cq], lqs=[local_queue("ml", "lq", "cq")], flavors=["tas-gpu"])
    cluster.flavors[0]["spec"] = {"nodeLabels": {"gpu": "true"}, "topologyName": "default"}
    cluster.pass_options = {"topologies": [TOPOLOGY], "nodes": NODES}
    return cluster


def rack_job(name: str, workers: int, mode: str = "required", level: str = tas.RACK_LABEL) -> dict[str, Any]:
    job = ray_cluster(
        name, "ml", queue="lq", head=container(cpu=1), workers=[("gpu", workers, container(cpu=1, gpu=1))]
    )
    annotation = tas.REQUIRED_ANNOTATION if mode == "required" else tas.PREFERRED_ANNOTATION
    job["spec"]["workerGroupSpecs"][0]["template"]["metadata"] = {"annotations": {annotation: level}}
    return job


def test_the_workload_carries_the_topology_request() -> None:
    job = rack_job("c", 2)
    job["metadata"]["uid"] = "u1"
    wl = build_workload(job, {})
    assert wl["spec"]["podSets"][1]["topologyRequest"] == {"required": tas.RACK_LABEL}
    assert "topologyRequest" not in wl["spec"]["podSets"][0]


def test_a_rack_required_cluster_waits_while_no_rack_has_room_then_is_admitted() -> None:
    cluster = tas_cluster()
    first = cluster.submit(rack_job("first", 3))  # rack r1 or r2: 3 of its 4 GPUs
    cluster.step()
    assert first in cluster.admitted()
    waiting = cluster.submit(
        rack_job("big", 4)
    )  # 5 GPUs free in all, but 4 in one rack only in the empty rack
    cluster.step()
    assert waiting in cluster.admitted()  # the other rack is still empty
    third = cluster.submit(rack_job("third", 2))  # 1 GPU left per rack
    cluster.step()
    assert third not in cluster.admitted()
    assert cluster.message(third) == (
        'couldn\'t assign flavors to pod set gpu: topology "default" allows to fit only 1 out of 2 pod(s)'
    )
    cluster.release(first, "Finished", "done")
    del cluster.workloads[first]
    cluster.step()
    assert third in cluster.admitted()


def test_quota_alone_would_admit_it_but_topology_does_not() -> None:
    cluster = tas_cluster()
    cluster.step()
    too_big = cluster.submit(rack_job("too-big", 5))  # 8 GPUs in the block, 4 per rack
    cluster.step()
    assert too_big not in cluster.admitted()
    assert "allows to fit only 4 out of 5 pod(s)" in cluster.message(too_big)
    spread = cluster.submit(rack_job("spread", 5, mode="preferred"))
    cluster.step()
    assert spread in cluster.admitted()


def test_nothing_fits_message_and_unknown_level() -> None:
    cluster = tas_cluster()
    cluster.pass_options["nodes"] = [node("n1", "r1", gpus=0)]
    name = cluster.submit(rack_job("none", 1))
    cluster.step()
    assert cluster.message(name).endswith('topology "default" doesn\'t allow to fit any of 1 pod(s)')
    other = cluster.submit(rack_job("odd-level", 1, level="example.com/zone"))
    cluster.step()
    assert cluster.message(other).endswith('Flavor "tas-gpu" does not contain the requested level')


def test_a_topology_request_on_a_flavor_without_topology() -> None:
    cluster = tas_cluster()
    cluster.flavors[0]["spec"] = {}
    name = cluster.submit(rack_job("c", 1))
    cluster.step()
    assert cluster.message(name).endswith('Flavor "tas-gpu" does not support TopologyAwareScheduling')


def test_the_topology_assignment_validates_and_is_counted_in_the_next_pass(crd_dir: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    yaml = pytest.importorskip("yaml")
    text = (crd_dir / "kueue" / "kueue.x-k8s.io_workloads.yaml").read_text()
    crd = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    schema = next(v for v in crd["spec"]["versions"] if v["name"] == "v1beta2")["schema"]["openAPIV3Schema"]
    admission_schema = schema["properties"]["status"]["properties"]["admission"]
    cluster = tas_cluster()
    name = cluster.submit(rack_job("c", 3))
    cluster.step()
    wl = cluster.workloads[name]
    jsonschema.Draft7Validator(admission_schema).validate(wl["status"]["admission"])
    assignment = wl["status"]["admission"]["podSetAssignments"][1]["topologyAssignment"]
    assert assignment["levels"] == [tas.HOSTNAME_LABEL]
    assert sum(tas.placed_pods(assignment).values()) == 3
    # The next pass reads it back: a 4-GPU rack request now fits only in the other rack, once.
    names = [cluster.submit(rack_job(f"r{i}", 4)) for i in range(2)]
    cluster.step()
    assert [n in cluster.admitted() for n in names] == [True, False]
