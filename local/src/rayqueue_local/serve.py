"""``rayqueue local up``: run a :class:`~rayqueue_local.LocalControlPlane` in the foreground.

Loaded by :mod:`rayqueue_local.cli` only when ``local up`` runs (importing the control plane costs
about 250 ms, which ``rayqueue --help`` must not pay). It starts the plane with the options of the
command line (``rayqueue_local.cli.options_from_args``), applies ``--scenario``, merges the
kubeconfig context, writes the run file (:mod:`rayqueue_local.runfile`) and waits; on the way out it
undoes all three.

What cannot run on this machine (no Ray, no ``prometheus`` binary) the control plane reports itself
when it starts: ``cp.notices``, logged as warnings (which the ``rayqueue`` command prints) and kept
in the run file.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import signal
import threading
from pathlib import Path
from typing import Any

from rayqueue_local.apiserver.kubeconfig import default_kubeconfig_path, merge_context, remove_context
from rayqueue_local.controlplane import OBJECTS_DIR, LocalControlPlane
from rayqueue_local.errors import LocalControlPlaneError
from rayqueue_local.options import ControlPlaneOptions
from rayqueue_local.runfile import DEFAULT_INSTANCE, describe, read_run_file, run_file, state_dir_of
from rayqueue_local.scenarios import scenario_objects
from rayqueue_local.storage.persistence import atomic_write

__all__ = ["up"]


def up(args: argparse.Namespace, options: ControlPlaneOptions) -> int:
    """Run ``rayqueue local up`` (parsed ``args``, the plane's ``options``) until Ctrl-C or SIGTERM;
    returns the exit code."""
    name = getattr(args, "name", DEFAULT_INSTANCE)
    context = getattr(args, "context", None) or f"rayqueue-{name}"
    running = read_run_file(name)
    if running is not None:
        print(
            f"A local control plane {name!r} is already running at {running['server']} "
            f"(pid {running['pid']}); "
            "stop it with `rayqueue local down"
            + ("" if name == DEFAULT_INSTANCE else f" --name {name}")
            + "`, or start another with --name."
        )
        return 1
    state_dir = Path(args.state_dir) if args.state_dir else state_dir_of(name)
    kubeconfig = Path(args.kubeconfig).expanduser() if args.kubeconfig else default_kubeconfig_path()
    if args.fresh:
        shutil.rmtree(state_dir / OBJECTS_DIR, ignore_errors=True)
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    cp = LocalControlPlane(args.crds, state_dir, args.port, args.host, options=options)
    try:
        cp.start()
    except (OSError, LocalControlPlaneError) as err:  # port in use, bad CRD directory, state dir in use, ...
        print(f"Cannot start the local control plane: {err}")
        return 1
    path = run_file(name)
    try:
        if args.scenario:
            cp.apply(scenario_objects(args.scenario))
        merge_context(
            kubeconfig,
            context,
            server=cp.server,
            ca_path=cp.ca_cert_path,
            user=f"{context}-admin",
            token=cp.token,
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(
            path,
            json.dumps(
                {
                    "pid": os.getpid(),
                    "server": cp.server,
                    "kubeconfig": str(kubeconfig),
                    "context": context,
                    "ca_cert": str(cp.ca_cert_path),
                    "state_dir": str(state_dir),
                    "controllers": [getattr(c, "name", type(c).__name__) for c in cp.controllers],
                    "options": dataclasses.asdict(cp.options),
                    "notices": cp.notices,
                    "prometheus": getattr(getattr(cp, "prometheus", None), "url", None),
                }
            ).encode(),
            fsync=False,
        )
        print(f'Local control plane at {cp.server} (context "{context}" in {kubeconfig})', flush=True)
        print(describe(json.loads(path.read_text())), flush=True)
        print("Stop it with Ctrl-C or `rayqueue local down`.", flush=True)
        while not stop.wait(0.5):
            pass
    finally:
        print("Stopping the local control plane ...", flush=True)
        cp.stop()
        remove_context(kubeconfig, context)
        path.unlink(missing_ok=True)
        print("Stopped.", flush=True)
    return 0
