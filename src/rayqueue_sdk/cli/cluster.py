"""``rayqueue cluster list|status|apply|down|wait|scale-to-zero|resume``: clusters from CI pipelines.

Every action takes ``-n/--namespace``, ``--kubeconfig``/``--context`` (default: the usual detection:
``$KUBECONFIG``, ``~/.kube/config``, the in-cluster account) and ``--json`` (one JSON document on stdout).
Exit codes are the table of :mod:`rayqueue_sdk.cli.exit_codes` (``rayqueue --help`` prints it). This
module is imported only when ``rayqueue cluster`` runs (:mod:`rayqueue_sdk.cli.main`), so it imports
the cluster layer at module level.

Example:
    >>> from rayqueue_sdk.cli.main import build_parser
    >>> build_parser("cluster").parse_args(["cluster", "wait", "ws", "--queue-timeout", "60"]).queue_timeout
    60.0
"""

from __future__ import annotations

import argparse
from pathlib import PurePath

from rayqueue_sdk.cli.common import add_connection_options, emit, guarded, seconds, session_of
from rayqueue_sdk.cli.files import read_yaml_file
from rayqueue_sdk.cluster.adopt import config_from_raycluster
from rayqueue_sdk.cluster.cluster import Cluster, get_cluster
from rayqueue_sdk.cluster.observe import list_clusters
from rayqueue_sdk.config.models import ClusterConfiguration
from rayqueue_sdk.display.console import clusters_table, render_text, status_panel
from rayqueue_sdk.errors import ConfigError

