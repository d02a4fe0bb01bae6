"""The ``rayqueue`` command.

Subcommands live in their own modules and register themselves through :data:`SUBCOMMANDS`:
``name -> "module:function"``, where ``function(subparsers)`` adds an ``argparse`` sub-parser and
sets ``func`` (``args -> exit code``) as its default. Those modules import only ``argparse`` at
module level, so ``rayqueue --help`` stays fast; heavy imports happen inside ``func``.

To add a subcommand, write ``rayqueue_sdk/<area>/cli.py`` with ``def register(subparsers): ...``
and add ``"<name>": "rayqueue_sdk.<area>.cli:register"`` below.

Example:
    >>> main(["--version"])  # doctest: +SKIP
    rayqueue 0.1.0
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["SUBCOMMANDS", "build_parser", "exit_codes_help", "main"]

#: ``name -> "module:function"``; ``function(subparsers)`` registers the subcommand ``name``.
SUBCOMMANDS: dict[str, str] = {
    "local": "rayqueue_local.cli:register",
    "job": "rayqueue_sdk.cli.job:register",
    "cluster": "rayqueue_sdk.cli.cluster:register",
    "queue": "rayqueue_sdk.cli.cluster:register_queue",
}


def build_parser() -> argparse.ArgumentParser:
    """The full parser, with every registered subcommand.

    Example:
        >>> build_parser().parse_args(["local", "down"]).local_command
        'down'
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        pkg_version = version("rayqueue_sdk")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        pkg_version = "unknown"
    parser = argparse.ArgumentParser(
        prog="rayqueue",
        description="Run Ray on Kubernetes through Kueue queues, without YAML.",
        epilog=exit_codes_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"rayqueue {pkg_version}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for target in SUBCOMMANDS.values():
        module_name, _, function = target.partition(":")
        getattr(importlib.import_module(module_name), function)(subparsers)
    return parser


def exit_codes_help() -> str:
    """The exit-code table shown by ``rayqueue --help`` (for CI pipelines), from the CLI's own tables.

    Example:
        >>> "8  a job failed or was stopped" in exit_codes_help()
        True
    """
    from rayqueue_sdk.cli.cluster import EXIT_CODES
    from rayqueue_sdk.cli.job import JOB_FAILED

    by_code: dict[int, list[str]] = {}
    for name, code in EXIT_CODES.items():
        by_code.setdefault(code, []).append(name)
    lines = ["exit codes:", "  0  success"]
    lines += [f"  {code}  {', '.join(names)}" for code, names in sorted(by_code.items())]
    lines.append(f"  {JOB_FAILED}  a job failed or was stopped")
    lines.append("  130  interrupted (Ctrl-C)")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rayqueue`` console script; returns the exit code."""
    import logging

    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        code: int = func(args)
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
