"""``ClusterConfiguration(topology=...)``: Kueue's pod-set topology annotations on the worker pod templates,
per worker group, checked before any I/O; and the admin builders for Topology and the fair-sharing fields."""

from __future__ import annotations

from pathlib import Path

import pytest
from crd_schema import validate

from rayqueue_sdk import ClusterConfiguration, ConfigError, ManagedClusterConfig, WorkerGroup
from rayqueue_sdk.manifests import kueue as k
from rayqueue_sdk.manifests.raycluster import build_cluster_spec, build_raycluster

RACK = "cloud.provider.com/topology-rack"


def annotations(spec: dict, index: int = 0) -> dict:
    return spec["workerGroupSpecs"][index]["template"].get("metadata", {}).get("annotations", {})


def test_topology_rack_writes_the_required_annotation_on_the_workers(crd_dir: Path) -> None:
    manifest = build_raycluster(ClusterConfiguration(name="c", num_workers=2, topology="rack"))
    assert annotations(manifest["spec"]) == {k.REQUIRED_TOPOLOGY_ANNOTATION: RACK}
    assert "annotations" not in manifest["spec"]["headGroupSpec"]["template"].get("metadata", {})
    validate(manifest, crd_dir)


def test_preferred_mode_and_a_label_key() -> None:
    cfg = ClusterConfiguration(name="c", topology="example.com/zone", topology_mode="preferred")
    assert annotations(build_raycluster(cfg)["spec"]) == {k.PREFERRED_TOPOLOGY_ANNOTATION: "example.com/zone"}


def test_each_worker_group_may_choose_its_own() -> None:
    cfg = ClusterConfiguration(
        name="c",
        topology="block",
        worker_groups=[
            WorkerGroup(name="cpu"),
            WorkerGroup(name="gpu", topology="hostname", topology_mode="preferred"),
            WorkerGroup(name="io", topology_mode="preferred"),
        ],
    )
    spec = build_raycluster(cfg)["spec"]
    assert annotations(spec, 0) == {k.REQUIRED_TOPOLOGY_ANNOTATION: k.TOPOLOGY_LEVELS["block"]}
    assert annotations(spec, 1) == {k.PREFERRED_TOPOLOGY_ANNOTATION: "kubernetes.io/hostname"}
    assert annotations(spec, 2) == {k.PREFERRED_TOPOLOGY_ANNOTATION: k.TOPOLOGY_LEVELS["block"]}


def test_no_topology_no_annotation() -> None:
    assert annotations(build_raycluster(ClusterConfiguration(name="c"))["spec"]) == {}


def test_managed_cluster_config_takes_it_too() -> None:
    spec = build_cluster_spec(ManagedClusterConfig(num_workers=1, topology="rack"))
    assert annotations(spec) == {k.REQUIRED_TOPOLOGY_ANNOTATION: RACK}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"topology": "zone"}, "topology"),
        ({"topology": "Rack"}, "topology"),
        ({"topology": "bad key/x y"}, "topology"),
        ({"topology": 3}, "topology"),
        ({"topology": "rack", "topology_mode": "strict"}, "topology_mode"),
    ],
)
def test_bad_values_are_rejected_naming_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ConfigError) as info:
        ClusterConfiguration(name="c", **kwargs)
    assert info.value.field == field


def test_a_worker_groups_bad_topology_is_rejected() -> None:
    with pytest.raises(ConfigError, match="not a topology level"):
        WorkerGroup(name="g", topology="rack-1")


def test_admin_builders_validate(crd_dir: Path) -> None:
    objects = [
        k.topology("default", [k.TOPOLOGY_LEVELS["block"], RACK, "kubernetes.io/hostname"]),
        k.resource_flavor("tas", node_labels={"gpu": "true"}, topology_name="default"),
        k.cohort("org", fair_sharing_weight="500m"),
        k.cluster_queue(
            "cq",
            cohort="org",
            resource_groups=[k.resource_group(k.flavor_quotas("tas", {"nvidia.com/gpu": 8}))],
            fair_sharing_weight=2,
            admission_mode="UsageBasedAdmissionFairSharing",
        ),
        k.local_queue("lq", "ns", "cq", fair_sharing_weight="3"),
    ]
    for obj in objects:
        validate(obj, crd_dir)


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: k.topology("t", ["kubernetes.io/hostname", RACK]), "levels[0]"),
        (lambda: k.topology("t", [RACK, RACK]), "levels"),
        (lambda: k.topology("t", []), "levels"),
        (lambda: k.resource_flavor("f", topology_name="default"), "node_labels"),
        (lambda: k.local_queue("lq", "ns", "cq", fair_sharing_weight=-1), "fair_sharing_weight"),
        (
            lambda: k.cluster_queue(
                "cq",
                resource_groups=[k.resource_group(k.flavor_quotas("f", {"cpu": 1}))],
                admission_mode="Usage",
            ),
            "admission_mode",
        ),
    ],
)
def test_admin_builders_reject_what_kueue_rejects(build: object, field: str) -> None:
    with pytest.raises(ConfigError) as info:
        build()  # type: ignore[operator]
    assert info.value.field == field
