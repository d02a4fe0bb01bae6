"""The ``rayqueue`` command: the parser, its command groups and the dispatch.

Built-in command groups are listed in :data:`BUILTIN_GROUPS` (``name -> (help, "module:configure")``;
``configure(parser)`` adds the group's actions and sets ``func``, ``args -> exit code``). A group's module
imports what it runs at module level, so it is loaded only when its command runs (``rayqueue job`` costs
the job layer, ``rayqueue --help`` none of them): the other groups appear in the parser by name and help
alone. Loading a ``"module:configure"`` name goes through :class:`importlib.metadata.EntryPoint`, the
same way as the groups of other packages.

Other packages add command groups through the ``rayqueue.cli`` entry-point group, ``name =
"module:register"`` with ``register(subparsers)`` adding the group (``rayqueue_local`` adds ``local``).
Those are loaded to build the parser, so their module must be light. A group named in
:data:`OPTIONAL_GROUPS` whose package is not installed still parses: running it says what to install
and exits with :data:`~rayqueue_sdk.cli.exit_codes.USAGE`.

Example:
    >>> build_parser().parse_args(["local", "down"]).local_command
    'down'
    >>> sorted(BUILTIN_GROUPS)
    ['cluster', 'job', 'queue', 'usage']
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import EntryPoint, PackageNotFoundError, entry_points, version
from typing import Any

from rayqueue_sdk.cli.exit_codes import INTERRUPTED, USAGE, exit_codes_help

__all__ = [
    "BUILTIN_GROUPS",
    "ENTRY_POINT_GROUP",
    "OPTIONAL_GROUPS",
    "build_parser",
    "command_of",
    "main",
    "plugin_groups",
]

#: The entry-point group through which other packages add ``rayqueue`` command groups.
ENTRY_POINT_GROUP = "rayqueue.cli"

#: The SDK's own command groups: ``name -> (one-line help, "module:configure")``.
BUILTIN_GROUPS: dict[str, tuple[str, str]] = {
    "job": ("submit and follow Ray jobs (RayJob)", "rayqueue_sdk.cli.job:configure"),
    "cluster": ("Ray clusters: list, status, apply, down, wait", "rayqueue_sdk.cli.cluster:configure"),
    "queue": ("Kueue LocalQueues", "rayqueue_sdk.cli.queue:configure"),
    "usage": ("GPU-hours allocated, busy and reclaimed per cluster", "rayqueue_sdk.cli.usage:configure"),
}

#: Groups another package adds: ``name -> (one-line help, how to install it)``.
OPTIONAL_GROUPS: dict[str, tuple[str, str]] = {
    "local": (
        "run a local Kubernetes API with Kueue/KubeRay/KEDA behaviour",
        "pip install rayqueue_local  (from a checkout of rayqueue: pip install -e ./local)",
    ),
}


def plugin_groups() -> list[EntryPoint]:
    """The installed entry points of :data:`ENTRY_POINT_GROUP` (other packages' command groups).

    Example:
        >>> "local" in [ep.name for ep in plugin_groups()]  # rayqueue_local is installed here
        True
    """
    return list(entry_points(group=ENTRY_POINT_GROUP))


def command_of(argv: Sequence[str]) -> str | None:
    """The command group ``argv`` names: its first word that is not an option.

    Example:
        >>> command_of(["-v", "cluster", "list"]), command_of(["--help"])
        ('cluster', None)
    """
    return next((arg for arg in argv if not arg.startswith("-")), None)


def _load(name: str, target: str) -> Callable[..., Any]:
    loaded: Callable[..., Any] = EntryPoint(name, target, ENTRY_POINT_GROUP).load()
    return loaded


def _not_installed(name: str, install: str) -> Callable[[argparse.Namespace], int]:
    def run(_args: argparse.Namespace) -> int:
        print(f"rayqueue: '{name}' needs a package that is not installed; install it with:", file=sys.stderr)
        print(f"  {install}", file=sys.stderr)
        return USAGE

    return run


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``rayqueue`` parser; the built-in group ``command`` (``None``: none) is configured in full.

    Example:
        >>> build_parser("job").parse_args(["job", "status", "nightly", "--json"]).json
        True
    """
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
    for name, (help_text, target) in BUILTIN_GROUPS.items():
        group = subparsers.add_parser(name, help=help_text)
        if name == command:
            _load(name, target)(group)
    installed = set()
    for entry_point in plugin_groups():
        if entry_point.name in BUILTIN_GROUPS or entry_point.name in installed:
            continue
        try:
            register = entry_point.load()
        except ImportError as err:  # metadata left behind by an uninstalled package
            logging.getLogger(__name__).debug("rayqueue %s: %s", entry_point.name, err)
            continue
        register(subparsers)
        installed.add(entry_point.name)
    for name, (help_text, install) in OPTIONAL_GROUPS.items():
        if name not in installed:
            # Takes every word as an argument ("--help" included): running it says what to install.
            group = subparsers.add_parser(name, help=f"{help_text} (not installed)", prefix_chars="\0")
            group.add_argument("args", nargs="*")
            group.set_defaults(func=_not_installed(name, install))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rayqueue`` console script; returns the exit code.

    Example:
        >>> main(["local"])  # no action: argparse says so and exits with its usage code
        Traceback (most recent call last):
        SystemExit: 2
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(command_of(argv))
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return USAGE
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        code: int = func(args)
    except KeyboardInterrupt:
        return INTERRUPTED
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
