"""Object semantics of the local control plane's store (no HTTP)."""

from __future__ import annotations

import contextlib
import re
import threading

import pytest

from rayqueue_local.storage.store import Event, Store, StoreError

RC = "rayclusters.ray.io"


def raycluster(name: str = "rc", ns: str = "default", **meta: object) -> dict:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": ns, **meta},
        "spec": {"rayVersion": "2.40.0", "workerGroupSpecs": [{"groupName": "w", "replicas": 1}]},
    }


@pytest.fixture
def store() -> Store:
    return Store()


def test_create_fills_server_fields(store: Store) -> None:
    rc = store.create(RC, raycluster())
    meta = rc["metadata"]
    assert re.fullmatch(r"[0-9a-f-]{36}", meta["uid"])
    assert meta["generation"] == 1
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", meta["creationTimestamp"])
    assert meta["resourceVersion"] == store.resource_version
    assert store.get(RC, "default", "rc") == rc


def test_resource_version_is_one_global_counter(store: Store) -> None:
    a = store.create(RC, raycluster("a"))
    b = store.create("configmaps", {"metadata": {"name": "b", "namespace": "default"}})
    assert int(b["metadata"]["resourceVersion"]) == int(a["metadata"]["resourceVersion"]) + 1


def test_generate_name(store: Store) -> None:
    obj = raycluster()
    del obj["metadata"]["name"]
    obj["metadata"]["generateName"] = "job-"
    names = {store.create(RC, obj)["metadata"]["name"] for _ in range(5)}
    assert len(names) == 5
    assert all(re.fullmatch(r"job-[a-z0-9]{5}", n) for n in names)


def test_missing_name_is_invalid(store: Store) -> None:
    obj = raycluster()
    del obj["metadata"]["name"]
    with pytest.raises(StoreError) as err:
        store.create(RC, obj)
    assert err.value.code == 422
    assert err.value.causes[0]["field"] == "metadata.name"


def test_already_exists_and_not_found_messages(store: Store) -> None:
    store.create(RC, raycluster("x"))
    with pytest.raises(StoreError) as err:
        store.create(RC, raycluster("x"))
    assert (err.value.code, err.value.reason) == (409, "AlreadyExists")
    assert err.value.message == 'rayclusters.ray.io "x" already exists'
    with pytest.raises(StoreError) as err:
        store.get(RC, "default", "y")
    assert (err.value.code, err.value.reason, err.value.message) == (
        404,
        "NotFound",
        'rayclusters.ray.io "y" not found',
    )
    assert err.value.to_status()["details"] == {"name": "y", "group": "ray.io", "kind": "rayclusters"}


def test_missing_namespace(store: Store) -> None:
    with pytest.raises(StoreError) as err:
        store.create(RC, raycluster(ns="nope"))
    assert (err.value.code, err.value.message) == (404, 'namespaces "nope" not found')


def test_invalid_name_has_real_message_and_cause(store: Store) -> None:
    with pytest.raises(StoreError) as err:
        store.create(RC, raycluster("Bad_Name"))
    e = err.value
    assert (e.code, e.reason) == (422, "Invalid")
    assert e.message.startswith(
        'RayCluster.ray.io "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": '
        "a lowercase RFC 1123 subdomain must consist of"
    )
    assert e.causes == [
        {"reason": "FieldValueInvalid", "field": "metadata.name", "message": e.causes[0]["message"]}
    ]
    assert e.causes[0]["message"].startswith('Invalid value: "Bad_Name"')


def test_namespace_and_service_names_use_label_rules(store: Store) -> None:
    with pytest.raises(StoreError) as err:
        store.create("namespaces", {"metadata": {"name": "a.b"}})
    assert "RFC 1123 label" in err.value.message
    with pytest.raises(StoreError) as err:
        store.create("services", {"metadata": {"name": "1svc", "namespace": "default"}})
    assert "DNS-1035 label" in err.value.message
    assert err.value.message.startswith('Service "1svc" is invalid')


