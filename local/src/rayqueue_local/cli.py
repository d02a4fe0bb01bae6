"""``rayqueue local up|down|status``: run the local control plane from a shell.

``up`` starts a :class:`~rayqueue_local.LocalControlPlane` in the foreground, merges a
kubeconfig context (``rayqueue-local`` by default) into the kubeconfig (``$KUBECONFIG`` or
``~/.kube/config`` unless ``--kubeconfig``), writes a run file ``local.json`` under
``$RAYQUEUE_HOME`` (default ``~/.rayqueue``) and stays up until Ctrl-C, SIGTERM or
``rayqueue local down``. On the way out it removes the context and the run file. State (objects, the
CA, tokens) lives in ``--state-dir`` (default ``$RAYQUEUE_HOME/local``), so a restart keeps them.

``up`` runs the whole emulation by default: Kueue, KubeRay with a real local Ray head per running
RayCluster, KEDA, and a real Prometheus scraping the GPU metrics when the ``prometheus`` binary is
installed (otherwise a warning names Debian's package and the rest starts). ``--no-ray`` (KubeRay
without Ray processes: clusters ready at once, jobs simulated), ``--no-keda`` and
``--no-prometheus`` opt out; ``--set KEY=VALUE`` sets any control-plane option and wins over
these. ``--scenario NAME`` applies a seed's Kueue admin setup (:mod:`rayqueue_local.scenarios`)
once started. ``status`` prints the running controllers.

Example::

    $ rayqueue local up --crds ../shared/crds &
    Local control plane at https://127.0.0.1:40123 (context "rayqueue-local" in ~/.kube/config)
    $ kubectl get namespaces
    $ rayqueue local down
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from rayqueue_local.scenarios import SCENARIOS, scenario_objects

__all__ = ["emulation_options", "register", "run_file", "rayqueue_home", "scenario_objects"]


def rayqueue_home() -> Path:
    """``$RAYQUEUE_HOME`` or ``~/.rayqueue``."""
    return Path(os.environ.get("RAYQUEUE_HOME") or Path.home() / ".rayqueue").expanduser()


def run_file() -> Path:
    """Where a running ``rayqueue local up`` records its pid, URL and kubeconfig context."""
    return rayqueue_home() / "local.json"


def register(subparsers: Any) -> None:
    """Add ``local`` and its subcommands to the ``rayqueue`` parser."""
    local = subparsers.add_parser(
        "local", help="run a local Kubernetes API with Kueue/KubeRay/KEDA behaviour"
    )
    sub = local.add_subparsers(dest="local_command", metavar="ACTION", required=True)
    up = sub.add_parser("up", help="start the local control plane (foreground; Ctrl-C stops it)")
    up.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one)")
    up.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    up.add_argument(
        "--crds",
        default=os.environ.get("RAYQUEUE_CRDS_DIR"),
        help="directory of upstream CRD YAML files to validate against (default: $RAYQUEUE_CRDS_DIR)",
    )
    up.add_argument("--state-dir", help="where state survives restarts (default: $RAYQUEUE_HOME/local)")
    up.add_argument(
        "--kubeconfig", help="kubeconfig to merge the context into (default: $KUBECONFIG or ~/.kube/config)"
    )
    up.add_argument("--context", default="rayqueue-local", help="kubeconfig context name")
    up.add_argument(
        "--fresh",
        action="store_true",
        help="start with no objects (forget those of earlier runs; keep CA and tokens)",
    )
    up.add_argument("--workload-scale", action="store_true", help="serve Kueue workloads/scale (seed 000)")
    up.add_argument(
        "--no-ray",
        action="store_true",
        help="KubeRay without real Ray heads (clusters are ready at once, RayJobs simulated)",
    )
    up.add_argument("--no-keda", action="store_true", help="do not run the KEDA emulation")
    up.add_argument(
        "--no-prometheus", action="store_true", help="do not start Prometheus for the GPU metrics"
    )
    up.add_argument(
        "--scenario",
        choices=sorted(SCENARIOS),
        help="apply a seed's Kueue admin setup after start-up (namespaces created as needed)",
    )
    up.add_argument(
        "--set",
        dest="options",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a control-plane option, e.g. --set max_starting_heads=1 (value parsed as JSON when it "
        "can be; wins over --no-ray/--no-keda/--no-prometheus)",
    )
    up.set_defaults(func=_up)
    down = sub.add_parser("down", help="stop the running local control plane")
    down.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for it to stop")
    down.set_defaults(func=_down)
    status = sub.add_parser("status", help="print the running local control plane, if any")
    status.set_defaults(func=_status)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, exited but not yet reaped by its parent, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no procfs: trust kill()
    return stat.rpartition(")")[2].split()[0] != "Z"


def _read_run_file() -> dict[str, Any] | None:
    path = run_file()
    try:
        data: dict[str, Any] = json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return None
    if not _alive(int(data.get("pid", 0))):
        path.unlink(missing_ok=True)  # a stale file from a process that died
        return None
    return data


def _up(args: argparse.Namespace) -> int:
    import signal
    import threading

    from rayqueue_local import LocalControlPlane
    from rayqueue_local.apiserver.kubeconfig import default_kubeconfig_path, merge_context, remove_context

    running = _read_run_file()
    if running is not None:
        print(f"A local control plane is already running at {running['server']} (pid {running['pid']}).")
        return 1
    state_dir = Path(args.state_dir) if args.state_dir else rayqueue_home() / "local"
    kubeconfig = Path(args.kubeconfig).expanduser() if args.kubeconfig else default_kubeconfig_path()
    if args.fresh:
        import shutil

        from rayqueue_local.controlplane import OBJECTS_DIR

        shutil.rmtree(state_dir / OBJECTS_DIR, ignore_errors=True)
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    options = emulation_options(args)
    cp = LocalControlPlane(
        **options,
        crd_dir=args.crds,
        state_dir=state_dir,
        port=args.port,
        host=args.host,
        workload_scale=args.workload_scale,
    )
    try:
        cp.start()
    except OSError as err:  # port in use, unreadable CRD directory, ...
        print(f"Cannot start the local control plane: {err}")
        return 1
    path = run_file()
    try:
        if args.scenario:
            cp.apply(scenario_objects(args.scenario))
        merge_context(
            kubeconfig,
            args.context,
            server=cp.server,
            ca_path=cp.ca_cert_path,
            user=f"{args.context}-admin",
            token=cp.token,
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(
            json.dumps(
                {
                    "pid": os.getpid(),
                    "server": cp.server,
                    "kubeconfig": str(kubeconfig),
                    "context": args.context,
                    "ca_cert": str(cp.ca_cert_path),
                    "state_dir": str(state_dir),
                    "controllers": [getattr(c, "name", type(c).__name__) for c in cp.controllers],
                    "options": {k: v for k, v in options.items() if isinstance(v, bool | int | float | str)},
                    "prometheus": getattr(getattr(cp, "prometheus", None), "url", None),
                }
            )
        )
        os.replace(tmp, path)
        print(f'Local control plane at {cp.server} (context "{args.context}" in {kubeconfig})', flush=True)
        print(_describe(json.loads(path.read_text())), flush=True)
        print("Stop it with Ctrl-C or `rayqueue local down`.", flush=True)
        while not stop.wait(0.5):
            pass
    finally:
        print("Stopping the local control plane ...", flush=True)
        cp.stop()
        remove_context(kubeconfig, args.context)
        path.unlink(missing_ok=True)
        print("Stopped.", flush=True)
    return 0


def emulation_options(args: argparse.Namespace) -> dict[str, Any]:
    """The :class:`~rayqueue_local.LocalControlPlane` options of ``local up``: everything on
    unless opted out, Prometheus only when installed, then ``--set`` on top.

    Example:
        >>> ns = argparse.Namespace(no_ray=True, no_keda=False, no_prometheus=True, options=["x=1"])
        >>> options = emulation_options(ns)
        >>> sorted(k for k, v in options.items() if v is True), options["x"]
        (['keda_enabled', 'kuberay_enabled'], 1)
    """
    options: dict[str, Any] = {
        "kuberay_enabled": True,
        "ray_enabled": not args.no_ray,
        "keda_enabled": not args.no_keda,
        "prometheus_enabled": not args.no_prometheus,
    }
    explicit = _options(args.options)
    if options["prometheus_enabled"] and "prometheus_enabled" not in explicit:
        from rayqueue_local.runtime.prometheus import PrometheusNotInstalledError, find_prometheus

        try:
            find_prometheus()
        except PrometheusNotInstalledError:
            options["prometheus_enabled"] = False
            print(
                "warning: Prometheus is not installed, so the GPU metrics are not scraped and KEDA's "
                "Prometheus triggers have nothing to query; install Debian's package `prometheus` "
                "(apt-get install prometheus), or pass --no-prometheus to silence this.",
                file=sys.stderr,
                flush=True,
            )
    options.update(explicit)
    return options


def _describe(running: dict[str, Any]) -> str:
    """One line naming the running controllers (and Prometheus' URL)."""
    names = running.get("controllers")
    if names is None:
        return "Controllers: unknown"
    line = "Controllers: " + (", ".join(names) if names else "none")
    if "kuberay-raycluster" in names:
        ray = (running.get("options") or {}).get("ray_enabled")
        line += "; Ray heads: " + ("real, one per running RayCluster" if ray else "simulated")
    if running.get("prometheus"):
        line += f"; Prometheus at {running['prometheus']}"
    return line


def _options(pairs: list[str]) -> dict[str, Any]:
    """``["ray_enabled=true", "name=x"]`` -> ``{"ray_enabled": True, "name": "x"}``."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise SystemExit(f"--set needs KEY=VALUE, got {pair!r}")
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    return options


def _down(args: argparse.Namespace) -> int:
    import signal
    import time

    running = _read_run_file()
    if running is None:
        print("No local control plane is running.")
        return 0
    pid = int(running["pid"])
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + args.timeout
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _alive(pid):
        print(f"The local control plane (pid {pid}) did not stop within {args.timeout:g} s.")
        return 1
    print(f"Stopped the local control plane at {running['server']} (pid {pid}).")
    return 0


def _status(args: argparse.Namespace) -> int:
    running = _read_run_file()
    if running is None:
        print("No local control plane is running.")
        return 1
    where = f'context "{running["context"]}" in {running["kubeconfig"]}'
    print(f"{running['server']} (pid {running['pid']}, {where})")
    print(_describe(running))
    return 0
