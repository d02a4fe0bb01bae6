"""``rayqueue local up``: run a :class:`~rayqueue_local.LocalControlPlane` in the foreground.

Loaded by :mod:`rayqueue_local.cli` only when ``local up`` runs (importing the control plane costs
about 250 ms, which ``rayqueue --help`` must not pay). It starts the plane with the options of the
command line (:func:`emulation_options`), applies ``--scenario``, merges the kubeconfig context,
writes the run file (:mod:`rayqueue_local.runfile`) and waits; on the way out it undoes all three.

Example:
    >>> ns = argparse.Namespace(no_ray=True, no_keda=False, no_prometheus=True, options=["x=1"])
    >>> options = emulation_options(ns)
    >>> sorted(k for k, v in options.items() if v is True), options["x"]
    (['keda_enabled', 'kuberay_enabled'], 1)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from rayqueue_local.apiserver.kubeconfig import default_kubeconfig_path, merge_context, remove_context
from rayqueue_local.controlplane import OBJECTS_DIR, LocalControlPlane
from rayqueue_local.runfile import describe, rayqueue_home, read_run_file, run_file
from rayqueue_local.runtime import prometheus
from rayqueue_local.scenarios import scenario_objects

__all__ = ["emulation_options", "up"]


def up(args: argparse.Namespace) -> int:
    """Run ``rayqueue local up`` with its parsed ``args`` until Ctrl-C or SIGTERM; the exit code."""
    running = read_run_file()
    if running is not None:
        print(f"A local control plane is already running at {running['server']} (pid {running['pid']}).")
        return 1
    state_dir = Path(args.state_dir) if args.state_dir else rayqueue_home() / "local"
    kubeconfig = Path(args.kubeconfig).expanduser() if args.kubeconfig else default_kubeconfig_path()
    if args.fresh:
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
        print(describe(json.loads(path.read_text())), flush=True)
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
        try:
            prometheus.find_prometheus()
        except prometheus.PrometheusNotInstalledError:
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