def test_kind_mismatch_is_bad_request(store: Store) -> None:
    with pytest.raises(StoreError) as err:
        store.create(RC, {**raycluster(), "kind": "RayJob"})
    assert err.value.code == 400


def test_update_conflict_on_stale_resource_version(store: Store) -> None:
    rc = store.create(RC, raycluster("x"))
    fresh = dict(rc, spec={**rc["spec"], "rayVersion": "2.41.0"})
    store.update(RC, fresh)
    with pytest.raises(StoreError) as err:
        store.update(RC, rc)
    assert (err.value.code, err.value.reason) == (409, "Conflict")
    assert err.value.message == (
        'Operation cannot be fulfilled on rayclusters.ray.io "x": the object has been modified; '
        "please apply your "
        "changes to the latest version and try again"
    )


def test_update_without_resource_version_is_unconditional(store: Store) -> None:
    store.create(RC, raycluster("x"))
    obj = raycluster("x")
    obj["spec"]["rayVersion"] = "9"
    assert store.update(RC, obj)["spec"]["rayVersion"] == "9"


def test_generation_bumps_on_spec_only(store: Store) -> None:
    rc = store.create(RC, raycluster())
    rc["metadata"]["labels"] = {"a": "b"}
    rc = store.update(RC, rc)
    assert rc["metadata"]["generation"] == 1
    rc["status"] = {"state": "ready"}
    rc = store.update_status(RC, rc)
    assert rc["metadata"]["generation"] == 1
    rc["spec"]["rayVersion"] = "2.41.0"
    rc = store.update(RC, rc)
    assert rc["metadata"]["generation"] == 2


def test_update_keeps_status_and_update_status_keeps_spec(store: Store) -> None:
    rc = store.create(RC, raycluster())
    rc["status"] = {"state": "ready"}
    rc = store.update_status(RC, rc)
    rc["status"] = {"state": "hacked"}
    rc["spec"]["rayVersion"] = "3"
    rc = store.update(RC, rc)
    assert rc["status"] == {"state": "ready"}
    rc["spec"]["rayVersion"] = "4"
    rc["status"] = {"state": "suspended"}
    rc = store.update_status(RC, rc)
    assert rc["spec"]["rayVersion"] == "3"
    assert rc["status"] == {"state": "suspended"}


def test_status_dropped_on_create_for_status_subresource(store: Store) -> None:
    obj = raycluster()
    obj["status"] = {"state": "ready"}
    assert "status" not in store.create(RC, obj)


def test_noop_update_keeps_version_and_emits_nothing(store: Store) -> None:
    rc = store.create(RC, raycluster())
    seen: list[Event] = []
    store.subscribe(seen.append)
    again = store.update(RC, rc)
    assert again["metadata"]["resourceVersion"] == rc["metadata"]["resourceVersion"]
    assert seen == []


def test_server_fields_cannot_be_overwritten(store: Store) -> None:
    rc = store.create(RC, raycluster())
    forged = dict(
        rc, metadata={**rc["metadata"], "uid": "forged", "creationTimestamp": "2000-01-01T00:00:00Z"}
    )
    forged["spec"] = {**rc["spec"], "rayVersion": "x"}
    out = store.update(RC, forged)
    assert out["metadata"]["uid"] == rc["metadata"]["uid"]
    assert out["metadata"]["creationTimestamp"] == rc["metadata"]["creationTimestamp"]


def test_returned_objects_are_copies(store: Store) -> None:
    rc = store.create(RC, raycluster())
    rc["spec"]["rayVersion"] = "mutated"
    store.get(RC, "default", "rc")["spec"]["rayVersion"] = "mutated"
    assert store.get(RC, "default", "rc")["spec"]["rayVersion"] == "2.40.0"


