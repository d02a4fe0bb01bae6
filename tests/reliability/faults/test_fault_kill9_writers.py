"""``kill -9`` of the control plane under 50 concurrent writers loses no acknowledged write.

50 threads create ConfigMaps with unique names through the real ``kubernetes`` client, one shared
keep-alive pool, and record each name before sending (attempted) and after its ``201`` (acknowledged).
The plane (``rayqueue local up``, fsynced log) is killed with SIGKILL once a given number of writes were
acknowledged, then started again on the same state directory: every acknowledged ConfigMap is there,
and nothing is there that was not attempted. Writes in flight at the kill may land either way.
"""

from __future__ import annotations

import threading

import pytest
from kubernetes import client as k8s
from reliability_planes import PlaneProcess, eventually

WRITERS = 50


class _Ledger:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.attempted: set[str] = set()
        self.acknowledged: set[str] = set()
        self.failures: list[str] = []


def _write(core: k8s.CoreV1Api, ns: str, writer: int, ledger: _Ledger, stop: threading.Event) -> None:
    i = 0
    while not stop.is_set():
        name = f"w{writer}-{i}"
        i += 1
        with ledger.lock:
            ledger.attempted.add(name)
        try:
            created = core.create_namespaced_config_map(
                ns, {"metadata": {"name": name}, "data": {"writer": str(writer)}}, _request_timeout=(5, 60)
            )
        except Exception as err:  # the plane died under us: this writer is done
            with ledger.lock:
                ledger.failures.append(type(err).__name__)
            return
        assert created.metadata.name == name  # a 201 with the object: acknowledged
        with ledger.lock:
            ledger.acknowledged.add(name)


@pytest.mark.slow
@pytest.mark.parametrize("kill_after", [25, 250, 1000])
def test_kill_9_under_50_writers_loses_no_acknowledged_write(
    crash_plane: PlaneProcess, crash_ns: str, kill_after: int
) -> None:
    api = crash_plane.kube_client(pool=WRITERS)
    core = k8s.CoreV1Api(api)
    ledger, stop = _Ledger(), threading.Event()
    threads = [
        threading.Thread(target=_write, args=(core, crash_ns, w, ledger, stop), daemon=True)
        for w in range(WRITERS)
    ]
    for thread in threads:
        thread.start()
    try:
        eventually(lambda: len(ledger.acknowledged) >= kill_after, timeout=300, what=f"{kill_after} writes")
        crash_plane.kill()  # SIGKILL: no clean shutdown, no final compaction
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=120)
        api.close()
    assert len(ledger.failures) >= 1  # the kill did hit writers in flight
    crash_plane.start()
    check = crash_plane.kube_client()
    try:
        present = {c.metadata.name for c in k8s.CoreV1Api(check).list_namespaced_config_map(crash_ns).items}
    finally:
        check.close()
    present.discard("kube-root-ca.crt")
    lost = ledger.acknowledged - present
    assert not lost, f"{len(lost)} acknowledged writes lost, e.g. {sorted(lost)[:5]}"
    assert present <= ledger.attempted, sorted(present - ledger.attempted)[:5]
    in_flight = present - ledger.acknowledged  # stored, but the 201 never reached the writer
    assert len(in_flight) <= WRITERS
