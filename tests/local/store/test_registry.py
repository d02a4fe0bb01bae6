"""Resource types, CRD loading, Kueue version conversion and discovery."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rayqueue_local.registry.registry import Registry, load_crd_dir

CQ, LQ, WL = "clusterqueues.kueue.x-k8s.io", "localqueues.kueue.x-k8s.io", "workloads.kueue.x-k8s.io"


@pytest.fixture(scope="module")
def reg() -> Registry:
    return Registry()


def test_builtin_keys(reg: Registry) -> None:
    keys = {t.key for t in reg.types()}
    expected = {
        "namespaces",
        "secrets",
        "configmaps",
        "services",
        "pods",
        "serviceaccounts",
        "events",
        "roles.rbac.authorization.k8s.io",
        "rolebindings.rbac.authorization.k8s.io",
        "ingresses.networking.k8s.io",
        "rayclusters.ray.io",
        "rayjobs.ray.io",
        WL,
        CQ,
        LQ,
        "resourceflavors.kueue.x-k8s.io",
        "workloadpriorityclasses.kueue.x-k8s.io",
        "cohorts.kueue.x-k8s.io",
        "admissionchecks.kueue.x-k8s.io",
        "scaledobjects.keda.sh",
        "triggerauthentications.keda.sh",
        "clustertriggerauthentications.keda.sh",
    }
    assert expected <= keys
    assert reg.get(WL).versions == ("v1beta2", "v1beta1") and reg.get(WL).storage_version == "v1beta2"
    assert not reg.get(CQ).namespaced and reg.get(LQ).namespaced


@pytest.mark.slow
def test_crd_types_override_builtins(crd_dir: Path) -> None:
    loaded = {t.key: t for t in load_crd_dir(crd_dir)}
    # One type per CustomResourceDefinition document in the directory, however many upstream ships.
    documents = [
        doc
        for path in sorted(crd_dir.rglob("*.y*ml"))
        for doc in yaml.safe_load_all(path.read_text())
        if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition"
    ]
    assert len(documents) >= 12
    assert set(loaded) == {f"{d['spec']['names']['plural']}.{d['spec']['group']}" for d in documents}
    reg = Registry(crd_dir)
    rc = reg.get("rayclusters.ray.io")
    assert rc.from_crd and rc.versions == ("v1", "v1alpha1") and rc.categories == ("all",)
    assert set(rc.schemas) == {"v1", "v1alpha1"}
    assert "status" not in reg.get("workloadpriorityclasses.kueue.x-k8s.io").subresources
    assert reg.get(LQ).short_names == ("queue", "queues", "lq")
    assert reg.get(WL).deprecated["v1beta1"] == "This version is deprecated. Use v1beta2 instead."
    assert reg.resolve("cq") is reg.get(CQ)


def test_lookup_by_url_and_kind(reg: Registry) -> None:
    assert reg.lookup("kueue.x-k8s.io", "v1beta1", "clusterqueues") is reg.get(CQ)
    assert reg.lookup("kueue.x-k8s.io", "v1", "clusterqueues") is None
    assert reg.lookup("", "v1", "pods") is reg.get("pods")
    assert reg.key_for_kind("kueue.x-k8s.io/v1beta1", "Workload") == WL
    assert reg.key_for_kind("v1", "Pod") == "pods"
    assert reg.key_for_kind("ray.io/v9", "RayCluster") is None


def roundtrip(reg: Registry, key: str, old: dict) -> tuple[dict, dict]:
    stored = reg.to_storage(key, old, "v1beta1")
    back = reg.from_storage(key, stored, "v1beta1")
    return stored, back


def test_clusterqueue_cohort_rename(reg: Registry) -> None:
    old = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {"cohort": "team", "admissionChecks": ["ac1"]},
    }
    stored, back = roundtrip(reg, CQ, old)
    assert stored["apiVersion"] == "kueue.x-k8s.io/v1beta2"
    assert stored["spec"] == {
        "cohortName": "team",
        "admissionChecksStrategy": {"admissionChecks": [{"name": "ac1"}]},
    }
    assert back == old
    assert old["spec"]["cohort"] == "team"  # input untouched


def test_localqueue_flavor_usage_rename(reg: Registry) -> None:
    stored = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "status": {"flavorsUsage": [{"name": "gpu", "resources": []}]},
    }
    old = reg.from_storage(LQ, stored, "v1beta1")
    assert old["status"] == {"flavorUsage": [{"name": "gpu", "resources": []}]}
    assert reg.to_storage(LQ, old, "v1beta1") == stored
    assert reg.from_storage(LQ, stored, "v1beta2") is stored


@pytest.mark.parametrize(
    ("source", "group", "kind"),
    [
        ("kueue.x-k8s.io/workloadpriorityclass", "kueue.x-k8s.io", "WorkloadPriorityClass"),
        ("scheduling.k8s.io/priorityclass", "scheduling.k8s.io", "PriorityClass"),
    ],
)
def test_workload_priority_class_ref(reg: Registry, source: str, group: str, kind: str) -> None:
    old = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Workload",
        "spec": {"priorityClassName": "high", "priorityClassSource": source, "priority": 100},
        "status": {"accumulatedPastExexcutionTimeSeconds": 7},
    }
    stored, back = roundtrip(reg, WL, old)
    assert stored["spec"] == {
        "priorityClassRef": {"group": group, "kind": kind, "name": "high"},
        "priority": 100,
    }
    assert stored["status"] == {"accumulatedPastExecutionTimeSeconds": 7}
    assert back == old


def test_discovery(reg: Registry) -> None:
    groups = {g["name"]: g for g in reg.api_group_list()["groups"]}
    assert groups["kueue.x-k8s.io"]["preferredVersion"]["version"] == "v1beta2"
    assert [v["version"] for v in groups["kueue.x-k8s.io"]["versions"]] == ["v1beta2", "v1beta1"]
    core = reg.api_resource_list("", "v1")
    assert core is not None and core["groupVersion"] == "v1"
    by_name = {r["name"]: r for r in core["resources"]}
    assert by_name["pods"]["shortNames"] == ["po"] and "pods/status" in by_name
    assert "watch" in by_name["configmaps"]["verbs"]
    kueue = reg.api_resource_list("kueue.x-k8s.io", "v1beta1")
    assert kueue is not None
    assert {"workloads", "workloads/status", "clusterqueues"} <= {r["name"] for r in kueue["resources"]}
    assert reg.api_resource_list("kueue.x-k8s.io", "v9") is None
    assert reg.api_group("ray.io") is not None and reg.api_group("nope.io") is None


def test_enable_scale_adds_discovery_and_scale_object() -> None:
    reg = Registry()
    reg.enable_scale(
        WL,
        lambda o: 1 if o["spec"].get("active", True) else 0,
        lambda o, n: {**o, "spec": {**o["spec"], "active": n > 0}},
    )
    resources = {r["name"]: r for r in reg.api_resource_list("kueue.x-k8s.io", "v1beta2")["resources"]}
    assert resources["workloads/scale"]["kind"] == "Scale"
    scale = reg.scale_of(WL, {"metadata": {"name": "w", "namespace": "d"}, "spec": {"active": False}})
    assert scale["spec"] == {"replicas": 0} and scale["apiVersion"] == "autoscaling/v1"
    updated = reg.get(WL).scale.set_replicas({"spec": {"active": False}}, 1)
    assert updated["spec"]["active"] is True


def test_crd_scale_subresource_paths() -> None:
    from rayqueue_local.registry.registry import type_from_crd

    crd = {
        "kind": "CustomResourceDefinition",
        "spec": {
            "group": "x.io",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {
                        "status": {},
                        "scale": {
                            "specReplicasPath": ".spec.size",
                            "statusReplicasPath": ".status.size",
                            "labelSelectorPath": ".status.selector",
                        },
                    },
                }
            ],
        },
    }
    reg = Registry(extra=[type_from_crd(crd)])
    rt = reg.get("widgets.x.io")
    assert {"status", "scale"} <= rt.subresources and rt.scale is not None
    obj = {"metadata": {"name": "w"}, "spec": {"size": 3}, "status": {"size": 2, "selector": "app=w"}}
    assert reg.scale_of("widgets.x.io", obj)["spec"] == {"replicas": 3}
    assert reg.scale_of("widgets.x.io", obj)["status"] == {"replicas": 2, "selector": "app=w"}
    assert rt.scale.set_replicas(obj, 5)["spec"]["size"] == 5 and obj["spec"]["size"] == 3
    names = {r["name"] for r in reg.api_resource_list("x.io", "v1")["resources"]}
    assert names == {"widgets", "widgets/status", "widgets/scale"}


def test_crd_directory_is_parsed_once_and_reparsed_when_it_changes(tmp_path: Path, crd_dir: Path) -> None:
    import shutil

    source = crd_dir / "kueue" / "kueue.x-k8s.io_workloadpriorityclasses.yaml"
    shutil.copy(source, tmp_path / "wpc.yaml")
    first = load_crd_dir(tmp_path)
    assert [t.key for t in first] == ["workloadpriorityclasses.kueue.x-k8s.io"]
    assert load_crd_dir(tmp_path)[0] is first[0]  # cached
    (tmp_path / "wpc.yaml").write_text(
        source.read_text().replace("shortNames:\n    - wpc", "shortNames:\n    - wp")
    )
    assert load_crd_dir(tmp_path)[0].short_names == ("wp",)


def test_converted_objects_are_valid_at_both_versions(crd_dir: Path) -> None:
    from rayqueue_local.registry.schema import SchemaValidator

    reg = Registry(crd_dir)
    v = SchemaValidator()
    workload = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {
            "queueName": "q",
            "priorityClassRef": {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"},
            "priority": 100,
            "podSets": [{"name": "head", "count": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}],
        },
        "status": {"accumulatedPastExecutionTimeSeconds": 3},
    }
    cq = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {"cohortName": "team", "resourceGroups": []},
    }
    lq = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "lq", "namespace": "default"},
        "spec": {"clusterQueue": "cq"},
        "status": {"flavorsUsage": [{"name": "gpu", "resources": [{"name": "cpu", "total": "1"}]}]},
    }
    for key, stored in ((WL, workload), (CQ, cq), (LQ, lq)):
        rt = reg.get(key)
        assert v.validate(rt, stored, "v1beta2") == []
        old = reg.from_storage(key, stored, "v1beta1")
        assert v.validate(rt, old, "v1beta1") == []
        assert reg.to_storage(key, old, "v1beta1") == stored
