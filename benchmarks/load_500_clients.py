"""Load: 500 concurrent clients doing mixed list / watch / server-side apply for 60 s against one
``rayqueue local up``. A benchmark, not a test: it prints figures and asserts nothing.

The control plane runs as its own process (``python -m rayqueue_sdk.cli.main local up --no-ray
--no-keda --no-prometheus``, its state directory in a temporary directory, the log fsynced as a
user's is), so that its memory can be read honestly from ``/proc/<pid>/status`` (``VmRSS``, and its
thread count: the server runs one thread per connection) at the start, every half second, and at
the end. The clients are threads spread over a few client processes (``--procs``), each with its own
keep-alive HTTPS connection (``http.client``: no client library in the measured path):

* a tenth of them are watchers: each lists the ConfigMaps of one namespace and watches them from
  that resourceVersion, reconnecting when the server ends the stream (``timeoutSeconds=30``); the
  delay from a write to its event reaching a watcher is measured (the writers stamp the time);
* the others loop without pause over a 50/50 mix of a LIST (their own ConfigMaps, by label
  selector) and a server-side apply (``PATCH`` ``application/apply-patch+yaml``, ``force=true``)
  of one of their 10 ConfigMaps, so the data set stops growing after the first seconds and memory
  growth after that is the server's own.

Reported: p50/p99 latency per kind of request, throughput, errors by kind, the server's RSS and
threads at the start / after the warm-up / peak / at the end, and the open watches.

Run: ``python benchmarks/load_500_clients.py [--clients 500] [--seconds 60] [--procs 4]``
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import multiprocessing as mp
import os
import re
import select
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

NAMESPACES = 10
OBJECTS_PER_CLIENT = 10
WATCH_SECONDS = 30


# -- the control plane process ---------------------------------------------------------------------
def start_plane(root: Path, crds: str | None) -> tuple[subprocess.Popen[str], str, str, str]:
    """``rayqueue local up`` in a subprocess; returns (process, server URL, admin token, CA file)."""
    cmd = [sys.executable, "-m", "rayqueue_sdk.cli.main", "local", "up", "--state-dir", str(root / "state")]
    cmd += ["--kubeconfig", str(root / "kubeconfig"), "--no-ray", "--no-keda", "--no-prometheus"]
    if crds:
        cmd += ["--crds", crds]
    env = {**os.environ, "RAYQUEUE_HOME": str(root / "home")}
    with open(root / "plane.log", "w") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=log, text=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if select.select([proc.stdout], [], [], 0.5)[0]:
            match = re.match(r"Local control plane at (https://\S+)", proc.stdout.readline())
            if match:
                state = root / "state"
                token = json.loads((state / "tokens.json").read_text())["admin"]
                return proc, match.group(1), token, str(state / "tls" / "ca.crt")
    raise SystemExit(f"the control plane did not start: {(root / 'plane.log').read_text()[-2000:]}")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of ``pid`` so far, from ``/proc/<pid>/stat``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_status(pid: int) -> tuple[float, int]:
    """(RSS in MiB, threads) of ``pid``, from ``/proc/<pid>/status``."""
    rss, threads = 0.0, 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024
        elif line.startswith("Threads:"):
            threads = int(line.split()[1])
    return rss, threads


# -- the clients -------------------------------------------------------------------------------------
class Client:
    """One keep-alive HTTPS connection; reconnects after a failure."""

    def __init__(self, server: str, token: str, ctx: ssl.SSLContext) -> None:
        host, port = server.removeprefix("https://").split(":")
        self.host, self.port, self.ctx = host, int(port), ctx
        self.auth = f"Bearer {token}"
        self.conn: http.client.HTTPSConnection | None = None

    def connect(self, timeout: float = 60) -> http.client.HTTPSConnection:
        if self.conn is None:
            self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=timeout)
        return self.conn

    def reset(self) -> None:
        if self.conn is not None:
            self.conn.close()
        self.conn = None

    def request(
        self, method: str, path: str, body: bytes | None = None, content_type: str = "application/json"
    ) -> tuple[int, bytes]:
        conn = self.connect()
        conn.request(
            method, path, body=body, headers={"Authorization": self.auth, "Content-Type": content_type}
        )
        resp = conn.getresponse()
        return resp.status, resp.read()


class Tally:
    """What one client process measured (merged by the parent)."""

    def __init__(self) -> None:
        self.latency: dict[str, list[float]] = {"list": [], "apply": [], "watch-open": [], "watch-event": []}
        self.errors: Counter[str] = Counter()
        self.events = 0


def namespace_of(cid: int) -> str:
    """Client ``cid``'s namespace: every namespace gets writers and watchers (every tenth is one)."""
    return f"load-{(cid + cid // 10) % NAMESPACES}"


def _error_name(err: BaseException) -> str:
    return type(err).__name__