def test_cluster_scoped_objects_have_no_namespace(store: Store) -> None:
    cq = store.create(
        "clusterqueues.kueue.x-k8s.io", {"metadata": {"name": "cq", "namespace": "ignored"}, "spec": {}}
    )
    assert "namespace" not in cq["metadata"]
    assert store.get("clusterqueues.kueue.x-k8s.io", None, "cq")["metadata"]["name"] == "cq"
    assert store.get("clusterqueues.kueue.x-k8s.io", "whatever", "cq")["metadata"]["name"] == "cq"


def test_unknown_resource_is_not_found(store: Store) -> None:
    with pytest.raises(StoreError) as err:
        store.list("widgets.example.com")
    assert err.value.code == 404


def test_default_namespaces_exist(store: Store) -> None:
    names = {n["metadata"]["name"] for n in store.list("namespaces")}
    assert {"default", "kube-system"} <= names
    ns = store.get("namespaces", None, "default")
    assert ns["status"] == {"phase": "Active"}
    assert ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": "default"}


# -- finalizers, deletion, GC -----------------------------------------------------------------------------


def test_delete_without_finalizers_removes(store: Store) -> None:
    store.create(RC, raycluster())
    gone = store.delete(RC, "default", "rc")
    assert gone is not None and gone["metadata"]["name"] == "rc"
    with pytest.raises(StoreError):
        store.get(RC, "default", "rc")


def test_finalizers_hold_the_object_until_removed(store: Store) -> None:
    store.create(RC, raycluster(finalizers=["ray.io/cleanup", "other/x"]))
    marked = store.delete(RC, "default", "rc")
    assert marked is not None and marked["metadata"]["deletionTimestamp"]
    assert marked["metadata"]["generation"] == 2
    assert store.delete(RC, "default", "rc")["metadata"]["deletionTimestamp"]  # idempotent
    obj = store.get(RC, "default", "rc")
    obj["metadata"]["finalizers"] = ["other/x"]
    obj = store.update(RC, obj)
    assert store.get(RC, "default", "rc")
    obj["metadata"]["finalizers"].append("new/one")
    with pytest.raises(StoreError) as err:
        store.update(RC, obj)
    assert err.value.code == 422
    store.patch(RC, "default", "rc", {"metadata": {"finalizers": []}})
    with pytest.raises(StoreError):
        store.get(RC, "default", "rc")


def test_delete_preconditions(store: Store) -> None:
    rc = store.create(RC, raycluster())
    with pytest.raises(StoreError) as err:
        store.delete(RC, "default", "rc", uid="other")
    assert err.value.code == 409
    assert store.delete(RC, "default", "rc", resource_version=rc["metadata"]["resourceVersion"])


def owner_ref(obj: dict, controller: bool = True) -> dict:
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
        "controller": controller,
    }


def test_garbage_collection_cascades(store: Store) -> None:
    job = store.create("rayjobs.ray.io", {"metadata": {"name": "job", "namespace": "default"}, "spec": {}})
    rc = store.create(RC, raycluster("job-rc", ownerReferences=[owner_ref(job)]))
    pod = store.create(
        "pods", {"metadata": {"name": "head", "namespace": "default", "ownerReferences": [owner_ref(rc)]}}
    )
    svc = store.create(
        "services",
        {"metadata": {"name": "job-rc-head-svc", "namespace": "default", "ownerReferences": [owner_ref(rc)]}},
    )
    store.delete("rayjobs.ray.io", "default", "job")
    assert store.list(RC) == []
    assert store.list("pods") == [] and store.list("services") == []
    assert pod and svc


