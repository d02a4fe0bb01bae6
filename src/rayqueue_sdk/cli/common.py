"""What every ``rayqueue`` command group shares: the connection options, the client they name, one way
to print a result (text, or one JSON document per line with ``--json``) and one way to report an error
(a line on stderr, a JSON document with ``--json``, and the exit code of :mod:`.exit_codes`).

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(); add_connection_options(parser)
    >>> args = parser.parse_args(["-n", "ds", "--json"])
    >>> (args.namespace, args.json, client_source(args), session_of(args).namespace)
    ('ds', True, None, 'ds')
    >>> emit(args, {"b": 1, "a": "x"}, "ignored with --json")
    {"a": "x", "b": 1}
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from typing import Any

from rayqueue_sdk.cli.exit_codes import SUCCESS, exit_code
from rayqueue_sdk.errors import ConfigError, RayQueueError
from rayqueue_sdk.kube.auth import KubeConfigFileAuthentication
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.manifests.rules import check_dns_label

__all__ = [
    "ERROR_DETAILS",
    "add_connection_options",
    "client_source",
    "emit",
    "fail",
    "guarded",
    "namespace_name",
    "seconds",
    "session_of",
]

#: Attributes of an error copied into the ``--json`` error document when the error has them.
ERROR_DETAILS = ("log_tail", "available", "reason", "phase", "position")


def seconds(text: str) -> float:
    """An argparse type: a finite number of seconds >= 0 (``--timeout``, ``--queue-timeout``).

    Example:
        >>> seconds("90")
        90.0
        >>> try:
        ...     seconds("-1")
        ... except argparse.ArgumentTypeError as err:
        ...     print(err)
        got '-1'; allowed: a number of seconds >= 0
    """
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"got {text!r}; allowed: a number of seconds >= 0")
    return value


def namespace_name(text: str) -> str:
    """An argparse type: a namespace name (a DNS-1123 label), checked before anything is sent.

    Example:
        >>> namespace_name("team-a")
        'team-a'
        >>> try:
        ...     namespace_name("Team A")
        ... except argparse.ArgumentTypeError as err:
        ...     print(str(err)[:42])
        namespace: not a DNS-1123 label (got 'Team
    """
    try:
        check_dns_label(text, "namespace")
    except ConfigError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def add_connection_options(parser: argparse.ArgumentParser) -> None:
    """``-n/--namespace``, ``--kubeconfig``, ``--context`` and ``--json``.

    Example:
        >>> p = argparse.ArgumentParser(); add_connection_options(p)
        >>> p.parse_args(["--context", "dev"]).context
        'dev'
    """
    parser.add_argument(
        "-n", "--namespace", type=namespace_name, help="namespace (default: the credentials' namespace)"
    )
    parser.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
    parser.add_argument("--context", help="kubeconfig context (default: the current one)")
    parser.add_argument("--json", action="store_true", help="print one JSON document (per line)")


def client_source(args: argparse.Namespace) -> KubeConfigFileAuthentication | None:
    """The credentials ``--kubeconfig``/``--context`` name; ``None``: the usual detection.

    Example:
        >>> client_source(argparse.Namespace(kubeconfig="/k/config", context="dev")).context
        'dev'
    """
    if args.kubeconfig or args.context:
        return KubeConfigFileAuthentication(args.kubeconfig, context=args.context)
    return None


def session_of(args: argparse.Namespace) -> KubeSession:
    """The one session a command uses: the credentials of :func:`client_source` in ``--namespace`` (else
    the credentials' namespace), connected on first use.

    Example:
        >>> session_of(argparse.Namespace(kubeconfig=None, context=None, namespace="ds")).namespace
        'ds'
    """
    return KubeSession(client_source(args), namespace=args.namespace)


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    """Print ``data`` as one line of JSON with ``--json``, else ``text``.

    Example:
        >>> emit(argparse.Namespace(json=False), {"a": 1}, "a is 1")
        a is 1
    """
    if getattr(args, "json", False):
        print(json.dumps(data, sort_keys=True, default=str), flush=True)
    else:
        print(text, flush=True)


def fail(args: argparse.Namespace, err: RayQueueError) -> int:
    """Report ``err`` (stderr; and a JSON document on stdout with ``--json``); returns its exit code.

    Example:
        >>> from rayqueue_sdk.errors import QueueNotFoundError
        >>> fail(argparse.Namespace(json=True), QueueNotFoundError("q", ["batch"]))  # doctest: +ELLIPSIS
        {"available": ["batch"], "error": "QueueNotFoundError", "exit_code": 3, "message": "..."}
        3
    """
    code = exit_code(err)
    payload: dict[str, Any] = {"error": type(err).__name__, "message": str(err), "exit_code": code}
    payload.update({attr: getattr(err, attr) for attr in ERROR_DETAILS if hasattr(err, attr)})
    if getattr(args, "json", False):
        emit(args, payload, "")
    print(f"rayqueue: {type(err).__name__}: {err}", file=sys.stderr)
    return code


def guarded(args: argparse.Namespace, action: Callable[[], int | None]) -> int:
    """Run ``action``; its exit code (``None``: success), or that of the :class:`RayQueueError` it raised.

    Example:
        >>> from rayqueue_sdk.errors import ConfigError
        >>> def bad() -> None:
        ...     raise ConfigError("--env", "X", "KEY=VALUE")
        >>> quiet = argparse.Namespace(json=False)
        >>> guarded(quiet, lambda: None), guarded(quiet, lambda: 8), guarded(quiet, bad)
        (0, 8, 2)
    """
    try:
        code = action()
    except RayQueueError as err:
        return fail(args, err)
    return SUCCESS if code is None else code