def writer(client: Client, cid: int, stop: threading.Event, tally: Tally, lock: threading.Lock) -> None:
    ns = namespace_of(cid)
    n = 0
    while not stop.is_set():
        n += 1
        if n % 2:
            kind = "list"
            method, path, body, ctype = (
                "GET",
                f"/api/v1/namespaces/{ns}/configmaps?labelSelector=client%3D{cid}",
                None,
                "application/json",
            )
        else:
            kind = "apply"
            name = f"c{cid}-{n % OBJECTS_PER_CLIENT}"
            obj = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": ns, "labels": {"client": str(cid)}},
                "data": {"t": repr(time.time()), "n": str(n)},
            }
            method, path, body, ctype = (
                "PATCH",
                f"/api/v1/namespaces/{ns}/configmaps/{name}?fieldManager=load-{cid}&force=true",
                json.dumps(obj).encode(),
                "application/apply-patch+yaml",
            )
        started = time.perf_counter()
        try:
            status, _ = client.request(method, path, body, ctype)
        except Exception as err:  # counted by kind; the client reconnects and goes on
            client.reset()
            with lock:
                tally.errors[f"{kind}: {_error_name(err)}"] += 1
            stop.wait(0.2)
            continue
        elapsed = time.perf_counter() - started
        with lock:
            if status >= 400:
                tally.errors[f"{kind}: HTTP {status}"] += 1
            else:
                tally.latency[kind].append(elapsed)


def watcher(
    client: Client, cid: int, stop: threading.Event, tally: Tally, lock: threading.Lock, open_watches: Any
) -> None:
    ns = namespace_of(cid)
    rv = ""
    while not stop.is_set():
        try:
            if not rv:
                status, data = client.request("GET", f"/api/v1/namespaces/{ns}/configmaps?limit=1")
                if status != 200:
                    with lock:
                        tally.errors[f"watch-list: HTTP {status}"] += 1
                    stop.wait(0.5)
                    continue
                rv = json.loads(data)["metadata"]["resourceVersion"]
            conn = client.connect(timeout=WATCH_SECONDS + 30)
            started = time.perf_counter()
            conn.request(
                "GET",
                f"/api/v1/namespaces/{ns}/configmaps?watch=true&resourceVersion={rv}"
                f"&timeoutSeconds={WATCH_SECONDS}&allowWatchBookmarks=true",
                headers={"Authorization": client.auth},
            )
            resp = conn.getresponse()
            opened = time.perf_counter() - started
            if resp.status != 200:
                resp.read()
                with lock:
                    tally.errors[f"watch-open: HTTP {resp.status}"] += 1
                rv = ""
                continue
            with lock:
                tally.latency["watch-open"].append(opened)
            with open_watches.get_lock():
                open_watches.value += 1
            try:
                while not stop.is_set():
                    line = resp.readline()
                    if not line:
                        break  # the server ended the stream: resume from rv
                    now = time.time()
                    event = json.loads(line)
                    obj = event.get("object") or {}
                    if event.get("type") == "ERROR":
                        rv = ""  # 410: list again
                        break
                    rv = (obj.get("metadata") or {}).get("resourceVersion") or rv
                    stamp = (obj.get("data") or {}).get("t")
                    if event.get("type") in ("ADDED", "MODIFIED") and stamp:
                        with lock:
                            tally.latency["watch-event"].append(now - float(stamp))
                            tally.events += 1
            finally:
                with open_watches.get_lock():
                    open_watches.value -= 1
            if stop.is_set():
                client.reset()  # do not wait for the stream's end
        except Exception as err:  # counted by kind; the client reconnects and goes on
            client.reset()
            if stop.is_set():
                return  # the stream was cut to end the run
            with lock:
                tally.errors[f"watch: {_error_name(err)}"] += 1
            stop.wait(0.2)


def client_process(
    ids: list[int], server: str, token: str, ca: str, seconds: float, open_watches: Any, out: Any, go: Any
) -> None:
    """Run clients ``ids`` (every tenth a watcher) for ``seconds`` after ``go``; put the tally on ``out``."""
    ctx = ssl.create_default_context(cafile=ca)
    tally, lock, stop = Tally(), threading.Lock(), threading.Event()
    threads, watching = [], []
    for cid in ids:
        client = Client(server, token, ctx)
        if cid % 10 == 0:
            watching.append(client)
            args: tuple[Any, ...] = (client, cid, stop, tally, lock, open_watches)
            threads.append(threading.Thread(target=watcher, args=args, daemon=True))
        else:
            threads.append(
                threading.Thread(target=writer, args=(client, cid, stop, tally, lock), daemon=True)
            )
    go.wait()
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for client in watching:  # cut the streams: a watcher would otherwise wait for its next event
        sock = client.conn.sock if client.conn is not None else None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
    for thread in threads:
        thread.join(timeout=WATCH_SECONDS + 10)
    out.put(
        {
            "latency": tally.latency,
            "errors": dict(tally.errors),
            "events": tally.events,
            "stuck": sum(t.is_alive() for t in threads),
        }
    )


# -- report ------------------------------------------------------------------------------------------
def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=500, help="concurrent clients (default 500)")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long they run (default 60)")
    parser.add_argument("--procs", type=int, default=4, help="client processes (default 4)")
    parser.add_argument("--crds", default=os.environ.get("RAYQUEUE_CRDS_DIR"), help="CRD directory")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="rayqueue-load-"))
    proc, server, token, ca = start_plane(root, args.crds)
    try:
        run(args, proc, server, token, ca)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(root, ignore_errors=True)