__all__ = ["configure", "load_config"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the actions of ``rayqueue cluster`` to its parser.

    Example:
        >>> p = argparse.ArgumentParser(); configure(p)
        >>> p.parse_args(["down", "ws", "--force"]).force
        True
    """
    sub = parser.add_subparsers(dest="cluster_command", metavar="ACTION", required=True)
    add_connection_options(sub.add_parser("list", help="every cluster of the namespace with its queue state"))
    p = sub.add_parser("status", help="one cluster's status")
    p.add_argument("name")
    add_connection_options(p)
    p = sub.add_parser("apply", help="create or update a cluster from a YAML file")
    p.add_argument(
        "-f", "--file", required=True, help="ClusterConfiguration fields, or a RayCluster manifest"
    )
    p.add_argument("--force", action="store_true", help="take over fields another manager owns")
    p.add_argument("--wait", action="store_true", help="then wait until it is ready")
    p.add_argument("--timeout", type=seconds, default=900.0, help="seconds for --wait (default 900)")
    add_connection_options(p)
    p = sub.add_parser("down", help="delete a cluster the SDK made (idempotent)")
    p.add_argument("name")
    p.add_argument("--force", action="store_true", help="also a cluster the SDK did not make")
    add_connection_options(p)
    p = sub.add_parser("wait", help="wait until a cluster is ready, saying why it waits")
    p.add_argument("name")
    p.add_argument("--timeout", type=seconds, default=900.0, help="seconds in all (default 900)")
    p.add_argument("--queue-timeout", type=seconds, default=None, help="seconds queued before giving up")
    p.add_argument("--no-dashboard-check", action="store_true", help="do not wait for the dashboard")
    add_connection_options(p)
    p = sub.add_parser(
        "scale-to-zero", help="give the quota back after N idle minutes (KEDA where served, else the reaper)"
    )
    p.add_argument("name")
    p.add_argument("--idle-minutes", type=float, default=None, help="idle minutes before scaling to zero")
    p.add_argument("--mode", default="auto", help="auto (default), keda or reaper")
    p.add_argument("--idle-signal", default="gpu", help="gpu (default), jobs or gpu_and_jobs")
    p.add_argument("--prometheus", default=None, help="the Prometheus URL to query (KEDA needs one)")
    p.add_argument("--hook", default=None, help="a pre-stop command run on the head (reaper)")
    p.add_argument("--dry-run", action="store_true", help="what the policy would decide now; nothing made")
    p.add_argument("--remove", action="store_true", help="remove the policy instead")
    add_connection_options(p)
    p = sub.add_parser("resume", help="queue a cluster scaled to zero (or deactivated) again")
    p.add_argument("name")
    add_connection_options(p)
    parser.set_defaults(func=_run)


def load_config(path: str, namespace: str | None) -> ClusterConfiguration:
    """The :class:`ClusterConfiguration` in the YAML file ``path`` (its fields, or a RayCluster manifest).

    Example:
        >>> import pathlib, tempfile
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "ws.yaml"; _ = f.write_text("name: ws\\nnum_workers: 1\\n")
        >>> load_config(str(f), "ds").namespace
        'ds'
    """
    doc = read_yaml_file(path, "--file")
    if not isinstance(doc, dict):
        allowed = "a YAML mapping of ClusterConfiguration fields or a RayCluster"
        raise ConfigError("--file", PurePath(path), allowed)
    if doc.get("kind") == "RayCluster":
        config = config_from_raycluster(doc)
    elif "kind" in doc or "apiVersion" in doc:
        raise ConfigError(
            "--file",
            PurePath(path),
            "a RayCluster manifest (apiVersion ray.io/v1, kind RayCluster) or ClusterConfiguration fields",
            problem=f"not a RayCluster (kind {doc.get('kind')!r})",
        )
    else:
        config = ClusterConfiguration.model_validate(doc)
    if namespace and config.namespace != namespace:
        config = ClusterConfiguration.model_validate(
            {**config.model_dump(exclude_unset=True), "namespace": namespace}
        )
    return config


def _run(args: argparse.Namespace) -> int:
    """Run ``rayqueue cluster <action>``; returns the exit code."""

    def action() -> None:
        command = args.cluster_command
        # A bad file is reported before anything is sent (or a connection is even tried).
        config = load_config(args.file, args.namespace) if command == "apply" else None
        session = session_of(args)
        ns = session.namespace
        if command == "list":
            statuses = list_clusters(ns, session)
            emit(args, [s.to_dict() for s in statuses], render_text(clusters_table(statuses), width=160))
        elif command == "status":
            st = Cluster(ClusterConfiguration(name=args.name, namespace=ns), client=session).status(
                missing_ok=False
            )
            emit(args, st.to_dict(), render_text(status_panel(st), width=120))
        elif command == "apply":
            assert config is not None
            cluster = Cluster(config, client=session)
            cluster.apply(force=args.force)
            st = cluster.wait_ready(timeout=args.timeout) if args.wait else cluster.status()
            emit(args, st.to_dict(), str(st))
        elif command == "down":
            config = ClusterConfiguration(name=args.name, namespace=ns)
            deleted = Cluster(config, client=session).down(force=args.force)
            emit(
                args,
                {"name": args.name, "namespace": ns, "deleted": deleted},
                f"{ns}/{args.name}: {'deleted' if deleted else 'already gone'}",
            )
        elif command == "wait":
            st = get_cluster(args.name, ns, client=session).wait_ready(
                timeout=args.timeout,
                queue_timeout=args.queue_timeout,
                dashboard_check=not args.no_dashboard_check,
            )
            emit(args, st.to_dict(), str(st))
        elif command == "scale-to-zero":
            if args.remove == (args.idle_minutes is not None):
                raise ConfigError(
                    "--idle-minutes", args.idle_minutes, "--idle-minutes N, or --remove (not both)"
                )
            cluster = Cluster(ClusterConfiguration(name=args.name, namespace=ns), client=session)
            report = cluster.scale_to_zero(
                None if args.remove else args.idle_minutes,
                mode=args.mode,
                idle_signal=args.idle_signal,
                prometheus=args.prometheus,
                hook=args.hook,
                dry_run=args.dry_run,
            )
            emit(args, {"name": args.name, "namespace": ns, "report": report}, report)
        elif command == "resume":
            changed = Cluster(ClusterConfiguration(name=args.name, namespace=ns), client=session).resume()
            emit(
                args,
                {"name": args.name, "namespace": ns, "resumed": changed},
                f"{ns}/{args.name}: resumed ({changed}); it queues again",
            )

    return guarded(args, action)
