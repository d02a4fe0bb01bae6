"""``rayqueue usage [--since 7d] [--until T] [--by queue] [-A] [--prometheus URL] [--json|--csv]``: GPU-hours
allocated, busy and reclaimed per cluster of the namespace (:func:`rayqueue_sdk.queues.usage.usage_report`),
or rolled up per namespace, LocalQueue or ClusterQueue (:func:`rayqueue_sdk.admission.rollup.rollup`), for
pipelines and chargeback.

A bad ``--since``/``--until`` is refused before anything is sent (exit 2, the message names the field and
the allowed forms). Takes the connection options and ``--json`` of every command group; ``--csv`` prints
the rows as CSV with a header. Imported only when ``rayqueue usage`` runs.

Example:
    >>> from rayqueue_sdk.cli.main import build_parser
    >>> args = build_parser("usage").parse_args(["usage", "--since", "12h", "--json"])
    >>> args.since, args.json
    ('12h', True)
"""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime

from rayqueue_sdk.admission.rollup import ROLLUPS, clusters_csv, rollup
from rayqueue_sdk.admission.usage import parse_since
from rayqueue_sdk.cli.common import add_connection_options, emit, guarded, session_of
from rayqueue_sdk.config.idle import PrometheusSource
from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.queues.usage import PROMETHEUS_TOKEN_ENV, PROMETHEUS_URL_ENV, usage_report

__all__ = ["configure"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``rayqueue usage`` to its parser.

    Example:
        >>> p = argparse.ArgumentParser(); configure(p)
        >>> p.parse_args(["--since", "2d"]).since
        '2d'
    """
    parser.add_argument(
        "--since",
        default="7d",
        help="how far back: a duration such as 30m, 12h, 7d or 2w (default 7d), or an ISO datetime with zone",
    )
    parser.add_argument(
        "--until",
        default=None,
        help="the end of the window: an ISO datetime with zone, or a duration before now (default: now)",
    )
    parser.add_argument(
        "--by",
        choices=("cluster", *ROLLUPS),
        default="cluster",
        help="one row per cluster (default), or per namespace, LocalQueue (queue) or ClusterQueue",
    )
    parser.add_argument(
        "-A", "--all-namespaces", action="store_true", help="every namespace the credentials may list"
    )
    parser.add_argument(
        "--prometheus",
        default=None,
        help=f"the Prometheus URL to read GPU metrics from (default: ${PROMETHEUS_URL_ENV}; without one, "
        "busy hours are unknown)",
    )
    parser.add_argument(
        "--prometheus-auth",
        choices=("none", "bearer"),
        default="none",
        help=f"'bearer' sends ${PROMETHEUS_TOKEN_ENV}, else the Kubernetes credentials' token (default none)",
    )
    parser.add_argument("--csv", action="store_true", help="print the rows as CSV with a header")
    add_connection_options(parser)
    parser.set_defaults(func=_run)


def _since(text: str) -> str | datetime:
    """``--since``: a duration as it is, or an ISO datetime with a zone."""
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return text


def _until(text: str | None, now: datetime) -> datetime:
    """``--until``: now, an ISO datetime with a zone, or a duration before now."""
    if text is None:
        return now
    try:
        return parse_since(_since(text), now)
    except ConfigError as err:
        raise ConfigError("until", text, err.allowed) from None


def _run(args: argparse.Namespace) -> int:
    """Run ``rayqueue usage``; returns the exit code."""

    def action() -> int | None:
        if args.csv and args.json:
            raise ConfigError("csv", "--csv --json", "one of --csv or --json", problem="both given")
        now = datetime.now(UTC)
        until = _until(args.until, now)  # both refused before anything is sent
        since = _since(args.since)
        parse_since(since, until)
        url = args.prometheus or os.environ.get(PROMETHEUS_URL_ENV)
        prometheus = PrometheusSource(url=url, auth=args.prometheus_auth) if url else None
        session = session_of(args)
        report = usage_report(
            args.namespace,
            since,
            prometheus=prometheus,
            client=session,
            until=until,
            all_namespaces=args.all_namespaces,
        )
        if args.by == "cluster":
            if args.csv:
                print(clusters_csv(report), end="", flush=True)
            else:
                emit(args, report.to_dict(), report.text())
            return None
        rolled = rollup(report, args.by)
        if args.csv:
            print(rolled.csv(), end="", flush=True)
        else:
            emit(args, rolled.to_dict(), rolled.text())
        return None

    return guarded(args, action)
