"""Merge, JSON, strategic-merge patches and server-side apply, pure and through the store."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rayqueue_local.apimachinery.patch import (
    PatchError,
    json_patch,
    merge_patch,
    server_side_apply,
    strategic_merge_patch,
)
from rayqueue_local.storage.store import Store, StoreError

# -- RFC 7386 examples (appendix A) -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "patch", "result"),
    [
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
        ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
        ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        (["a", "b"], ["c", "d"], ["c", "d"]),
        ({"a": "b"}, ["c"], ["c"]),
        ({"a": "foo"}, None, None),
        ({"a": "foo"}, "bar", "bar"),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    ],
)
def test_merge_patch_rfc7386_examples(target: object, patch: object, result: object) -> None:
    assert merge_patch(target, patch) == result


# -- RFC 6902 ---------------------------------------------------------------------------------------------


def test_json_patch_operations() -> None:
    doc = {"foo": ["bar", "baz"], "q": {"x": 1}, "a~b": 1, "c/d": 2}
    ops = [
        {"op": "add", "path": "/foo/1", "value": "qux"},
        {"op": "remove", "path": "/foo/0"},
        {"op": "replace", "path": "/q/x", "value": 2},
        {"op": "copy", "from": "/q", "path": "/r"},
        {"op": "move", "from": "/q/x", "path": "/moved"},
        {"op": "test", "path": "/a~0b", "value": 1},
        {"op": "remove", "path": "/c~1d"},
        {"op": "add", "path": "/foo/-", "value": "end"},
    ]
    assert json_patch(doc, ops) == {
        "foo": ["qux", "baz", "end"],
        "q": {},
        "r": {"x": 2},
        "moved": 2,
        "a~b": 1,
    }
    assert doc["foo"] == ["bar", "baz"]  # untouched


def test_replace_of_a_key_an_existing_object_lacks_adds_it_as_the_api_server_does() -> None:
    # evanphx/json-patch v4 (the API server's): what Ray's autoscaler does to a group without scaleStrategy
    doc = {"spec": {"workerGroupSpecs": [{"replicas": 1}]}}
    ops = [
        {
            "op": "replace",
            "path": "/spec/workerGroupSpecs/0/scaleStrategy",
            "value": {"workersToDelete": ["w"]},
        }
    ]
    assert json_patch(doc, ops)["spec"]["workerGroupSpecs"][0]["scaleStrategy"] == {"workersToDelete": ["w"]}


@pytest.mark.parametrize(
    "ops",
    [
        [{"op": "test", "path": "/a", "value": 2}],
        [{"op": "remove", "path": "/missing"}],
        [{"op": "replace", "path": "/x/missing", "value": 1}],
        [{"op": "add", "path": "/list/5", "value": 1}],
        [{"op": "add", "path": "/x/y", "value": 1}],
        [{"op": "move", "from": "/list", "path": "/list/0"}],
    ],
)
def test_json_patch_failures_are_422(ops: list) -> None:
    with pytest.raises(PatchError) as err:
        json_patch({"a": 1, "list": [1]}, ops)
    assert err.value.code == 422


REJECTED = "the server rejected our request due to an error in our request"


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        (
            [{"op": "test", "path": "/a", "value": 2}],
            f"{REJECTED}: testing value /a failed: test failed",
        ),
        (
            [{"op": "test", "path": "/zz", "value": 2}],
            f"{REJECTED}: doc is missing path: /zz: missing value",
        ),
        ([{"op": "remove", "path": "/missing"}], "Unable to remove nonexistent key: missing: missing value"),
        (
            [{"op": "replace", "path": "/x/missing", "value": 1}],
            "doc is missing path: /x/missing: missing value",
        ),
        ([{"op": "add", "path": "/x/y", "value": 1}], "doc is missing path: /x/y: missing value"),
        ([{"op": "copy", "from": "/zz", "path": "/b"}], "doc is missing path: /zz: missing value"),
        ([{"op": "add", "path": "/list/5", "value": 1}], "unable to access invalid index: 5 in path /list/5"),
        ([{"op": "remove", "path": "/list/01"}], "unable to access invalid index: 01 in path /list/01"),
        (
            [{"op": "move", "from": "/list", "path": "/list/0"}],
            "cannot move /list into its own child /list/0",
        ),
        (
            [{"op": "add", "path": "a", "value": 1}],
            f'{REJECTED}: invalid JSON pointer "a"',
        ),
        ([{"op": "add", "path": "/a"}], "operation 'add' is missing the 'value' field"),
        ([{"op": "move", "path": "/a"}], "operation 'move' is missing the 'from' field"),
    ],
)
def test_json_patch_failures_say_what_the_api_server_says(ops: list, message: str) -> None:
    doc = {"a": 1, "list": [1], "secret": "s3cr3t"}
    with pytest.raises(PatchError) as err:
        json_patch(doc, ops)
    assert (err.value.code, err.value.message) == (422, message)
    assert "s3cr3t" not in str(err.value)  # the library's own text quotes the document: never passed on


def test_json_patch_values_are_copied_not_shared() -> None:
    value = {"k": [1]}
    out = json_patch({}, [{"op": "add", "path": "/v", "value": value}])
    out["v"]["k"].append(2)
    assert value == {"k": [1]}


def test_json_patch_unknown_op_is_422_and_a_non_object_operation_400() -> None:
    # Upstream decodes the operations (400 when they do not decode) and fails in Apply on an
    # unknown op, which the API server answers with 422 (endpoints/handlers/patch.go).
    with pytest.raises(PatchError) as err:
        json_patch({}, [{"op": "frobnicate", "path": "/a"}])
    assert (err.value.code, str(err.value)) == (422, "Unexpected kind: frobnicate")
    with pytest.raises(PatchError) as err:
        json_patch({}, ["not an operation"])
    assert err.value.code == 400


# -- property tests ---------------------------------------------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers(-10, 10) | st.text(max_size=3)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=10,
)
json_objects = st.dictionaries(st.text(max_size=3), json_values, max_size=4)


def _strip_nulls(value: object) -> object:
    if isinstance(value, dict):
        return {k: _strip_nulls(v) for k, v in value.items() if v is not None}
    return value


@settings(max_examples=200, deadline=None)
@given(json_objects, json_objects)
def test_merge_patch_is_idempotent_and_sets_what_it_says(target: dict, patch: dict) -> None:
    once = merge_patch(target, patch)
    assert merge_patch(once, patch) == once
    for key, value in patch.items():
        if value is None:
            assert key not in once
        elif not isinstance(value, dict):
            assert once[key] == value
        else:
            assert isinstance(once[key], dict)


@settings(max_examples=200, deadline=None)
@given(json_objects, json_objects)
def test_json_patch_replace_everything_yields_the_target(source: dict, target: dict) -> None:
    ops = [{"op": "remove", "path": "/" + k.replace("~", "~0").replace("/", "~1")} for k in source]
    ops += [
        {"op": "add", "path": "/" + k.replace("~", "~0").replace("/", "~1"), "value": v}
        for k, v in target.items()
    ]
    assert json_patch(source, ops) == target


@settings(max_examples=200, deadline=None)
@given(json_objects, json_objects)
def test_strategic_without_lists_of_keyed_fields_equals_merge(target: dict, patch: dict) -> None:
    # With no directive keys and no known merge-key lists, strategic merge reduces to a merge patch.
    def plain(v: object) -> bool:
        if isinstance(v, dict):
            return all(not k.startswith("$") and plain(x) for k, x in v.items())
        if isinstance(v, list):
            return all(plain(x) for x in v)
        return True

    if plain(patch) and plain(target):
        assert strategic_merge_patch(target, patch) == merge_patch(target, patch)


# -- strategic merge --------------------------------------------------------------------------------------


def pod() -> dict:
    return {
        "spec": {
            "containers": [
                {
                    "name": "a",
                    "image": "a:1",
                    "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}],
                },
                {"name": "b", "image": "b:1"},
            ],
            "volumes": [{"name": "v", "emptyDir": {}}],
            "nodeSelector": {"x": "y"},
        },
    }


def test_strategic_merges_containers_by_name_and_env_by_name() -> None:
    patch = {
        "spec": {
            "containers": [{"name": "a", "env": [{"name": "Y", "value": "3"}, {"name": "Z", "value": "4"}]}]
        }
    }
    out = strategic_merge_patch(pod(), patch)
    a = out["spec"]["containers"][0]
    assert a["image"] == "a:1"
    assert a["env"] == [{"name": "X", "value": "1"}, {"name": "Y", "value": "3"}, {"name": "Z", "value": "4"}]
    assert [c["name"] for c in out["spec"]["containers"]] == ["a", "b"]


def test_strategic_directives() -> None:
    out = strategic_merge_patch(
        pod(),
        {
            "spec": {
                "containers": [{"name": "b", "$patch": "delete"}, {"name": "c", "image": "c:1"}],
                "nodeSelector": {"$patch": "replace", "only": "this"},
                "$setElementOrder/containers": [{"name": "a"}, {"name": "c"}],
                "volumes": [{"name": "v", "$patch": "delete"}],
            }
        },
    )
    assert [c["name"] for c in out["spec"]["containers"]] == ["a", "c"]
    assert out["spec"]["nodeSelector"] == {"only": "this"}
    assert out["spec"]["volumes"] == []
    removed = strategic_merge_patch(
        {"spec": {"finalizers": ["a", "b"]}}, {"spec": {"$deleteFromPrimitiveList/finalizers": ["a"]}}
    )
    assert removed == {"spec": {"finalizers": ["b"]}}
    assert strategic_merge_patch({"a": {"b": 1}, "c": 2}, {"a": {"$patch": "delete"}}) == {"c": 2}


def test_strategic_other_lists_are_replaced() -> None:
    out = strategic_merge_patch({"spec": {"args": ["a", "b"]}}, {"spec": {"args": ["c"]}})
    assert out == {"spec": {"args": ["c"]}}


def test_condition_lists_merge_by_type() -> None:
    live = {
        "status": {
            "conditions": [{"type": "Ready", "status": "False"}, {"type": "Admitted", "status": "True"}]
        }
    }
    out = strategic_merge_patch(live, {"status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    assert out["status"]["conditions"] == [
        {"type": "Ready", "status": "True"},
        {"type": "Admitted", "status": "True"},
    ]


# -- server-side apply ------------------------------------------------------------------------------------


def test_ssa_tracks_owners_and_conflicts() -> None:
    obj = server_side_apply(
        None,
        {"metadata": {"name": "x", "labels": {"a": "1"}}, "spec": {"replicas": 1, "image": "i"}},
        "alice",
    )
    fields = obj["metadata"]["managedFields"][0]
    assert fields["manager"] == "alice" and fields["operation"] == "Apply"
    assert fields["fieldsV1"] == {
        "f:metadata": {"f:labels": {"f:a": {}}},
        "f:spec": {"f:image": {}, "f:replicas": {}},
    }
    # Same value from another manager: no conflict, shared ownership.
    shared = server_side_apply(obj, {"spec": {"replicas": 1}}, "bob")
    owners = {e["manager"] for e in shared["metadata"]["managedFields"]}
    assert owners == {"alice", "bob"}
    with pytest.raises(PatchError) as err:
        server_side_apply(obj, {"spec": {"replicas": 3, "image": "j"}}, "bob")
    assert err.value.code == 409 and err.value.reason == "Conflict"
    assert sorted(c["field"] for c in err.value.causes) == [".spec.image", ".spec.replicas"]
    assert err.value.message.startswith("Apply failed with 2 conflicts:")


def test_ssa_force_takes_ownership() -> None:
    obj = server_side_apply(None, {"spec": {"replicas": 1, "image": "i"}}, "alice")
    forced = server_side_apply(obj, {"spec": {"replicas": 3}}, "bob", force=True)
    assert forced["spec"] == {"replicas": 3, "image": "i"}
    by_manager = {e["manager"]: e["fieldsV1"] for e in forced["metadata"]["managedFields"]}
    assert by_manager == {"alice": {"f:spec": {"f:image": {}}}, "bob": {"f:spec": {"f:replicas": {}}}}
    # alice no longer owns replicas, so she may not silently keep it: her next apply conflicts again.
    with pytest.raises(PatchError):
        server_side_apply(forced, {"spec": {"replicas": 1, "image": "i"}}, "alice")


def test_ssa_removes_fields_the_manager_stopped_applying() -> None:
    obj = server_side_apply(None, {"spec": {"a": 1, "b": 2}, "metadata": {"labels": {"x": "1"}}}, "alice")
    obj = server_side_apply(obj, {"spec": {"c": 3}}, "bob")
    obj = server_side_apply(obj, {"spec": {"a": 1}}, "alice")
    assert obj["spec"] == {"a": 1, "c": 3}
    assert "labels" not in obj["metadata"]


def test_ssa_keyed_lists_are_owned_per_element() -> None:
    live = server_side_apply(None, {"spec": {"containers": [{"name": "a", "image": "a:1"}]}}, "alice")
    both = server_side_apply(live, {"spec": {"containers": [{"name": "b", "image": "b:1"}]}}, "bob")
    assert [c["name"] for c in both["spec"]["containers"]] == ["a", "b"]
    with pytest.raises(PatchError) as err:
        server_side_apply(both, {"spec": {"containers": [{"name": "a", "image": "a:2"}]}}, "bob")
    assert err.value.causes[0]["field"] == '.spec.containers[{"name":"a"}].image'


# -- through the store -----------------------------------------------------------------------------------

RC = "rayclusters.ray.io"


@pytest.fixture
def store() -> Store:
    s = Store()
    s.create(
        RC,
        {
            "metadata": {"name": "x", "namespace": "default"},
            "spec": {"rayVersion": "1", "enableInTreeAutoscaling": False},
        },
    )
    return s


def test_store_merge_patch_bumps_generation_and_checks_precondition(store: Store) -> None:
    out = store.patch(RC, "default", "x", {"spec": {"rayVersion": "2"}})
    assert out["spec"]["rayVersion"] == "2" and out["metadata"]["generation"] == 2
    with pytest.raises(StoreError) as err:
        store.patch(RC, "default", "x", {"metadata": {"resourceVersion": "1"}, "spec": {"rayVersion": "3"}})
    assert err.value.code == 409


def test_store_status_patch_touches_only_status(store: Store) -> None:
    out = store.patch(
        RC, "default", "x", {"status": {"state": "ready"}, "spec": {"rayVersion": "9"}}, subresource="status"
    )
    assert out["status"] == {"state": "ready"} and out["spec"]["rayVersion"] == "1"
    assert out["metadata"]["generation"] == 1
    main = store.patch(RC, "default", "x", {"status": {"state": "other"}})
    assert main["status"] == {"state": "ready"}


def test_store_json_patch_errors_are_status_errors(store: Store) -> None:
    with pytest.raises(StoreError) as err:
        store.patch(
            RC, "default", "x", [{"op": "test", "path": "/spec/rayVersion", "value": "0"}], patch_type="json"
        )
    assert err.value.code == 422
    with pytest.raises(StoreError) as err:
        store.patch(RC, "default", "missing", {"spec": {}})
    assert err.value.code == 404


def test_store_strategic_patch(store: Store) -> None:
    store.create("pods", {"metadata": {"name": "p", "namespace": "default"}, **pod()})
    out = store.patch(
        "pods",
        "default",
        "p",
        {"spec": {"containers": [{"name": "b", "image": "b:2"}]}},
        patch_type="strategic",
    )
    assert [(c["name"], c["image"]) for c in out["spec"]["containers"]] == [("a", "a:1"), ("b", "b:2")]


def test_store_apply_creates_then_conflicts_then_forces(store: Store) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default"},
        "data": {"k": "1"},
    }
    created = store.apply("configmaps", body, field_manager="sdk")
    assert created["data"] == {"k": "1"}
    assert created["metadata"]["managedFields"][0]["manager"] == "sdk"
    assert (
        store.apply("configmaps", body, field_manager="sdk")["metadata"]["resourceVersion"]
        == created["metadata"]["resourceVersion"]
    )
    with pytest.raises(StoreError) as err:
        store.apply("configmaps", {**body, "data": {"k": "2"}}, field_manager="other")
    e = err.value
    assert (e.code, e.reason) == (409, "Conflict")
    assert e.causes == [
        {
            "type": "FieldManagerConflict",
            "reason": "FieldManagerConflict",
            "message": 'conflict with "sdk" using v1',
            "field": ".data.k",
        }
    ]
    out = store.patch(
        "configmaps",
        "default",
        "c",
        {"data": {"k": "2"}},
        patch_type="apply",
        field_manager="other",
        force=True,
    )
    assert out["data"] == {"k": "2"}


def test_store_apply_needs_a_field_manager(store: Store) -> None:
    with pytest.raises(StoreError) as err:
        store.apply("configmaps", {"metadata": {"name": "c", "namespace": "default"}}, field_manager="")
    assert err.value.code == 422


def test_update_with_field_manager_takes_ownership(store: Store) -> None:
    store.apply(
        RC,
        {"metadata": {"name": "x", "namespace": "default"}, "spec": {"rayVersion": "1"}},
        field_manager="sdk",
    )
    store.patch(RC, "default", "x", {"spec": {"rayVersion": "2"}}, field_manager="kubectl-edit")
    managers = {e["manager"]: e for e in store.get(RC, "default", "x")["metadata"]["managedFields"]}
    assert managers["kubectl-edit"]["operation"] == "Update"
    assert managers["kubectl-edit"]["fieldsV1"] == {"f:spec": {"f:rayVersion": {}}}
    assert "sdk" not in managers  # it owned only rayVersion, which changed hands
    # Like upstream, an applier then conflicts with the Update manager.
    with pytest.raises(StoreError) as err:
        store.apply(
            RC,
            {"metadata": {"name": "x", "namespace": "default"}, "spec": {"rayVersion": "3"}},
            field_manager="sdk",
        )
    assert err.value.causes[0]["message"].startswith('conflict with "kubectl-edit"')


def test_hooks_run_on_patch_and_apply(store: Store) -> None:
    ops: list[str] = []

    def hook(op: str, new: dict, old: dict | None) -> dict:
        ops.append(op)
        new["metadata"].setdefault("annotations", {})["hooked"] = "yes"
        return new

    store.add_admission_hook("configmaps", hook)
    store.apply(
        "configmaps",
        {"metadata": {"name": "c", "namespace": "default"}, "data": {"a": "1"}},
        field_manager="m",
    )
    out = store.patch("configmaps", "default", "c", {"data": {"a": "2"}})
    assert ops == ["CREATE", "UPDATE"] and out["metadata"]["annotations"] == {"hooked": "yes"}


def test_strategic_ports_and_finalizers() -> None:
    svc = {"spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443, "name": "https"}]}}
    out = strategic_merge_patch(svc, {"spec": {"ports": [{"port": 443, "name": "tls"}]}})
    assert out["spec"]["ports"] == [{"port": 80, "name": "http"}, {"port": 443, "name": "tls"}]
    meta = {"metadata": {"finalizers": ["a"]}}
    assert strategic_merge_patch(meta, {"metadata": {"finalizers": ["b", "a"]}}) == {
        "metadata": {"finalizers": ["a", "b"]}
    }


def test_ssa_list_types_come_from_the_crd(crd_dir: object) -> None:
    from rayqueue_local.registry.registry import Registry

    store = Store(Registry(crd_dir), validate=False)  # type: ignore[arg-type]
    wl = "workloads.kueue.x-k8s.io"
    body = {
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"podSets": [{"name": "head", "count": 1, "template": {"spec": {"containers": []}}}]},
    }
    store.apply(wl, body, field_manager="a")
    other = {
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"podSets": [{"name": "workers", "count": 2}]},
    }
    merged = store.apply(wl, other, field_manager="b")  # podSets is a map-list keyed by name upstream
    assert [p["name"] for p in merged["spec"]["podSets"]] == ["head", "workers"]
    rc = "rayclusters.ray.io"
    groups = {
        "metadata": {"name": "r", "namespace": "default"},
        "spec": {"workerGroupSpecs": [{"groupName": "a"}]},
    }
    store.apply(rc, groups, field_manager="a")
    # workerGroupSpecs is atomic in the KubeRay CRD: another applier's list conflicts as a whole.
    with pytest.raises(StoreError) as err:
        store.apply(rc, {**groups, "spec": {"workerGroupSpecs": [{"groupName": "b"}]}}, field_manager="b")
    assert err.value.causes[0]["field"] == ".spec.workerGroupSpecs"


def test_apply_on_the_status_subresource_tracks_its_own_owners(store: Store) -> None:
    body = {"metadata": {"name": "x", "namespace": "default"}, "status": {"state": "ready"}}
    out = store.apply(RC, body, field_manager="kuberay", subresource="status")
    assert out["status"] == {"state": "ready"}
    entry = next(e for e in out["metadata"]["managedFields"] if e["manager"] == "kuberay")
    assert entry["subresource"] == "status" and entry["fieldsV1"] == {"f:status": {"f:state": {}}}
    with pytest.raises(StoreError) as err:
        store.apply(RC, {**body, "status": {"state": "failed"}}, field_manager="other", subresource="status")
    assert err.value.causes[0]["field"] == ".status.state"
    # The main resource's owners are separate: applying spec as another manager does not conflict.
    assert store.apply(RC, {**body, "spec": {"rayVersion": "1"}}, field_manager="other")["status"] == {
        "state": "ready"
    }


def test_reapplying_the_same_configuration_is_a_no_op() -> None:
    first = server_side_apply(
        None, {"metadata": {"name": "x"}, "spec": {"a": 1}}, "m", now="2026-01-01T00:00:00Z"
    )
    again = server_side_apply(
        first, {"metadata": {"name": "x"}, "spec": {"a": 1}}, "m", now="2026-01-01T00:00:09Z"
    )
    assert again == first
    changed = server_side_apply(
        first, {"metadata": {"name": "x"}, "spec": {"a": 2}}, "m", now="2026-01-01T00:00:09Z"
    )
    assert changed["metadata"]["managedFields"][0]["time"] == "2026-01-01T00:00:09Z"
