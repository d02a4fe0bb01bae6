"""``rayqueue usage [--since 7d] [--prometheus URL] [--json]``: GPU-hours allocated, busy and reclaimed per
cluster of the namespace (:func:`rayqueue_sdk.queues.usage.usage_report`), for pipelines and chargeback.

A bad ``--since`` is refused before anything is sent (exit 2, the message names ``since`` and the allowed
forms). Takes the connection options and ``--json`` of every command group. Imported only when
``rayqueue usage`` runs.

Example:
    >>> from rayqueue_sdk.cli.main import build_parser
    >>> args = build_parser("usage").parse_args(["usage", "--since", "12h", "--json"])
    >>> args.since, args.json
    ('12h', True)
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from rayqueue_sdk.admission.usage import parse_since
from rayqueue_sdk.cli.common import add_connection_options, emit, guarded, session_of
from rayqueue_sdk.queues.usage import PROMETHEUS_URL_ENV, usage_report

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
        "--prometheus",
        default=None,
        help=f"the Prometheus URL to read GPU metrics from (default: ${PROMETHEUS_URL_ENV}; without one, "
        "busy hours are unknown)",
    )
    add_connection_options(parser)
    parser.set_defaults(func=_run)


def _since(text: str) -> str | datetime:
    """``--since``: a duration as it is, or an ISO datetime with a zone."""
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return text


def _run(args: argparse.Namespace) -> int:
    """Run ``rayqueue usage``; returns the exit code."""

    def action() -> int | None:
        since = _since(args.since)
        parse_since(since, datetime.now(UTC))  # refused before anything is sent
        session = session_of(args)
        report = usage_report(args.namespace, since, prometheus=args.prometheus, client=session)
        emit(args, report.to_dict(), report.text())
        return None

    return guarded(args, action)
