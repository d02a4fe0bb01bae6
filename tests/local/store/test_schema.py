"""CRD schema validation and pruning against the real upstream CRDs (../shared/crds)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator

from rayqueue_local.registry.registry import Registry
from rayqueue_local.registry.schema import SchemaValidator, compile_fast, go_pattern, to_json_schema
from rayqueue_local.storage.store import Store, StoreError

RC, SO, CQ = "rayclusters.ray.io", "scaledobjects.keda.sh", "clusterqueues.kueue.x-k8s.io"


@pytest.fixture(scope="module")
def registry(crd_dir: Path) -> Registry:
    return Registry(crd_dir)


@pytest.fixture
def store(registry: Registry) -> Store:
    return Store(registry)


def container(name: str, **resources: object) -> dict:
    return {"name": name, "image": "rayproject/ray:2.40.0", "resources": {"limits": resources}}


def raycluster(replicas: object = 2) -> dict:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "x", "namespace": "default"},
        "spec": {
            "rayVersion": "2.40.0",
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {
                    "metadata": {"labels": {"app": "ray"}},
                    "spec": {"containers": [container("ray-head")]},
                },
            },
            "workerGroupSpecs": [
                {
                    "groupName": "gpu",
                    "replicas": replicas,
                    "minReplicas": 0,
                    "maxReplicas": 4,
                    "rayStartParams": {},
                    "template": {"spec": {"containers": [container("worker", **{"nvidia.com/gpu": 1})]}},
                }
            ],
        },
    }


def test_valid_raycluster_is_stored(store: Store) -> None:
    assert store.validating
    rc = store.create(RC, raycluster())
    assert rc["spec"]["workerGroupSpecs"][0]["replicas"] == 2
    assert rc["spec"]["headGroupSpec"]["template"]["metadata"]["labels"] == {"app": "ray"}


def test_raycluster_replicas_two_is_422_naming_the_field(store: Store) -> None:
    with pytest.raises(StoreError) as err:
        store.create(RC, raycluster("two"))
    e = err.value
    assert (e.code, e.reason) == (422, "Invalid")
    assert e.message == (
        'RayCluster.ray.io "x" is invalid: spec.workerGroupSpecs[0].replicas: Invalid value: "string": '
        'spec.workerGroupSpecs[0].replicas in body must be of type integer: "string"'
    )
    assert e.causes == [
        {
            "reason": "FieldValueTypeInvalid",
            "message": 'Invalid value: "string": spec.workerGroupSpecs[0].replicas in body must be of type '
            'integer: "string"',
            "field": "spec.workerGroupSpecs[0].replicas",
        }
    ]
    assert e.to_status()["details"]["kind"] == "RayCluster"
    assert store.list(RC) == []


def test_update_and_patch_are_validated_too(store: Store) -> None:
    store.create(RC, raycluster())
    with pytest.raises(StoreError) as err:
        store.patch(RC, "default", "x", {"spec": {"headGroupSpec": {"rayStartParams": {"num-cpus": 1}}}})
    assert err.value.causes[0]["field"] == "spec.headGroupSpec.rayStartParams.num-cpus"
    with pytest.raises(StoreError):
        store.update_status(
            RC, {"metadata": {"name": "x", "namespace": "default"}, "status": {"readyWorkerReplicas": "x"}}
        )


def scaledobject(threshold: object) -> dict:
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "idle", "namespace": "default"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "name": "w"},
            "minReplicaCount": 0,
            "maxReplicaCount": 1,
            "triggers": [{"type": "prometheus", "metadata": {"query": "sum(x)", "threshold": threshold}}],
        },
    }


def test_scaledobject_numeric_trigger_metadata_is_422(store: Store) -> None:
    assert store.create(SO, scaledobject("80"))["spec"]["triggers"][0]["metadata"]["threshold"] == "80"
    store.delete(SO, "default", "idle")
    with pytest.raises(StoreError) as err:
        store.create(SO, scaledobject(80))
    cause = err.value.causes[0]
    assert cause["field"] == "spec.triggers[0].metadata.threshold"
    assert cause["message"].endswith('in body must be of type string: "integer"')


def test_enum_and_required(store: Store) -> None:
    cq = {
        "metadata": {"name": "cq"},
        "spec": {
            "queueingStrategy": "Fastest",
            "resourceGroups": [
                {"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [{"name": "cpu"}]}]}
            ],
        },
    }
    with pytest.raises(StoreError) as err:
        store.create(CQ, cq)
    by_field = {c["field"]: c for c in err.value.causes}
    assert by_field["spec.queueingStrategy"]["reason"] == "FieldValueNotSupported"
    assert by_field["spec.queueingStrategy"]["message"] == (
        'Unsupported value: "Fastest": supported values: "StrictFIFO", "BestEffortFIFO"'
    )
    assert (
        by_field["spec.resourceGroups[0].flavors[0].resources[0].nominalQuota"]["reason"]
        == "FieldValueRequired"
    )
    assert err.value.message.startswith('ClusterQueue.kueue.x-k8s.io "cq" is invalid: [')


def test_int_or_string_accepts_both(store: Store) -> None:
    for i, quota in enumerate((4, "4", "500m")):
        cq = {
            "metadata": {"name": f"cq{i}"},
            "spec": {
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": quota}]}],
                    }
                ]
            },
        }
        store.create(CQ, cq)
    assert store.count(CQ) == 3


def test_unknown_fields_are_pruned(store: Store) -> None:
    body = raycluster()
    body["spec"]["notAField"] = True
    body["spec"]["headGroupSpec"]["template"]["metadata"]["bogus"] = 1
    rc = store.create(RC, body)
    assert "notAField" not in rc["spec"]
    assert "bogus" not in rc["spec"]["headGroupSpec"]["template"]["metadata"]
    # Maps (additionalProperties) and preserved fields keep their keys.
    assert rc["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["resources"]["limits"] == {
        "nvidia.com/gpu": 1
    }


def test_no_pruning_when_disabled(registry: Registry) -> None:
    store = Store(registry, prune=False)
    body = raycluster()
    body["spec"]["notAField"] = True
    assert store.create(RC, body)["spec"]["notAField"] is True


def test_without_schemas_nothing_is_validated() -> None:
    store = Store()
    assert not store.validating
    assert store.create(RC, raycluster("two"))["spec"]["workerGroupSpecs"][0]["replicas"] == "two"


def test_validator_is_cached_and_input_untouched(registry: Registry) -> None:
    v = SchemaValidator()
    rt = registry.get(RC)
    body = raycluster("two")
    before = copy.deepcopy(body)
    assert v.validate(rt, body) == v.validate(rt, body)
    assert body == before
    assert len(v._compiled) == 1


def test_to_json_schema_extensions() -> None:
    js = to_json_schema(
        {
            "type": "object",
            "x-kubernetes-validations": [{"rule": "self.a > 0"}],
            "properties": {"a": {"type": "integer", "nullable": True, "enum": [1, 2]}},
        }
    )
    assert js == {"type": "object", "properties": {"a": {"type": ["integer", "null"], "enum": [1, 2, None]}}}


@pytest.mark.parametrize(
    ("schema", "value", "message"),
    [
        ({"type": "string", "maxLength": 3}, "abcd", "Too long: may not be more than 3 bytes"),
        (
            {"type": "integer", "minimum": 0},
            -1,
            "Invalid value: -1: body in body should be greater than or equal to 0",
        ),
        (
            {"type": "string", "pattern": "^[a-z]+$"},
            "A",
            "Invalid value: \"A\": body in body should match '^[a-z]+$'",
        ),
        ({"type": "array", "maxItems": 1}, [1, 2], "Too many: 2: must have at most 1 items"),
    ],
)
def test_messages(schema: dict, value: object, message: str) -> None:
    assert SchemaValidator().validate_against(schema, value)[0]["message"] == message


# -- the fast validity check agrees with jsonschema -------------------------------------------------------

_values = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(-2, 2)
    | st.text(max_size=3)
    | st.just({})
    | st.just([])
)
_paths = st.sampled_from(
    [
        ("spec", "rayVersion"),
        ("spec", "workerGroupSpecs", 0, "replicas"),
        ("spec", "workerGroupSpecs", 0, "groupName"),
        ("spec", "workerGroupSpecs", 0, "template", "spec", "containers", 0, "name"),
        ("spec", "workerGroupSpecs", 0, "template", "spec", "containers", 0, "resources", "limits", "cpu"),
        ("spec", "headGroupSpec", "rayStartParams", "num-cpus"),
        ("spec", "headGroupSpec", "template", "spec", "containers"),
        ("spec", "headGroupSpec", "serviceType"),
        ("spec", "suspend"),
        ("spec", "workerGroupSpecs"),
        ("status", "readyWorkerReplicas"),
    ]
)


@pytest.fixture(scope="module")
def rc_checks(registry: Registry) -> tuple[Any, Any]:
    schema = to_json_schema(registry.get(RC).schemas["v1"])
    schema["properties"].pop("metadata", None)
    fast = compile_fast(schema)
    assert fast is not None
    return fast, Draft7Validator(schema)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=_paths, value=_values)
def test_fast_check_agrees_with_jsonschema(rc_checks: tuple[Any, Any], path: tuple, value: object) -> None:
    fast, slow = rc_checks
    obj = raycluster()
    cur: Any = obj
    for part in path[:-1]:
        cur = cur.setdefault(part, {}) if isinstance(part, str) else cur[part]
    cur[path[-1]] = value
    assert fast(obj) == slow.is_valid(obj)


def test_go_inline_flags_are_translated() -> None:
    assert go_pattern("^(?i)[a-z]$") == "(?i)^[a-z]\\Z"  # and RE2's `$`, the end of the text
    assert SchemaValidator().validate_against({"type": "string", "pattern": "^(?i)[a-z]+$"}, "ABC") == []


# -- the known x-kubernetes-validations rules -------------------------------------------------------------

LQ, WL = "localqueues.kueue.x-k8s.io", "workloads.kueue.x-k8s.io"


def test_localqueue_cluster_queue_is_immutable(store: Store) -> None:
    store.create(LQ, {"metadata": {"name": "lq", "namespace": "default"}, "spec": {"clusterQueue": "cq"}})
    with pytest.raises(StoreError) as err:
        store.patch(LQ, "default", "lq", {"spec": {"clusterQueue": "other"}})
    assert err.value.message == (
        'LocalQueue.kueue.x-k8s.io "lq" is invalid: spec.clusterQueue: Invalid value: "string": '
        "field is immutable"
    )
    assert (
        store.patch(LQ, "default", "lq", {"metadata": {"labels": {"a": "b"}}})["spec"]["clusterQueue"] == "cq"
    )


def test_scaledobject_min_above_max_is_rejected(store: Store) -> None:
    body = scaledobject("80")
    body["spec"]["minReplicaCount"] = 2
    with pytest.raises(StoreError) as err:
        store.create(SO, body)
    assert err.value.causes == [
        {
            "reason": "FieldValueInvalid",
            "field": "spec",
            "message": 'Invalid value: "object": '
            "minReplicaCount must be less than or equal to maxReplicaCount",
        }
    ]


def test_cluster_queue_borrowing_limit_needs_a_cohort(store: Store) -> None:
    flavor = {"name": "f", "resources": [{"name": "cpu", "nominalQuota": 1, "borrowingLimit": 1}]}
    cq = {
        "metadata": {"name": "cq"},
        "spec": {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [flavor]}]},
    }
    with pytest.raises(StoreError) as err:
        store.create(CQ, cq)
    assert err.value.causes[0]["message"].endswith("borrowingLimit must be nil when cohort is empty")
    cq["spec"]["cohortName"] = "team"
    assert store.create(CQ, cq)["spec"]["cohortName"] == "team"


def test_raycluster_managed_by_values_and_immutability(store: Store) -> None:
    body = raycluster()
    body["spec"]["managedBy"] = "someone-else"
    with pytest.raises(StoreError) as err:
        store.create(RC, body)
    assert "the managedBy field value must be either" in err.value.message
    body["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    store.create(RC, body)
    with pytest.raises(StoreError) as err:
        store.patch(RC, "default", "x", {"spec": {"managedBy": "ray.io/kuberay-operator"}})
    assert err.value.causes[0]["field"] == "spec.managedBy"


def test_workload_priority_rule(store: Store) -> None:
    wl = {
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {
            "queueName": "q",
            "priorityClassRef": {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"},
            "podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}],
        },
    }
    with pytest.raises(StoreError) as err:
        store.create(WL, wl)
    assert err.value.causes[0]["message"].endswith("priority should not be nil when priorityClassRef is set")
    wl["spec"]["priority"] = 100
    store.create(WL, wl)


def test_pattern_dollar_matches_only_at_the_end_as_in_go() -> None:
    """RE2's `$` is the end of the text; Python's also matches before a final newline."""
    from rayqueue_local.registry.schema import SchemaValidator

    schema = {"type": "object", "properties": {"name": {"type": "string", "pattern": "^[a-z]+$"}}}
    validator = SchemaValidator()
    assert validator.validate_against(schema, {"name": "abc"}) == []
    causes = validator.validate_against(schema, {"name": "abc\n"})
    assert [c["field"] for c in causes] == ["name"]