def test_gc_waits_for_owner_finalizers_and_respects_dependent_finalizers(store: Store) -> None:
    rc = store.create(RC, raycluster(finalizers=["f/x"]))
    store.create(
        "pods",
        {
            "metadata": {
                "name": "p",
                "namespace": "default",
                "ownerReferences": [owner_ref(rc)],
                "finalizers": ["f/y"],
            }
        },
    )
    store.delete(RC, "default", "rc")
    assert "deletionTimestamp" not in store.get("pods", "default", "p")["metadata"]
    store.patch(RC, "default", "rc", {"metadata": {"finalizers": None}})
    assert store.get("pods", "default", "p")["metadata"]["deletionTimestamp"]
    store.patch("pods", "default", "p", {"metadata": {"finalizers": None}})
    assert store.list("pods") == []


def test_gc_keeps_dependent_with_another_owner(store: Store) -> None:
    a = store.create(RC, raycluster("a"))
    b = store.create(RC, raycluster("b"))
    store.create(
        "configmaps",
        {
            "metadata": {
                "name": "c",
                "namespace": "default",
                "ownerReferences": [owner_ref(a), owner_ref(b, controller=False)],
            }
        },
    )
    store.delete(RC, "default", "a")
    refs = store.get("configmaps", "default", "c")["metadata"]["ownerReferences"]
    assert [r["name"] for r in refs] == ["b"]


def test_orphan_propagation(store: Store) -> None:
    rc = store.create(RC, raycluster())
    store.create(
        "pods", {"metadata": {"name": "p", "namespace": "default", "ownerReferences": [owner_ref(rc)]}}
    )
    store.delete(RC, "default", "rc", propagation_policy="Orphan")
    assert "ownerReferences" not in store.get("pods", "default", "p")["metadata"]


def test_dependent_of_a_missing_owner_is_collected(store: Store) -> None:
    ghost = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "name": "ghost", "uid": "no-such-uid"}
    store.create("pods", {"metadata": {"name": "p", "namespace": "default", "ownerReferences": [ghost]}})
    assert store.list("pods") == []


def test_namespace_deletion_deletes_contents(store: Store) -> None:
    store.create("namespaces", {"metadata": {"name": "team"}})
    store.create(RC, raycluster(ns="team"))
    store.create("configmaps", {"metadata": {"name": "held", "namespace": "team", "finalizers": ["f/x"]}})
    ns = store.delete("namespaces", None, "team")
    assert ns is not None and ns["status"] == {"phase": "Terminating"}
    assert store.list(RC, "team") == []
    with pytest.raises(StoreError) as err:
        store.create(RC, raycluster("new", ns="team"))
    assert err.value.code == 403
    assert "because it is being terminated" in err.value.message
    store.patch("configmaps", "team", "held", {"metadata": {"finalizers": None}})
    with pytest.raises(StoreError):
        store.get("namespaces", None, "team")


def test_delete_collection_with_selector(store: Store) -> None:
    for i in range(4):
        store.create(
            "configmaps",
            {
                "metadata": {
                    "name": f"c{i}",
                    "namespace": "default",
                    "labels": {"even": str(i % 2 == 0).lower()},
                }
            },
        )
    deleted = store.delete_collection("configmaps", "default", label_selector="even=true")
    assert sorted(d["metadata"]["name"] for d in deleted) == ["c0", "c2"]
    assert [c["metadata"]["name"] for c in store.list("configmaps")] == ["c1", "c3"]


# -- admission hooks and subscribers ------------------------------------------------------------------------


