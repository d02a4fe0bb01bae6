"""The local API server: time per request, list of 1,000 RayClusters, watch latency, memory.

Targets (issue 3): get and create <= 2 ms median server time; list of 1,000 RayClusters < 200 ms;
a watch event delivered < 50 ms after the write; memory for 10,000 stored objects (reported).

A list encodes each object once per resourceVersion (``local/jsoncache.py``): the first list
of a collection pays for every object, later ones only for what changed; both are printed.

Measured two ways: the client-side round trip over one raw keep-alive HTTPS connection
(``http.client``, no kubernetes-client overhead), and the in-server handling time (from parsed
headers to the last byte written, :meth:`APIServer.record_timings`). The control plane validates
against ../shared/crds (as the tests do) and runs no controllers. Creates are real RayClusters
that pass the upstream CRD schema.

Run: ``python benchmarks/bench_apiserver.py [--crds ../shared/crds]``
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import queue
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

from rayqueue_local import LocalControlPlane

NS = "bench"
GETS = 2000
CREATES = 1000  # the first 1,000 RayClusters are also the list benchmark's
LISTS = 20
WATCH_WRITES = 100
MEMORY_OBJECTS = 10_000


def raycluster(name: str) -> dict[str, Any]:
    container = {"name": "ray", "image": "rayproject/ray:2.40.0", "resources": {"limits": {"cpu": "2"}}}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {
            "rayVersion": "2.40.0",
            "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [container]}}},
            "workerGroupSpecs": [
                {
                    "groupName": "gpu",
                    "replicas": 1,
                    "minReplicas": 0,
                    "maxReplicas": 2,
                    "rayStartParams": {},
                    "template": {"spec": {"containers": [container]}},
                }
            ],
        },
    }


class Conn:
    """One keep-alive HTTPS connection that trusts the control plane's CA."""

    def __init__(self, cp: LocalControlPlane) -> None:
        host, port = cp.server.removeprefix("https://").split(":")
        ctx = __import__("ssl").create_default_context(cafile=str(cp.ca_cert_path))
        self.conn = http.client.HTTPSConnection(host, int(port), context=ctx)
        self.headers = {"Authorization": f"Bearer {cp.token}", "Content-Type": "application/json"}

    def call(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes, float]:
        t0 = time.perf_counter()
        self.conn.request(method, path, body=body, headers=self.headers)
        resp = self.conn.getresponse()
        data = resp.read()
        return resp.status, data, time.perf_counter() - t0


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.2f} ms"


def server_times(cp: LocalControlPlane, method: str, start: int) -> list[float]:
    timings = cp.api_server.timings
    assert timings is not None
    return [t for m, _p, t in list(timings)[start:] if m == method]


def report(name: str, client: list[float], server: list[float], target: float | None) -> None:
    med_c, med_s = statistics.median(client), statistics.median(server) if server else float("nan")
    p95_c = statistics.quantiles(client, n=20)[-1] if len(client) >= 20 else max(client)
    verdict = "" if target is None else ("  OK" if med_s <= target else "  MISSED")
    goal = "" if target is None else f"  (target <= {target * 1000:.0f} ms server median)"
    print(f"{name:<28} client median {ms(med_c)}  p95 {ms(p95_c)}  server median {ms(med_s)}{goal}{verdict}")


def bench_requests(cp: LocalControlPlane, conn: Conn) -> None:
    base = f"/apis/ray.io/v1/namespaces/{NS}/rayclusters"
    bodies = [json.dumps(raycluster(f"rc-{i:05d}")).encode() for i in range(CREATES)]
    mark = len(cp.api_server.timings or ())
    create_c = []
    for body in bodies:
        status, _, dt = conn.call("POST", base, body)
        assert status == 201, status
        create_c.append(dt)
    report("create RayCluster", create_c, server_times(cp, "POST", mark), 0.002)

    mark = len(cp.api_server.timings or ())
    get_c = []
    for i in range(GETS):
        status, _, dt = conn.call("GET", f"{base}/rc-{i % CREATES:05d}")
        assert status == 200
        get_c.append(dt)
    report("get RayCluster", get_c, server_times(cp, "GET", mark), 0.002)

    mark = len(cp.api_server.timings or ())
    list_c = []
    for _ in range(LISTS):
        status, data, dt = conn.call("GET", base)
        assert status == 200
        list_c.append(dt)
    n = len(json.loads(data)["items"])
    print(f"  ({n} RayClusters per list, {len(data) / 1e6:.1f} MB of JSON)")
    report(f"list {n} RayClusters", list_c, server_times(cp, "GET", mark), 0.200)
    print(f"{'  first (cold) list':<28} client {ms(list_c[0])}  (every object encoded; later lists reuse it)")

    from kubernetes import client

    api = client.CustomObjectsApi(cp.api_client())
    t0 = time.perf_counter()
    api.list_namespaced_custom_object("ray.io", "v1", NS, "rayclusters")
    print(
        f"{'  same, kubernetes client':<28} one call {ms(time.perf_counter() - t0)} (incl. its JSON decoding)"
    )


