"""State that survives a restart, and crashes mid-write that lose nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rayqueue_local.storage.persistence import _SNAPSHOT, _WAL, Persistence
from rayqueue_local.storage.store import Store, StoreError

RC = "rayclusters.ray.io"


def rc(name: str) -> dict:
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {"rayVersion": "2.40.0"}}


def test_round_trip_keeps_objects_uids_and_versions(tmp_path: Path) -> None:
    store = Store(state_dir=tmp_path)
    a = store.create(RC, rc("a"))
    b = store.create(RC, rc("b"))
    b["spec"]["rayVersion"] = "2.41.0"
    b = store.update(RC, b)
    b["status"] = {"state": "ready"}
    b = store.update_status(RC, b)
    store.delete(RC, "default", "a")
    store.create("namespaces", {"metadata": {"name": "team"}})
    rv = store.resource_version
    store.close()

    again = Store(state_dir=tmp_path)
    assert again.resource_version == rv
    assert [o["metadata"]["name"] for o in again.list(RC)] == ["b"]
    assert again.get(RC, "default", "b") == b
    assert again.get("namespaces", None, "team")["status"] == {"phase": "Active"}
    # The counter continues; old versions are gone from the watch history.
    c = again.create(RC, rc("c"))
    assert int(c["metadata"]["resourceVersion"]) == int(rv) + 1
    with pytest.raises(StoreError) as err:
        again.watch(RC, resource_version=a["metadata"]["resourceVersion"])
    assert err.value.code == 410
    # GC indices are rebuilt too.
    owner = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "name": "c", "uid": c["metadata"]["uid"]}
    again.create("pods", {"metadata": {"name": "p", "namespace": "default", "ownerReferences": [owner]}})
    again.close()
    third = Store(state_dir=tmp_path)
    third.delete(RC, "default", "c")
    assert third.list("pods") == []
    third.close()


def test_truncated_log_record_is_ignored(tmp_path: Path) -> None:
    store = Store(state_dir=tmp_path)
    store.create(RC, rc("kept"))
    store.close()
    with open(tmp_path / _WAL, "ab") as fh:  # a crash in the middle of appending the next record
        fh.write(b'{"rv": 999, "op": "put", "key": "rayclusters.ray.io", "obj": {"metad')
    again = Store(state_dir=tmp_path)
    assert [o["metadata"]["name"] for o in again.list(RC)] == ["kept"]
    assert int(again.resource_version) < 999
    again.create(RC, rc("after"))  # appending after recovery works and is readable
    again.close()
    assert {o["metadata"]["name"] for o in Store(state_dir=tmp_path).list(RC)} == {"kept", "after"}


def test_truncated_temp_snapshot_is_ignored(tmp_path: Path) -> None:
    store = Store(state_dir=tmp_path)
    store.create(RC, rc("kept"))
    store.close()
    Store(state_dir=tmp_path).close()  # compaction: everything is in the snapshot now
    (tmp_path / f".{_SNAPSHOT}.12345.tmp").write_bytes(b'{"format": 1, "resourceVersion": 10')
    again = Store(state_dir=tmp_path)
    assert [o["metadata"]["name"] for o in again.list(RC)] == ["kept"]
    assert not list(tmp_path.glob("*.tmp"))
    again.close()


def test_crash_between_snapshot_and_log_truncation(tmp_path: Path) -> None:
    store = Store(state_dir=tmp_path)
    store.create(RC, rc("a"))
    store.create(RC, rc("b"))
    store.close()
    wal = (tmp_path / _WAL).read_bytes()
    Store(state_dir=tmp_path).close()  # compacts: snapshot has a and b, log is empty
    (tmp_path / _WAL).write_bytes(wal)  # as if the crash happened before the log was emptied
    again = Store(state_dir=tmp_path)
    assert [o["metadata"]["name"] for o in again.list(RC)] == ["a", "b"]
    again.close()


def test_snapshot_is_compact_json(tmp_path: Path) -> None:
    store = Store(state_dir=tmp_path)
    store.create(RC, rc("a"))
    store.close()
    Store(state_dir=tmp_path).close()
    data = json.loads((tmp_path / _SNAPSHOT).read_text())
    assert data["format"] == 1 and RC in data["objects"]
    assert (tmp_path / _WAL).read_bytes() == b""


def test_persistence_requires_load(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError):
        Persistence(tmp_path).put("pods", {}, 1)


def test_log_is_compacted_when_it_grows(tmp_path: Path) -> None:
    p = Persistence(tmp_path, fsync=False, compact_bytes=200)
    p.load()
    obj = {"metadata": {"name": "c", "namespace": "default"}, "data": {"k": "v" * 50}}
    p.put("configmaps", obj, 1)
    assert not p.should_compact()
    p.put("configmaps", obj, 2)
    assert p.should_compact()
    p.compact(2, {"configmaps": [obj], "secrets": []})
    assert not p.should_compact() and (tmp_path / _WAL).read_bytes() == b""
    p.delete("configmaps", ("default", "c"), 3)
    p.close()
    assert Persistence(tmp_path).load() == (3, {})


def test_store_compacts_a_long_log(tmp_path: Path) -> None:
    store = Store(state_dir=tmp_path, fsync=False)
    assert store._persistence is not None
    store._persistence.compact_bytes = 2_000  # a long-running store, in miniature
    for i in range(20):
        store.create(
            "configmaps", {"metadata": {"name": f"c{i}", "namespace": "default"}, "data": {"i": str(i)}}
        )
    assert (tmp_path / _WAL).stat().st_size < 2_000
    rv = store.resource_version
    store.close()
    again = Store(state_dir=tmp_path)
    assert again.resource_version == rv and again.count("configmaps") == 20
    again.close()