def test_admission_hook_mutates_and_rejects(store: Store) -> None:
    calls: list[tuple[str, bool]] = []

    def kueue_like(op: str, new: dict, old: dict | None) -> dict:
        calls.append((op, old is not None))
        if op == "CREATE":
            new["spec"]["suspend"] = True
        if new["metadata"].get("labels", {}).get("kueue.x-k8s.io/queue-name") == "missing":
            raise StoreError(403, "Forbidden", "queue missing")
        return new

    store.add_admission_hook(RC, kueue_like)
    rc = store.create(RC, raycluster())
    assert rc["spec"]["suspend"] is True
    rc["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "missing"}
    with pytest.raises(StoreError) as err:
        store.update(RC, rc)
    assert err.value.code == 403
    with pytest.raises(StoreError):
        store.patch(RC, "default", "rc", {"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "missing"}}})
    assert calls == [("CREATE", False), ("UPDATE", True), ("UPDATE", True)]
    assert "labels" not in store.get(RC, "default", "rc")["metadata"]


def test_hook_cannot_change_server_owned_fields(store: Store) -> None:
    store.create(RC, raycluster())

    def evil(op: str, new: dict, old: dict | None) -> dict:
        new["metadata"]["uid"] = "evil"
        new["metadata"]["name"] = "other"
        return new

    store.add_admission_hook(RC, evil)
    out = store.patch(RC, "default", "rc", {"spec": {"rayVersion": "x"}})
    assert out["metadata"]["name"] == "rc" and out["metadata"]["uid"] != "evil"


def test_subscribers_called_after_commit_outside_lock(store: Store) -> None:
    seen: list[tuple[str, bool]] = []

    def callback(event: Event) -> None:
        # The lock is free: another thread can read the store at once.
        result: list[dict] = []

        def read() -> None:
            with contextlib.suppress(StoreError):
                result.append(store.get(RC, "default", "rc"))

        t = threading.Thread(target=read)
        t.start()
        t.join(5)
        seen.append((event.type, bool(result)))

    unsubscribe = store.subscribe(callback)
    rc = store.create(RC, raycluster())
    store.delete(RC, "default", "rc")
    unsubscribe()
    store.create(RC, raycluster())
    assert seen == [("ADDED", True), ("DELETED", False)]
    assert rc


def test_event_carries_old_and_new(store: Store) -> None:
    events: list[Event] = []
    store.subscribe(events.append)
    rc = store.create(RC, raycluster())
    rc["spec"]["rayVersion"] = "new"
    store.update(RC, rc)
    mod = events[-1]
    assert mod.type == "MODIFIED" and mod.key == RC
    assert mod.old is not None and mod.old["spec"]["rayVersion"] == "2.40.0"
    assert mod.object["spec"]["rayVersion"] == "new"


def test_record_event_creates_and_counts(store: Store) -> None:
    rc = store.create(RC, raycluster())
    ev = store.record_event(rc, type="Warning", reason="Pending", message="no quota", source="kueue")
    assert ev["involvedObject"]["uid"] == rc["metadata"]["uid"]
    assert ev["metadata"]["namespace"] == "default" and ev["source"] == {"component": "kueue"}
    again = store.record_event(rc, type="Warning", reason="Pending", message="no quota", source="kueue")
    assert again["count"] == 2 and again["metadata"]["name"] == ev["metadata"]["name"]
    selected = store.list("events", "default", field_selector=f"involvedObject.uid={rc['metadata']['uid']}")
    assert len(selected) == 1


def test_concurrent_writers_get_distinct_versions(store: Store) -> None:
    def work(i: int) -> None:
        for j in range(50):
            store.create("configmaps", {"metadata": {"name": f"c-{i}-{j}", "namespace": "default"}})

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    versions = [int(c["metadata"]["resourceVersion"]) for c in store.list("configmaps")]
    assert len(versions) == 200 == len(set(versions))


def test_a_failing_subscriber_does_not_fail_the_write(store: Store, caplog: pytest.LogCaptureFixture) -> None:
    def broken(event: Event) -> None:
        raise RuntimeError("controller bug")

    seen: list[str] = []
    store.subscribe(broken)
    store.subscribe(lambda e: seen.append(e.type))
    assert store.create(RC, raycluster())["metadata"]["name"] == "rc"
    assert seen == ["ADDED"]
    assert "controller bug" in caplog.text


def test_namespace_with_plain_contents_goes_at_once(store: Store) -> None:
    store.create("namespaces", {"metadata": {"name": "scratch"}})
    for name in ("a", "b"):
        store.create("configmaps", {"metadata": {"name": name, "namespace": "scratch"}})
    events: list[Event] = []
    store.subscribe(events.append)
    gone = store.delete("namespaces", None, "scratch")
    assert gone is not None and gone["metadata"]["name"] == "scratch"
    assert store.list("configmaps", "scratch") == []
    with pytest.raises(StoreError):
        store.get("namespaces", None, "scratch")
    deleted = [(e.key, e.object["metadata"]["name"]) for e in events if e.type == "DELETED"]
    assert deleted == [("configmaps", "a"), ("configmaps", "b"), ("namespaces", "scratch")]
    store.create("namespaces", {"metadata": {"name": "scratch"}})  # the name is free again


@pytest.mark.parametrize(
    ("meta", "field", "text"),
    [
        (
            {"labels": {"app": "ray head"}},
            "metadata.labels",
            'Invalid value: "ray head": a valid label must be',
        ),
        (
            {"labels": {"bad key!": "x"}},
            "metadata.labels",
            'Invalid value: "bad key!": name part must consist',
        ),
        ({"labels": {"Example.com/x": "y"}}, "metadata.labels", "prefix part a lowercase RFC 1123 subdomain"),
        ({"labels": {"a": "x" * 64}}, "metadata.labels", "must be no more than 63 characters"),
        ({"annotations": {"/x": "y"}}, "metadata.annotations", "prefix part"),
        (
            {"ownerReferences": [{"kind": "RayCluster", "name": "r", "uid": "u"}]},
            "metadata.ownerReferences.apiVersion",
            'Invalid value: "": version must not be empty',
        ),
    ],
)
def test_metadata_validation(store: Store, meta: dict, field: str, text: str) -> None:
    with pytest.raises(StoreError) as err:
        store.create("configmaps", {"metadata": {"name": "c", "namespace": "default", **meta}})
    assert err.value.code == 422
    assert err.value.causes[0]["field"] == field
    assert err.value.causes[0]["message"].startswith(text) or text in err.value.causes[0]["message"]


def test_label_checks_apply_to_updates_and_non_strings_are_400(store: Store) -> None:
    store.create("configmaps", {"metadata": {"name": "c", "namespace": "default", "labels": {"ok": "yes"}}})
    with pytest.raises(StoreError) as err:
        store.patch("configmaps", "default", "c", {"metadata": {"labels": {"ok": "no way"}}})
    assert err.value.code == 422
    with pytest.raises(StoreError) as err:
        store.patch("configmaps", "default", "c", {"metadata": {"labels": {"n": 1}}})
    assert err.value.code == 400
    assert store.get("configmaps", "default", "c")["metadata"]["labels"] == {"ok": "yes"}


@pytest.mark.parametrize(
    "body",
    [
        ["not", "an", "object"],
        {"metadata": "nope"},
        {"metadata": {"name": 5, "namespace": "default"}},
        {"metadata": {"name": "x", "namespace": "default", "resourceVersion": 7}},
    ],
)
def test_malformed_bodies_are_400(store: Store, body: object) -> None:
    with pytest.raises(StoreError) as err:
        store.create("configmaps", body)  # type: ignore[arg-type]
    assert err.value.code == 400
    with pytest.raises(StoreError) as err:
        store.update("configmaps", body)  # type: ignore[arg-type]
    assert err.value.code == 400


def test_read_without_copy_returns_frozen_snapshots(store: Store) -> None:
    store.create(RC, raycluster())
    shared = store.get(RC, "default", "rc", copy=False)
    assert store.list(RC, copy=False)[0] is shared
    store.patch(RC, "default", "rc", {"spec": {"rayVersion": "new"}})
    # A write stores a new dict: what a reader holds is never changed under it.
    assert shared["spec"]["rayVersion"] == "2.40.0"
    assert store.get(RC, "default", "rc", copy=False)["spec"]["rayVersion"] == "new"