def bench_watch(cp: LocalControlPlane, conn: Conn) -> None:
    """Latency from the start of a write (PATCH on another connection) to the event line arriving."""
    host, port = cp.server.removeprefix("https://").split(":")
    ctx = __import__("ssl").create_default_context(cafile=str(cp.ca_cert_path))
    watcher = http.client.HTTPSConnection(host, int(port), context=ctx)
    status, _, _ = conn.call("GET", f"/api/v1/namespaces/{NS}/configmaps")
    cm = json.dumps({"metadata": {"name": "w"}, "data": {"i": "0"}}).encode()
    status, created, _ = conn.call("POST", f"/api/v1/namespaces/{NS}/configmaps", cm)
    rv = json.loads(created)["metadata"]["resourceVersion"]
    watcher.request(
        "GET",
        f"/api/v1/namespaces/{NS}/configmaps?watch=true&resourceVersion={rv}",
        headers={"Authorization": f"Bearer {cp.token}"},
    )
    resp = watcher.getresponse()
    arrivals: queue.Queue[float] = queue.Queue()

    def read() -> None:
        while True:
            line = resp.readline()
            if not line:
                return
            arrivals.put(time.perf_counter())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    latencies = []
    for i in range(WATCH_WRITES):
        patch = json.dumps({"data": {"i": str(i + 1)}}).encode()
        t0 = time.perf_counter()
        conn.conn.request(
            "PATCH",
            f"/api/v1/namespaces/{NS}/configmaps/w",
            body=patch,
            headers={**conn.headers, "Content-Type": "application/merge-patch+json"},
        )
        conn.conn.getresponse().read()
        latencies.append(arrivals.get(timeout=10) - t0)
    med, worst = statistics.median(latencies), max(latencies)
    verdict = "OK" if med < 0.050 else "MISSED"
    print(f"{'watch event after a write':<28} median {ms(med)}  max {ms(worst)}  (target < 50 ms)  {verdict}")
    cp.faults.end_watches()  # the server ends the stream; the reader sees EOF
    reader.join(timeout=10)
    watcher.close()


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def bench_memory(crd_dir: str) -> None:
    import gc

    with LocalControlPlane(crd_dir=crd_dir, controllers=[]) as cp:
        cp.store.create("namespaces", {"metadata": {"name": "mem"}})
        gc.collect()
        before = rss_bytes()
        for i in range(MEMORY_OBJECTS):
            obj = raycluster(f"m-{i:05d}")
            obj["metadata"]["namespace"] = "mem"
            cp.store.create("rayclusters.ray.io", obj)
        gc.collect()
        delta = rss_bytes() - before
        size = len(json.dumps(raycluster("m-00000")))
        print(
            f"{'memory, 10,000 RayClusters':<28} RSS +{delta / 2**20:.1f} MiB  "
            f"({delta / MEMORY_OBJECTS / 1024:.1f} KiB per object of {size} bytes of JSON, "
            "event history included)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = os.environ.get("RAYQUEUE_CRDS_DIR") or str(
        Path(__file__).resolve().parents[2] / "shared" / "crds"
    )
    parser.add_argument("--crds", default=default)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, CRDs from {args.crds}")
    with LocalControlPlane(crd_dir=args.crds, controllers=[]) as cp:
        cp.api_server.record_timings()
        cp.store.create("namespaces", {"metadata": {"name": NS}})
        conn = Conn(cp)
        bench_requests(cp, conn)
        bench_watch(cp, conn)
        conn.conn.close()
    bench_memory(args.crds)


if __name__ == "__main__":
    main()
