"""A full disk, a failing fsync, a damaged log and two planes on one directory lose no acknowledged write.

The disk faults are injected at the system-call boundary: ``os.write``/``os.fsync`` on the store's log
file descriptor write half of what they are given and then fail with ``ENOSPC``/``EIO``, exactly what a
filling disk does; every other file descriptor is left alone.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from rayqueue_local.apimachinery.patch import deep_copy
from rayqueue_local.apimachinery.status import HTTPError
from rayqueue_local.apiserver.http import parse_request
from rayqueue_local.apiserver.rest import RestAPI
from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_local.storage import persistence
from rayqueue_local.storage.lock import StateDirectoryInUseError
from rayqueue_local.storage.persistence import _QUARANTINE, _SNAPSHOT, _WAL, StorageUnavailableError
from rayqueue_local.storage.store import Store, StoreError

CM = "configmaps"


def cm(name: str, value: str = "v") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"}, "data": {"k": value}}


def names(store: Store) -> list[str]:
    return sorted(o["metadata"]["name"] for o in store.list(CM))


@contextmanager
def disk_full(store: Store, monkeypatch: pytest.MonkeyPatch, *, fail: str = "write") -> Iterator[None]:
    """While active, the log's writes (or fsyncs) fail the way a full disk makes them fail."""
    assert store._persistence is not None
    wal_fd = store._persistence._wal_fd
    real_write, real_fsync = os.write, os.fsync

    def write(fd: int, data: Any) -> int:
        if fd != wal_fd:
            return real_write(fd, data)
        half = bytes(data[: max(1, len(data) // 2)])
        real_write(fd, half)  # a torn record reaches the file before the error
        raise OSError(errno.ENOSPC, "No space left on device")

    def fsync(fd: int) -> None:
        if fd != wal_fd:
            return real_fsync(fd)
        raise OSError(errno.EIO, "Input/output error")

    with monkeypatch.context() as m:
        if fail == "write":
            m.setattr(persistence.os, "write", write)
        else:
            m.setattr(persistence.os, "fsync", fsync)
        yield


@pytest.mark.parametrize("fail", ["write", "fsync"])
def test_full_disk_refuses_the_write_and_keeps_every_acknowledged_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail: str
) -> None:
    store = Store(state_dir=tmp_path)
    for name in ("a", "b", "c"):
        store.create(CM, cm(name))
    b_before = store.get(CM, "default", "b")
    with disk_full(store, monkeypatch, fail=fail):
        with pytest.raises(StorageUnavailableError) as err:
            store.create(CM, cm("d"))
        assert err.value.code == 507 and str(tmp_path) in str(err.value)
        changed = deep_copy(b_before)
        changed["data"]["k"] = "changed"
        with pytest.raises(StoreError):
            store.update(CM, changed)
        with pytest.raises(StoreError):
            store.delete(CM, "default", "a")
        # Nothing half-made in memory: the refused writes changed nothing that can be read.
        assert names(store) == ["a", "b", "c"]
        assert store.get(CM, "default", "b") == b_before
    store.create(CM, cm("e"))  # space is back: the next write appends to an intact log
    rv = store.resource_version
    store.close()

    again = Store(state_dir=tmp_path)
    assert names(again) == ["a", "b", "c", "e"]
    assert again.get(CM, "default", "b") == b_before
    assert again.resource_version == rv
    assert again.recovery_notes == []  # no torn bytes were left in the log to repair
    again.close()


def test_full_disk_during_compaction_keeps_the_log_and_retries_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(state_dir=tmp_path, fsync=False)
    p = store._persistence
    assert p is not None
    p.compact_bytes = 1_500
    real_replace = os.replace
    failures = []

    def replace(src: Any, dst: Any) -> None:
        if Path(dst).name == _SNAPSHOT and len(failures) < 2:
            failures.append(dst)
            raise OSError(errno.ENOSPC, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(persistence.os, "replace", replace)
    for i in range(30):
        store.create(CM, cm(f"c{i}", "x" * 40))  # every write is acknowledged, compaction or not
    assert len(failures) == 2  # it failed, was postponed, failed again, then succeeded
    assert not list(tmp_path.glob("*.tmp"))  # the failed snapshots' temp files are gone
    assert (tmp_path / _WAL).stat().st_size < 1_500
    store.close()
    again = Store(state_dir=tmp_path)
    assert again.count(CM) == 30
    again.close()


def test_full_disk_at_start_still_loads_the_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(state_dir=tmp_path)
    store.create(CM, cm("a"))
    store.close()

    def no_space(src: Any, dst: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(persistence.os, "replace", no_space)  # the start-up compaction cannot be written
        full = Store(state_dir=tmp_path)
        assert names(full) == ["a"]
        full.create(CM, cm("b"))  # appended to the kept log
        full.close()
    assert names(Store(state_dir=tmp_path)) == ["a", "b"]


def test_full_disk_is_a_507_status_from_the_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(state_dir=tmp_path)
    api = RestAPI(store)
    body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", **cm("d")}).encode()
    headers = {"Content-Type": "application/json"}
    with disk_full(store, monkeypatch), pytest.raises(HTTPError) as err:
        api.handle(parse_request("POST", "/api/v1/namespaces/default/configmaps", {}), {}, headers, body)
    assert err.value.code == 507
    assert err.value.body["kind"] == "Status" and "not stored" in err.value.body["message"]
    listed = api.handle(parse_request("GET", "/api/v1/namespaces/default/configmaps", {}), {}, {}, b"")
    items = json.loads(listed.body)["items"] if isinstance(listed.body, bytes) else listed.body["items"]
    assert listed.code == 200 and items == []
    store.close()


def test_damaged_record_in_the_middle_loses_nothing_around_it(tmp_path: Path) -> None:
    store = Store(state_dir=tmp_path)
    for name in ("a", "b", "c", "d"):
        store.create(CM, cm(name))
    store.close()
    lines = (tmp_path / _WAL).read_bytes().splitlines(keepends=True)
    damaged = b'{"rv": 7, "op": "put", "key": "configmaps", "obj": {\x00\x00 bit rot\n'
    index = next(i for i, line in enumerate(lines) if b'"name":"b"' in line)
    lines[index] = damaged
    (tmp_path / _WAL).write_bytes(b"".join(lines))

    again = Store(state_dir=tmp_path)
    assert names(again) == ["a", "c", "d"]  # everything intact after the damage is there too
    assert len(again.recovery_notes) == 1 and "damaged record" in again.recovery_notes[0]
    assert (tmp_path / _QUARANTINE).read_bytes() == damaged
    again.close()
    assert names(Store(state_dir=tmp_path)) == ["a", "c", "d"]  # and stays there after compaction


def test_second_plane_on_the_same_state_directory_is_refused(tmp_path: Path) -> None:
    first = LocalControlPlane(state_dir=tmp_path, controllers=[]).start()
    try:
        second = LocalControlPlane(state_dir=tmp_path, controllers=[])
        with pytest.raises(StateDirectoryInUseError) as err:
            second.start()
        assert str(tmp_path) in str(err.value) and f"pid {os.getpid()}" in str(err.value)
        first.apply([{"apiVersion": "v1", "kind": "ConfigMap", **cm("still-writable")}])
    finally:
        first.stop()
    third = LocalControlPlane(state_dir=tmp_path, controllers=[]).start()  # released by stop()
    try:
        assert names(third.store) == ["still-writable"]
    finally:
        third.stop()


def test_state_files_are_private(tmp_path: Path) -> None:
    old_umask = os.umask(0o022)
    try:
        state = tmp_path / "state"
        plane = LocalControlPlane(state_dir=state, controllers=[]).start()
        plane.apply(
            [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"}}]
        )
        plane.stop()
        LocalControlPlane(state_dir=state, controllers=[]).start().stop()  # writes the snapshot
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    loose = [
        f"{path} {oct(stat.S_IMODE(path.stat().st_mode))}"
        for path in state.rglob("*")
        if path.is_file() and path.suffix != ".crt" and stat.S_IMODE(path.stat().st_mode) & 0o077
    ]
    assert loose == []
    assert (state / "objects" / _SNAPSHOT).exists()


def test_disk_full_under_concurrent_http_writers_acknowledges_only_what_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end: 4 writers over HTTPS (the ``kubernetes`` client) while the disk fills and frees.

    Each create is either a ``201`` (then it survives a restart) or a ``507`` Status (then it is
    nowhere, now or after the restart); reads keep answering while the disk is full.
    """
    state = tmp_path / "state"
    plane = LocalControlPlane(state_dir=state, controllers=[]).start()
    api = plane.api_client()
    core = client.CoreV1Api(api)
    lock, stop = threading.Lock(), threading.Event()
    attempted: set[str] = set()
    acked: set[str] = set()
    refused: set[str] = set()
    other: list[str] = []

    def write(writer: int) -> None:
        i = 0
        while not stop.is_set():
            name = f"w{writer}-{i}"
            i += 1
            with lock:
                attempted.add(name)
            try:
                core.create_namespaced_config_map("default", {"metadata": {"name": name}})
            except ApiException as err:
                body = json.loads(err.body or "{}")
                with lock:
                    if err.status == 507 and body.get("reason") and "not stored" in body.get("message", ""):
                        refused.add(name)
                    else:
                        other.append(f"{err.status} {body.get('message')}")
                continue
            with lock:
                acked.add(name)

    def wait_for(what: str, check: Any) -> None:
        for _ in range(6000):
            with lock:
                if check():
                    return
            stop.wait(0.01)
        raise AssertionError(f"{what} did not happen")

    threads = [threading.Thread(target=write, args=(w,), daemon=True) for w in range(4)]
    for thread in threads:
        thread.start()
    try:
        wait_for("40 writes", lambda: len(acked) >= 40)
        with disk_full(plane.store, monkeypatch):
            wait_for("20 refusals", lambda: len(refused) >= 20)
            with lock:
                acked_so_far = set(acked)
            listed = {c.metadata.name for c in core.list_namespaced_config_map("default").items}
            assert acked_so_far <= listed and not listed & refused  # reads answer, from what was stored
        before = len(acked)
        wait_for("40 writes after the disk freed", lambda: len(acked) >= before + 40)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        api.close()
        plane.stop()
    assert other == []
    again = LocalControlPlane(state_dir=state, controllers=[]).start()
    try:
        present = {o["metadata"]["name"] for o in again.store.list(CM, "default")}
        present.discard("kube-root-ca.crt")
    finally:
        again.stop()
    assert acked <= present, sorted(acked - present)[:5]
    assert not present & refused, sorted(present & refused)[:5]
    assert present <= attempted