def run(args: argparse.Namespace, proc: subprocess.Popen[str], server: str, token: str, ca: str) -> None:
    setup = Client(server, token, ssl.create_default_context(cafile=ca))
    for i in range(NAMESPACES):
        body = json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"load-{i}"}})
        setup.request("POST", "/api/v1/namespaces", body.encode())
    setup.reset()
    watchers = len(range(0, args.clients, 10))
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; server pid {proc.pid} at {server}; "
        f"{args.clients} clients ({watchers} watchers, {args.clients - watchers} list/apply) in "
        f"{args.procs} processes for {args.seconds:g} s"
    )
    ctx = mp.get_context("fork")
    open_watches, out, go = ctx.Value("i", 0), ctx.Queue(), ctx.Event()
    ids = list(range(args.clients))
    procs = [
        ctx.Process(
            target=client_process,
            args=(ids[p :: args.procs], server, token, ca, args.seconds, open_watches, out, go),
        )
        for p in range(args.procs)
    ]
    for p in procs:
        p.start()
    rss0, threads0 = proc_status(proc.pid)
    cpu0 = cpu_seconds(proc.pid)
    samples: list[tuple[float, float, int, int]] = []  # (t, rss, threads, open watches)
    done = threading.Event()

    def sample() -> None:
        t0 = time.monotonic()
        while not done.wait(0.5):
            rss, threads = proc_status(proc.pid)
            samples.append((time.monotonic() - t0, rss, threads, open_watches.value))

    sampler = threading.Thread(target=sample, daemon=True)
    time.sleep(1.0)  # the client processes are up (fork) before the clock starts
    go.set()
    started = time.monotonic()
    sampler.start()
    results = [out.get(timeout=args.seconds + 300) for _ in procs]
    wall = time.monotonic() - started
    done.set()
    sampler.join()
    server_cpu = cpu_seconds(proc.pid) - cpu0
    for p in procs:
        p.join(timeout=30)
    time.sleep(2.0)  # idle: what the server keeps once the connections are gone
    rss_end, threads_end = proc_status(proc.pid)

    latency: dict[str, list[float]] = {}
    errors: Counter[str] = Counter()
    for r in results:
        for kind, values in r["latency"].items():
            latency.setdefault(kind, []).extend(values)
        errors.update(r["errors"])
    stuck = sum(r["stuck"] for r in results)
    ops = sum(len(latency.get(k, [])) for k in ("list", "apply", "watch-open"))
    print(f"\n{'request':<13}{'count':>9}{'per s':>9}{'p50':>12}{'p99':>12}{'max':>12}")
    for kind in ("list", "apply", "watch-open", "watch-event"):
        values = latency.get(kind, [])
        rate = len(values) / args.seconds
        print(
            f"{kind:<13}{len(values):>9}{rate:>9.0f}{ms(pct(values, 0.5)):>12}{ms(pct(values, 0.99)):>12}"
            f"{ms(max(values) if values else float('nan')):>12}"
        )
    print("(watch-event: from a writer's time stamp to the event read by a watcher; open: to the headers)")
    print(f"\nthroughput: {ops / args.seconds:.0f} requests/s answered ({ops} in {wall:.1f} s of wall time)")
    total_errors = sum(errors.values())
    print(f"errors: {total_errors}")
    for kind, count in errors.most_common():
        print(f"  {kind:<40}{count:>8}")
    if stuck:
        print(f"clients still blocked at the end: {stuck}")
    warm = [s for s in samples if s[0] >= min(10.0, args.seconds / 4)]
    rss_warm = warm[0][1] if warm else float("nan")
    peak_rss = max((s[1] for s in samples), default=rss0)
    peak_threads = max((s[2] for s in samples), default=threads0)
    last_rss = samples[-1][1] if samples else rss0
    peak_watches = max((s[3] for s in samples), default=0)
    mean_watches = statistics.fmean(s[3] for s in samples) if samples else 0.0
    print(
        f"\nserver RSS: start {rss0:.0f} MiB, after warm-up {rss_warm:.0f} MiB, peak {peak_rss:.0f} MiB, "
        f"last under load {last_rss:.0f} MiB, idle after {rss_end:.0f} MiB "
        f"(growth under load after warm-up: {last_rss - rss_warm:+.0f} MiB)"
    )
    timeline = [s for i, s in enumerate(samples) if i % 20 == 19]  # every 10 s
    print("server RSS every 10 s: " + ", ".join(f"{s[1]:.0f}" for s in timeline) + " MiB")
    print(f"server threads: start {threads0}, peak {peak_threads}, idle after {threads_end}")
    cores = server_cpu / wall
    print(f"server CPU: {server_cpu:.1f} s in {wall:.1f} s ({cores:.2f} cores of the {os.cpu_count()} here)")
    print(f"open watches: peak {peak_watches}, mean {mean_watches:.0f} (of {watchers} watchers)")


if __name__ == "__main__":
    main()
