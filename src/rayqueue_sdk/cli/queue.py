"""``rayqueue queue list|show NAME|fits -f FILE|headroom``: the namespace's Kueue LocalQueues, one queue's
overview (quota, usage, borrowing, pending workloads in admission order with their admission estimates, who
is ahead of your workloads and why), whether a cluster configuration would be admitted now, and what each
queue may still get (nominal, borrowable, used, free; a note names the permission where it is hidden).

Takes the connection options and ``--json`` of every command group (:mod:`rayqueue_sdk.cli.common`).
``fits`` exits 0 when the cluster fits, :data:`~rayqueue_sdk.cli.exit_codes.DOES_NOT_FIT` (9) when it does
not (now, or never: the reason says which), 6 when the ClusterQueue cannot be read. Imported only when
``rayqueue queue`` runs.

Example:
    >>> from rayqueue_sdk.cli.main import build_parser
    >>> build_parser("queue").parse_args(["queue", "list", "-n", "ds"]).namespace
    'ds'
    >>> build_parser("queue").parse_args(["queue", "fits", "-f", "ws.yaml", "--queue", "q"]).queue
    'q'
"""

from __future__ import annotations

import argparse

from rayqueue_sdk.admission.fit import FitAnswer
from rayqueue_sdk.cli.cluster import load_config
from rayqueue_sdk.cli.common import add_connection_options, emit, guarded, session_of
from rayqueue_sdk.cli.exit_codes import DOES_NOT_FIT, EXIT_CODES
from rayqueue_sdk.display.queues import queue_text
from rayqueue_sdk.errors import ForbiddenError
from rayqueue_sdk.queues.local_queues import LocalQueueInfo, list_local_queues
from rayqueue_sdk.queues.overview import queue_headroom, queue_overview, will_it_fit

__all__ = ["configure", "fit_text", "queues_text"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the actions of ``rayqueue queue`` to its parser.

    Example:
        >>> p = argparse.ArgumentParser(); configure(p)
        >>> p.parse_args(["list", "--json"]).json, p.parse_args(["show", "gpu"]).name
        (True, 'gpu')
    """
    sub = parser.add_subparsers(dest="queue_command", metavar="ACTION", required=True)
    add_connection_options(sub.add_parser("list", help="the namespace's LocalQueues (default one first)"))
    show = sub.add_parser(
        "show",
        help="one LocalQueue: quota, usage, borrowing, pending workloads in order, who is ahead of yours",
    )
    show.add_argument("name", help="the LocalQueue")
    add_connection_options(show)
    fits = sub.add_parser("fits", help="whether a cluster configuration would be admitted now, and why (not)")
    fits.add_argument(
        "-f",
        "--file",
        required=True,
        help="ClusterConfiguration fields (YAML or JSON), or a RayCluster manifest",
    )
    fits.add_argument(
        "--queue", help="the LocalQueue (default: the file's local_queue, else the default queue)"
    )
    add_connection_options(fits)
    add_connection_options(
        sub.add_parser(
            "headroom",
            help="what each LocalQueue may still get now: nominal, borrowable, used, free",
        )
    )
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


def fit_text(answer: FitAnswer) -> str:
    """The answer of ``rayqueue queue fits`` as text: the verdict, then the requests.

    Example:
        >>> print(fit_text(FitAnswer(True, "fits in ClusterQueue cq within its nominal quota (flavor f)")))
        fits in ClusterQueue cq within its nominal quota (flavor f)
    """
    lines = [answer.reason]
    if answer.requests:
        asked = answer.to_dict()["requests"]
        lines.append("requests: " + ", ".join(f"{k} {v}" for k, v in asked.items()))
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    """Run ``rayqueue queue ACTION``; returns the exit code."""

    def action() -> int | None:
        session = session_of(args)
        ns = session.namespace
        if args.queue_command == "show":
            overview = queue_overview(ns, session)
            summary = overview.queue(args.name)
            emit(args, summary.to_dict(), queue_text(overview, summary))
            return None
        if args.queue_command == "headroom":
            headroom = queue_headroom(ns, session)
            emit(args, headroom.to_dict(), headroom.text())
            return None
        if args.queue_command == "fits":
            answer = will_it_fit(load_config(args.file, ns), args.queue, namespace=ns, client=session)
            emit(args, answer.to_dict(), fit_text(answer))
            if answer.fits is None:
                return EXIT_CODES[ForbiddenError]
            return None if answer.fits else DOES_NOT_FIT
        queues = list_local_queues(ns, session)
        emit(args, [q.to_dict() for q in queues], queues_text(queues))
        return None

    return guarded(args, action)
