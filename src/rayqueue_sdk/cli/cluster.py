"""``rayqueue cluster list|status|apply|down|wait`` and ``rayqueue queue list``: clusters from CI pipelines.

Every command takes ``-n/--namespace``, ``--kubeconfig``/``--context`` (default: the usual detection:
``$KUBECONFIG``, ``~/.kube/config``, the in-cluster account) and ``--json`` (one JSON document on stdout).

Exit codes, so that a pipeline can tell what went wrong:

====  ==================================================================
0     done (``wait``: the cluster is ready)
1     another rayqueue_sdk error (API error, conflict, ...)
2     bad input (usage, configuration file)
3     not found (cluster, LocalQueue, priority class)
4     gave up waiting (``AdmissionTimeout``: still queued or starting)
5     preempted, deactivated or deleted while waiting
6     authentication or permission refused (401/403)
7     the API server (or the Ray dashboard) could not be reached
====  ==================================================================

Example:
    >>> from rayqueue_sdk.cli.main import build_parser
    >>> build_parser().parse_args(["cluster", "wait", "ws", "--queue-timeout", "60"]).queue_timeout
    60.0
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["EXIT_CODES", "exit_code", "register", "register_queue"]

#: Error class name -> exit code (the most specific class in the error's MRO wins).
EXIT_CODES = {
    "ConfigError": 2,
    "NotFoundError": 3,
    "AdmissionTimeout": 4,
    "PreemptedError": 5,
    "ClusterDeletedError": 5,
    "AuthenticationError": 6,
    "ForbiddenError": 6,
    "ConnectionFailedError": 7,
    "RayQueueError": 1,
}


def exit_code(err: BaseException) -> int:
    """The exit code for ``err`` (see the module's table).

    Example:
        >>> from rayqueue_sdk.errors import QueueNotFoundError, AdmissionTimeout
        >>> exit_code(QueueNotFoundError("q", [])), exit_code(AdmissionTimeout("c", 1, phase="queued"))
        (3, 4)
    """
    for cls in type(err).__mro__:
        if cls.__name__ in EXIT_CODES:
            return EXIT_CODES[cls.__name__]
    return 1


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-n", "--namespace", help="namespace (default: the credentials' namespace)")
    parser.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
    parser.add_argument("--context", help="kubeconfig context (default: the current one)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")


def register(subparsers: Any) -> None:
    """Add ``rayqueue cluster ...``."""
    parser = subparsers.add_parser("cluster", help="Ray clusters: list, status, apply, down, wait")
    sub = parser.add_subparsers(dest="cluster_command", metavar="ACTION", required=True)
    p = sub.add_parser("list", help="every cluster of the namespace with its queue state")
    _common(p)
    p = sub.add_parser("status", help="one cluster's status")
    p.add_argument("name")
    _common(p)
    p = sub.add_parser("apply", help="create or update a cluster from a YAML file")
    p.add_argument(
        "-f", "--file", required=True, help="ClusterConfiguration fields, or a RayCluster manifest"
    )
    p.add_argument("--force", action="store_true", help="take over fields another manager owns")
    p.add_argument("--wait", action="store_true", help="then wait until it is ready")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds for --wait (default 900)")
    _common(p)
    p = sub.add_parser("down", help="delete a cluster the SDK made (idempotent)")
    p.add_argument("name")
    p.add_argument("--force", action="store_true", help="also a cluster the SDK did not make")
    _common(p)
    p = sub.add_parser("wait", help="wait until a cluster is ready, saying why it waits")
    p.add_argument("name")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds in all (default 900)")
    p.add_argument("--queue-timeout", type=float, default=None, help="seconds queued before giving up")
    p.add_argument("--no-dashboard-check", action="store_true", help="do not wait for the dashboard")
    _common(p)
    parser.set_defaults(func=_run_cluster)


def register_queue(subparsers: Any) -> None:
    """Add ``rayqueue queue list``."""
    parser = subparsers.add_parser("queue", help="Kueue LocalQueues")
    sub = parser.add_subparsers(dest="queue_command", metavar="ACTION", required=True)
    _common(sub.add_parser("list", help="the namespace's LocalQueues (default one first)"))
    parser.set_defaults(func=_run_queue)


def _client(args: argparse.Namespace) -> Any:
    from rayqueue_sdk.kube.client import get_client

    if args.kubeconfig or args.context:
        from rayqueue_sdk.kube.auth import KubeConfigFileAuthentication

        return KubeConfigFileAuthentication(args.kubeconfig, context=args.context).api_client()
    return get_client()


def _emit(args: argparse.Namespace, data: Any, text: str) -> None:
    import json

    print(json.dumps(data, indent=2, sort_keys=True) if args.json else text)


def _guarded(args: argparse.Namespace, action: Any) -> int:
    import json
    import sys

    from rayqueue_sdk.errors import RayQueueError

    try:
        action()
    except RayQueueError as err:
        if args.json:
            print(json.dumps({"error": type(err).__name__, "message": str(err)}, indent=2))
        print(f"rayqueue: {type(err).__name__}: {err}", file=sys.stderr)
        return exit_code(err)
    return 0


def _load_config(path: str, namespace: str | None) -> Any:
    import yaml

    from rayqueue_sdk.config.models import ClusterConfiguration
    from rayqueue_sdk.errors import ConfigError

    try:
        with open(path, encoding="utf-8") as fh:
            doc = yaml.safe_load(fh)
    except (OSError, yaml.YAMLError) as err:
        raise ConfigError("--file", path, "a readable YAML file", problem=str(err).splitlines()[0]) from None
    if not isinstance(doc, dict):
        raise ConfigError("--file", path, "a YAML mapping of ClusterConfiguration fields or a RayCluster")
    if doc.get("kind") == "RayCluster":
        from rayqueue_sdk.cluster.adopt import config_from_raycluster

        config = config_from_raycluster(doc)
    else:
        config = ClusterConfiguration.model_validate(doc)
    if namespace and config.namespace != namespace:
        config = ClusterConfiguration.model_validate(
            {**config.model_dump(exclude_unset=True), "namespace": namespace}
        )
    return config


def _run_cluster(args: argparse.Namespace) -> int:
    from rayqueue_sdk.display.console import clusters_table, render_text, status_panel

    def run() -> None:
        from rayqueue_sdk.cluster.cluster import Cluster, get_cluster
        from rayqueue_sdk.cluster.observe import list_clusters
        from rayqueue_sdk.kube.client import default_namespace

        api = _client(args)
        ns = args.namespace or default_namespace(api)
        command = args.cluster_command
        if command == "list":
            statuses = list_clusters(ns, api)
            _emit(args, [s.to_dict() for s in statuses], render_text(clusters_table(statuses), width=160))
        elif command == "status":
            st = Cluster(_named(args.name, ns), client=api).status()
            _emit(args, st.to_dict(), render_text(status_panel(st), width=120))
        elif command == "apply":
            cluster = Cluster(_load_config(args.file, args.namespace), client=api)
            cluster.apply(force=args.force)
            st = cluster.wait_ready(timeout=args.timeout) if args.wait else cluster.status()
            _emit(args, st.to_dict(), str(st))
        elif command == "down":
            deleted = Cluster(_named(args.name, ns), client=api).down(force=args.force)
            _emit(
                args,
                {"name": args.name, "namespace": ns, "deleted": deleted},
                f"{ns}/{args.name}: {'deleted' if deleted else 'already gone'}",
            )
        elif command == "wait":
            cluster = get_cluster(args.name, ns, client=api)
            st = cluster.wait_ready(
                timeout=args.timeout,
                queue_timeout=args.queue_timeout,
                dashboard_check=not args.no_dashboard_check,
            )
            _emit(args, st.to_dict(), str(st))

    return _guarded(args, run)


def _named(name: str, namespace: str) -> Any:
    from rayqueue_sdk.config.models import ClusterConfiguration

    return ClusterConfiguration(name=name, namespace=namespace)


def _run_queue(args: argparse.Namespace) -> int:
    def run() -> None:
        from rayqueue_sdk.cluster.queues import list_local_queues
        from rayqueue_sdk.kube.client import default_namespace

        api = _client(args)
        ns = args.namespace or default_namespace(api)
        queues = list_local_queues(ns, api)
        lines = [f"{'NAME':24} {'CLUSTERQUEUE':24} {'PENDING':>7} {'ADMITTED':>8}  DEFAULT"]
        for q in queues:
            mark = "yes" if q.default else ""
            lines.append(f"{q.name:24} {q.cluster_queue or '-':24} {q.pending:>7} {q.admitted:>8}  {mark}")
        _emit(args, [q.to_dict() for q in queues], "\n".join(lines))

    return _guarded(args, run)
