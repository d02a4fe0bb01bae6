"""What an open notebook costs the API server: requests and open watches per minute, per display.

Against the local control plane over HTTPS with the real kubernetes client (Kueue emulated, no Ray heads),
with 20 RayClusters in the namespace (the team queue: 4 admitted, 16 queued, one deactivated as its idle
policy would). Each display runs with a ``User-Agent`` of its own, all in the same window, and the plane's
request log (``APIServer.record_requests``) counts per client: the requests made to open it, the requests
per minute while it stays open (watch re-opens counted apart), and the watch streams it holds. Displays:

- ``card``: an idle live cluster card (the card ``apply()`` shows, following an admitted cluster);
- ``view_clusters``: the cluster browser with its table;
- ``view_queues``: the queue view;
- ``wait_ready``: ``wait_ready()`` on a queued cluster (it stays queued for the whole window);
- ``card_scaled``: the card of a cluster scaled to zero (its Workload deactivated);
- ``all``: all five in one kernel (one client), which the shared watch cache serves with one watch per kind.

Beside them, codeflare-sdk 0.40.1's ``wait_ready`` (on the same queued cluster) and ``view_clusters`` (its
widget, with ``JPY_PARENT_PID`` set so that it believes it is in Jupyter), each in a subprocess of its own
venv (the recipe of tests/interop: ``--system-site-packages``, codeflare-sdk ``--no-deps``, its pins).

Usage: ``python benchmarks/api_load_per_notebook.py [--minutes 5] [--no-peer] [--crd-dir ../shared/crds]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rayqueue_local import LocalControlPlane
from rayqueue_local.apiserver.kubeconfig import merge_context
from rayqueue_local.apiserver.requestlog import RequestLog
from rayqueue_local.scenarios import team_queue
from rayqueue_sdk import Cluster, ClusterConfiguration, get_cluster, view_clusters, view_queues
from rayqueue_sdk.cluster.live import follow_live
from rayqueue_sdk.cluster.observe import list_clusters, observe_cluster
from rayqueue_sdk.cluster.wait import wait_for_cluster
from rayqueue_sdk.display.widgets import ClusterCard
from rayqueue_sdk.kube.session import KubeSession

ROOT = Path(__file__).resolve().parents[1]
NS = "bench-nb"
QUEUE = "ds-workspace-queue"
CLUSTERS = 20
AGENT = "rayqueue-bench/"
PEER_AGENT = "codeflare-bench/"

#: What runs in codeflare-sdk's venv: log in, then hold one display open until killed.
PEER = textwrap.dedent(
    """
    import contextlib, io, sys, time, warnings
    warnings.simplefilter("ignore")
    server, token, ca, ns, what, agent = sys.argv[1:7]
    import kubernetes.client
    _init = kubernetes.client.ApiClient.__init__
    def _tagged(self, *a, **k):
        _init(self, *a, **k)
        self.user_agent = agent
    kubernetes.client.ApiClient.__init__ = _tagged
    from codeflare_sdk import Cluster, ClusterConfiguration, TokenAuthentication, view_clusters
    with contextlib.redirect_stdout(io.StringIO()):
        TokenAuthentication(token, server, ca_cert_path=ca).login()
    print("READY", flush=True)
    if what == "wait_ready":
        config = ClusterConfiguration(name="c10", namespace=ns, write_to_file=False)
        with contextlib.redirect_stdout(io.StringIO()):
            cluster = Cluster(config)
            cluster.wait_ready(timeout=100000, dashboard_check=False)
    else:
        with contextlib.redirect_stdout(io.StringIO()):
            view_clusters(ns)
        time.sleep(100000)
    """
)


def _peer_python() -> Path | None:
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from interop.conftest import ensure_codeflare_venv  # the tests' recipe, one place
    except ImportError:
        return None
    return ensure_codeflare_venv()


def _setup(cp: LocalControlPlane) -> None:
    cp.store.create("namespaces", {"metadata": {"name": NS}})
    for obj in team_queue(NS):
        cp.apply(obj)
    admin = cp.api_client()
    for i in range(CLUSTERS):
        Cluster(
            ClusterConfiguration(
                name=f"c{i:02d}",
                namespace=NS,
                local_queue=QUEUE,
                num_workers=1,
                worker_extended_resource_requests={"nvidia.com/gpu": 1},
                write_to_file=False,
            ),
            client=admin,
        ).apply()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        phases = [s.phase.value for s in list_clusters(NS, admin)]
        if phases.count("queued") == CLUSTERS - 4 and len(phases) == CLUSTERS:
            break
        time.sleep(1)
    get_cluster("c03", NS, client=admin).deactivate()  # as its idle policy would: scaled to zero


def _client(cp: LocalControlPlane, token: str, agent: str) -> Any:
    api = cp.api_client(token)
    api.user_agent = agent + "/"  # ends with "/": no display's agent is a prefix of another's
    return api


def _card(api: Any, name: str) -> Callable[[], None]:
    """A cluster's card, as ``apply()`` shows it; returns what closes it."""
    status = observe_cluster(name, NS, api)
    card = ClusterCard(status)
    return follow_live(KubeSession(api), card.update, name=name, namespace=NS, last=status).close


def _wait(api: Any, name: str) -> Callable[[], None]:
    """``wait_ready()`` on a cluster that stays queued, in a thread; returns what ends it."""
    closed = threading.Event()

    def run() -> None:
        try:
            wait_for_cluster(name, NS, client=api, timeout=100000)
        except Exception as err:  # a wait must not end in the window: say so
            if not closed.is_set():
                print(f"wait_ready({name}) ended: {err!r}", file=sys.stderr)

    threading.Thread(target=run, daemon=True).start()
    return closed.set


