"""Many clients at once: parallel keep-alive connections, optimistic concurrency under contention."""

from __future__ import annotations

import json
import threading
from typing import Any

from kubernetes import client
from kubernetes.client.rest import ApiException

THREADS = 8
EACH = 20


def test_parallel_creates_get_unique_resource_versions(cp: Any, namespace: str) -> None:
    made: list[str] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def worker(t: int) -> None:
        api = client.CoreV1Api(cp.api_client())  # one connection pool per thread, like separate programs
        try:
            for i in range(EACH):
                cm = api.create_namespaced_config_map(namespace, {"metadata": {"name": f"t{t}-{i}"}})
                with lock:
                    made.append(cm.metadata.resource_version)
        except BaseException as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert errors == []
    assert len(made) == THREADS * EACH and len(set(made)) == len(made)
    listed = client.CoreV1Api(cp.api_client()).list_namespaced_config_map(namespace)
    assert len(listed.items) == THREADS * EACH


def test_read_modify_write_under_contention_loses_no_update(cp: Any, namespace: str) -> None:
    api0 = client.CoreV1Api(cp.api_client())
    api0.create_namespaced_config_map(namespace, {"metadata": {"name": "counter"}, "data": {"n": "0"}})
    conflicts = []

    def worker() -> None:
        api = client.CoreV1Api(cp.api_client())
        done = 0
        while done < EACH:
            cm = api.read_namespaced_config_map("counter", namespace)
            cm.data["n"] = str(int(cm.data["n"]) + 1)
            try:
                api.replace_namespaced_config_map("counter", namespace, cm)
                done += 1
            except ApiException as err:
                assert err.status == 409 and json.loads(err.body)["reason"] == "Conflict"
                conflicts.append(1)

    threads = [threading.Thread(target=worker) for _ in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    final = api0.read_namespaced_config_map("counter", namespace)
    assert final.data["n"] == str(THREADS * EACH)  # every successful write counted once
