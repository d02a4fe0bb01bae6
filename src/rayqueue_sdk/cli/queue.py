"""``rayqueue queue list``: the namespace's Kueue LocalQueues, the default one first.

Takes the connection options and ``--json`` of every command group (:mod:`rayqueue_sdk.cli.common`).
Imported only when ``rayqueue queue`` runs.

Example:
    >>> from rayqueue_sdk.cli.main import build_parser
    >>> build_parser("queue").parse_args(["queue", "list", "-n", "ds"]).namespace
    'ds'
"""

from __future__ import annotations

import argparse

from rayqueue_sdk.cli.common import add_connection_options, client_source, emit, guarded
from rayqueue_sdk.cluster.queues import LocalQueueInfo, list_local_queues
from rayqueue_sdk.kube.client import default_namespace, get_client

__all__ = ["configure", "queues_text"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the actions of ``rayqueue queue`` to its parser.

    Example:
        >>> p = argparse.ArgumentParser(); configure(p)
        >>> p.parse_args(["list", "--json"]).json
        True
    """
    sub = parser.add_subparsers(dest="queue_command", metavar="ACTION", required=True)
    add_connection_options(sub.add_parser("list", help="the namespace's LocalQueues (default one first)"))
    parser.set_defaults(func=_run)


def queues_text(queues: list[LocalQueueInfo]) -> str:
    """A plain-text table of LocalQueues.

    Example:
        >>> print(queues_text([]))
        NAME                     CLUSTERQUEUE             PENDING ADMITTED  DEFAULT
    """
    lines = [f"{'NAME':24} {'CLUSTERQUEUE':24} {'PENDING':>7} {'ADMITTED':>8}  DEFAULT"]
    for q in queues:
        mark = "yes" if q.default else ""
        lines.append(f"{q.name:24} {q.cluster_queue or '-':24} {q.pending:>7} {q.admitted:>8}  {mark}")
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    """Run ``rayqueue queue list``; returns the exit code."""

    def action() -> None:
        api = get_client(client_source(args))
        queues = list_local_queues(args.namespace or default_namespace(api), api)
        emit(args, [q.to_dict() for q in queues], queues_text(queues))

    return guarded(args, action)