def _ours(cp: LocalControlPlane, token: str) -> dict[str, Callable[[], Callable[[], None]]]:
    """Each display: open it, return what closes it."""

    def card(name: str, agent: str) -> Callable[[], Callable[[], None]]:
        return lambda: _card(_client(cp, token, agent), name)

    def browser() -> Callable[[], None]:
        view = view_clusters(NS, _client(cp, token, AGENT + "view_clusters"))
        return getattr(view, "close", lambda: None)

    def queues() -> Callable[[], None]:
        view = view_queues(NS, _client(cp, token, AGENT + "view_queues"), show=False)
        return getattr(view, "close", lambda: None)

    def waiting(agent: str) -> Callable[[], Callable[[], None]]:
        return lambda: _wait(_client(cp, token, agent), "c10")

    def everything() -> Callable[[], None]:
        api = _client(cp, token, AGENT + "all")
        closers = [
            _card(api, "c00"),
            _card(api, "c03"),
            getattr(view_clusters(NS, api), "close", lambda: None),
            getattr(view_queues(NS, api, show=False), "close", lambda: None),
            _wait(api, "c11"),
        ]
        return lambda: [c() for c in closers] and None

    return {
        "card": card("c00", AGENT + "card"),
        "view_clusters": browser,
        "view_queues": queues,
        "wait_ready": waiting(AGENT + "wait_ready"),
        "card_scaled": card("c03", AGENT + "card_scaled"),
        "all": everything,
    }


def _row(log: RequestLog, label: str, agent: str, opened_at: float, start: float, minutes: float) -> str:
    opening = log.count(agent, since=opened_at) - log.count(agent, since=start)
    in_window = [r for r in log.requests if r.user_agent.startswith(agent) and r.at >= start]
    plain = sum(1 for r in in_window if not r.watch)
    rewatch = sum(1 for r in in_window if r.watch)
    return (
        f"{label:28s} {opening:8d} {plain / minutes:12.1f} {rewatch / minutes:12.1f} "
        f"{log.open_watches(agent):8d} {log.peak_watches(agent):6d}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0, help="the measured window (default 5)")
    parser.add_argument("--no-peer", action="store_true", help="leave codeflare-sdk out")
    parser.add_argument("--paths", action="store_true", help="also print what each display asked, by path")
    parser.add_argument(
        "--crd-dir", default=os.environ.get("RAYQUEUE_CRDS_DIR", str(ROOT.parent / "shared" / "crds"))
    )
    args = parser.parse_args()
    peer_python = None if args.no_peer else _peer_python()
    with LocalControlPlane(
        crd_dir=args.crd_dir, ray_enabled=False, keda_enabled=False, prometheus_enabled=False
    ) as cp:
        _setup(cp)
        token = cp.add_user("nb-user", [NS])
        log = cp.api_server.record_requests()
        log.clear()
        opened: dict[str, tuple[str, float]] = {}
        closers = []
        for label, open_ in _ours(cp, token).items():
            at = time.monotonic()
            closers.append(open_())
            opened[f"ours: {label}"] = (AGENT + label + "/", at)
        peers: list[subprocess.Popen[str]] = []
        if peer_python is not None:
            kubeconfig = Path(cp.kubeconfig_path).parent / "bench-peer-kubeconfig"
            merge_context(
                kubeconfig,
                "cf",
                server=cp.server,
                ca_path=cp.ca_cert_path,
                user="nb-user",
                token=token,
                namespace=NS,
            )
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("KUBE")}
            env.update({"KUBECONFIG": str(kubeconfig), "JPY_PARENT_PID": "1"})
            for what in ("wait_ready", "view_clusters"):
                at = time.monotonic()
                proc = subprocess.Popen(
                    [
                        str(peer_python),
                        "-c",
                        PEER,
                        cp.server,
                        token,
                        str(cp.ca_cert_path),
                        NS,
                        what,
                        PEER_AGENT + what + "/",
                    ],
                    env=env,
                    stdout=subprocess.PIPE,
                    text=True,
                )
                assert proc.stdout is not None
                proc.stdout.readline()  # READY: logged in
                peers.append(proc)
                opened[f"codeflare-sdk: {what}"] = (PEER_AGENT + what + "/", at)
        time.sleep(10)  # everything has opened (lists done, watches open)
        start = time.monotonic()
        time.sleep(args.minutes * 60)
        minutes = (time.monotonic() - start) / 60
        print(
            f"API load per open display: {CLUSTERS} clusters in the namespace, window {minutes:.1f} min, "
            "local control plane"
        )
        print(
            f"{'display':28s} {'to open':>8s} {'requests/min':>12s} {'rewatch/min':>12s} "
            f"{'watches':>8s} {'peak':>6s}"
        )
        for label, (agent, at) in opened.items():
            print(_row(log, label, agent, at, start, minutes))
        print(
            "to open: requests before the window; requests/min: non-watch requests while open; rewatch/min: "
            "watch requests (re-opens) while open; watches: streams held at the end; peak: most held at once"
        )
        if args.paths:
            for label, (agent, _) in opened.items():
                asked = Counter(
                    f"{'WATCH' if r.watch else r.method} {r.path}"
                    for r in log.requests
                    if r.user_agent.startswith(agent) and r.at >= start
                )
                print(f"\n{label}: " + ", ".join(f"{n} x {p}" for p, n in asked.most_common()))
        for close in closers:
            close()
        for proc in peers:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    main()
