"""``rayqueue local up|down|status|user``: run the local control plane from a shell.

``up`` starts a :class:`~rayqueue_local.LocalControlPlane` in the foreground, merges a
kubeconfig context (``rayqueue-local`` by default) into the kubeconfig (``$KUBECONFIG`` or
``~/.kube/config`` unless ``--kubeconfig``), writes a run file ``<name>.json`` under
``$RAYQUEUE_HOME`` (default ``~/.rayqueue``) and stays up until Ctrl-C, SIGTERM or
``rayqueue local down``. On the way out it removes the context and the run file. State (objects, the
CA, tokens) lives in ``--state-dir`` (default ``$RAYQUEUE_HOME/<name>``), so a restart keeps them.
Several instances run side by side under different ``--name`` values (default ``local``; context
``rayqueue-<name>``); a second ``up`` of the same name, or on the same state directory, fails with a
message that says which process holds it.

``up`` runs the whole emulation by default: Kueue, KubeRay with a real local Ray head per running
RayCluster, KEDA, and a real Prometheus scraping the GPU metrics when the ``prometheus`` binary is
installed (otherwise a warning names Debian's package and the rest starts). ``--no-ray`` (KubeRay
without Ray processes: clusters ready at once, jobs simulated), ``--no-keda`` and
``--no-prometheus`` opt out; ``--kueue-api v1beta2|v1beta1`` serves one Kueue API generation, as
Kueue 0.20 and the releases before 0.15 do (default ``both``); ``--set KEY=VALUE`` sets any
control-plane option and wins over these. ``--scenario NAME`` applies a seed's Kueue admin setup
(:mod:`rayqueue_local.scenarios`) once started (:mod:`rayqueue_local.serve` runs it). ``status``
prints the running controllers. This module stays light (argparse and the stdlib): the ``rayqueue``
command imports it to build its parser.

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
import signal
import time
from typing import Any

from rayqueue_local.options import KUEUE_API_CHOICES, ControlPlaneOptions, option_names, with_overrides
from rayqueue_local.runfile import (
    DEFAULT_INSTANCE,
    alive,
    check_instance_name,
    describe,
    read_run_file,
    running_instances,
)
from rayqueue_local.scenarios import SCENARIO_OPTIONS, SCENARIOS

__all__ = ["options_from_args", "register"]

#: The options' defaults: the command line's are the same as Python's (tested).
_DEFAULTS = ControlPlaneOptions()
#: ``up``'s switches that turn an option off: (flag, the option it sets to False, help).
_OFF_SWITCHES = (
    (
        "--no-ray",
        "ray_enabled",
        "KubeRay without real Ray heads (clusters are ready at once, RayJobs simulated)",
    ),
    ("--no-keda", "keda_enabled", "do not run the KEDA emulation"),
    ("--no-prometheus", "prometheus_enabled", "do not start Prometheus for the GPU metrics"),
)


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
    up.add_argument("--state-dir", help="where state survives restarts (default: $RAYQUEUE_HOME/<name>)")
    up.add_argument(
        "--kubeconfig", help="kubeconfig to merge the context into (default: $KUBECONFIG or ~/.kube/config)"
    )
    up.add_argument("--context", help="kubeconfig context name (default: rayqueue-<name>)")
    up.add_argument(
        "--fresh",
        action="store_true",
        help="start with no objects (forget those of earlier runs; keep CA and tokens)",
    )
    up.add_argument(
        "--workload-scale",
        dest="workload_scale",
        action="store_true",
        default=_DEFAULTS.workload_scale,
        help="serve Kueue workloads/scale (seed 000)",
    )
    for flag, dest, text in _OFF_SWITCHES:
        up.add_argument(flag, dest=dest, action="store_false", default=getattr(_DEFAULTS, dest), help=text)
    up.add_argument(
        "--kueue-api",
        dest="kueue_api_versions",
        choices=KUEUE_API_CHOICES,
        default=_DEFAULTS.kueue_api_versions,
        help="which kueue.x-k8s.io versions to serve, as a Kueue release does: both (0.15 to 0.19, the "
        "default), v1beta2 (0.20 on) or v1beta1 (before 0.15)",
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
        f"can be; wins over --no-ray/--no-keda/--no-prometheus); the options: {', '.join(option_names())}",
    )
    up.set_defaults(func=_up)
    down = sub.add_parser("down", help="stop the running local control plane")
    down.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for it to stop")
    down.set_defaults(func=_down)
    status = sub.add_parser("status", help="print the running local control plane, if any")
    status.set_defaults(func=_status)
    user = sub.add_parser("user", help="add, list or remove the running plane's users")
    user_sub = user.add_subparsers(dest="user_command", metavar="ACTION", required=True)
    add = user_sub.add_parser("add", help="add a user (or give it a new token) and a kubeconfig context")
    add.add_argument("user", help="the user's name (a DNS label)")
    add.add_argument(
        "-n", "--namespace", action="append", default=[], help="a namespace the user may work in (repeat)"
    )
    add.add_argument("--admin", action="store_true", help="an admin of the whole plane")
    user_sub.add_parser("list", help="the users (no tokens)")
    remove = user_sub.add_parser("remove", help="remove a user: its token stops working, its context goes")
    remove.add_argument("user")
    parsers = [up, down, status, *user_sub.choices.values()]
    for parser in user_sub.choices.values():
        parser.set_defaults(func=_user)
    for parser in parsers:
        parser.add_argument(
            "--name",
            type=_instance_name,
            default=DEFAULT_INSTANCE,
            help=f"the instance (default: {DEFAULT_INSTANCE}); each has its own state, run file and context",
        )


def _instance_name(text: str) -> str:
    try:
        return check_instance_name(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def options_from_args(args: argparse.Namespace) -> ControlPlaneOptions:
    """The :class:`~rayqueue_local.options.ControlPlaneOptions` of a parsed ``local up``: its flags, the
    options its ``--scenario`` needs (:data:`~rayqueue_local.scenarios.SCENARIO_OPTIONS`), then
    ``--set KEY=VALUE`` on top (an unknown key is a ``SystemExit`` naming the known ones).

    Example:
        >>> args = argparse.Namespace(ray_enabled=False, options=["max_starting_heads=1"])
        >>> options = options_from_args(args)
        >>> options.ray_enabled, options.prometheus_enabled, options.max_starting_heads  # default: on
        (False, True, 1)
        >>> seed3 = options_from_args(argparse.Namespace(scenario="seed-003", options=[]))
        >>> seed3.fair_sharing, seed3.admission_fair_sharing
        (True, True)
        >>> options_from_args(argparse.Namespace(kueue_api_versions="v1beta1", options=[])).kueue_api_versions
        'v1beta1'
    """
    flags = {name: getattr(args, name) for name in option_names() if hasattr(args, name)}
    scenario = SCENARIO_OPTIONS.get(getattr(args, "scenario", None) or "", {})
    try:
        options = with_overrides(ControlPlaneOptions(**flags), scenario, owner="--scenario")
        return with_overrides(options, _set_pairs(args.options), owner="--set")
    except (TypeError, ValueError) as err:
        raise SystemExit(str(err)) from None


def _set_pairs(pairs: list[str]) -> dict[str, Any]:
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


def _up(args: argparse.Namespace) -> int:
    # lazy: `rayqueue --help` imports this module to register `local` and must stay fast (no yaml,
    # no control plane: the rayqueue command's contract); the control plane loads only to run `up`.
    from rayqueue_local.serve import up

    return up(args, options_from_args(args))


def _not_running(name: str) -> str:
    others = [n for n in running_instances() if n != name]
    return f"No local control plane {name!r} is running." + (
        f" Running: {', '.join(others)} (use --name)." if others else ""
    )


def _user(args: argparse.Namespace) -> int:
    if args.user_command == "add" and not args.namespace and not args.admin:
        raise SystemExit("rayqueue local user add: give --namespace NS (repeatable) or --admin")
    # lazy: as for `up`: yaml and the kubeconfig code load only when a user command runs.
    from rayqueue_local.usercli import user_command

    return user_command(args)


def _down(args: argparse.Namespace) -> int:
    running = read_run_file(args.name)
    if running is None:
        print(_not_running(args.name))
        return 0
    pid = int(running["pid"])
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + args.timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if alive(pid):
        print(f"The local control plane (pid {pid}) did not stop within {args.timeout:g} s.")
        return 1
    print(f"Stopped the local control plane at {running['server']} (pid {pid}).")
    return 0


def _status(args: argparse.Namespace) -> int:
    running = read_run_file(args.name)
    if running is None:
        print(_not_running(args.name))
        return 1
    where = f'context "{running["context"]}" in {running["kubeconfig"]}'
    print(f"{running['server']} (pid {running['pid']}, {where})")
    print(describe(running))
    return 0
