"""Ray's client server (the ``ray://`` proxy) for one local head, with per-client ports of its own.

Why this exists. For each ``ray.init("ray://host:port")`` Ray's client proxy starts a *specific
server* on the first port of a fixed range, 23000-23999, that a test ``bind`` finds free
(``ray.util.client.server.proxier.MIN_SPECIFIC_SERVER_PORT``; ``ray start`` has no option for it).
The test socket is closed and the server binds the port a second or two later, so two heads on one
machine that take a connection in the same second both pick 23000: one specific server fails to
bind and the client gets ``ConnectionAbortedError: Initialization failure from server ... Starting
Ray client server failed. See ray_client_server_23000.err``. Two local control planes side by side
(CI and a notebook) hit this about every other time they connect at once.

So the head's ``client`` port is not served by the proxy that ``ray start`` starts (it cannot be
turned off: ``--ray-client-server-port 0`` is refused, so that one gets a port nobody connects to);
:class:`~rayqueue_local.runtime.raylocal.RayHead` runs this module on it instead::

    python -m rayqueue_local.runtime.rayclient --specific-ports 24100-24116 -- \\
        --address 127.0.0.1:<gcs> --host 127.0.0.1 --port <client> --mode proxy \\
        --runtime-env-agent-address http://127.0.0.1:<runtime-env agent>

which sets the proxier's range to the head's private, pre-checked run of ports and then runs Ray's
own client server ``main()`` with the arguments after ``--``: the protocol, the specific servers and
their logs (``ray_client_server_<port>.err`` in the head's session logs) are Ray's.

Example:
    >>> parse_range("24100-24116")
    range(24100, 24116)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main", "parse_range"]


def parse_range(text: str) -> range:
    """``"LOW-HIGH"`` -> ``range(LOW, HIGH)`` (HIGH excluded, as Ray's proxier uses it).

    Example:
        >>> parse_range("5-4")
        Traceback (most recent call last):
        ...
        ValueError: --specific-ports: got '5-4'; allowed: LOW-HIGH with 1024 <= LOW < HIGH <= 65536
    """
    low, _, high = text.partition("-")
    if low.isdigit() and high.isdigit() and 1024 <= int(low) < int(high) <= 65536:
        return range(int(low), int(high))
    raise ValueError(f"--specific-ports: got {text!r}; allowed: LOW-HIGH with 1024 <= LOW < HIGH <= 65536")


def main(argv: Sequence[str] | None = None) -> None:
    """Run Ray's client proxy with its per-client servers on ``--specific-ports``.

    Everything after ``--`` goes to ``ray.util.client.server``'s own command line.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    split = args.index("--") if "--" in args else len(args)
    parser = argparse.ArgumentParser(prog="python -m rayqueue_local.runtime.rayclient")
    parser.add_argument("--specific-ports", type=parse_range, required=True)
    ports = parser.parse_args(args[:split]).specific_ports
    from ray.util.client.server import proxier, server  # lazy: ray is heavy; only this process runs it

    # ProxyManager reads these module globals when it is created, i.e. inside server.main().
    proxier.MIN_SPECIFIC_SERVER_PORT, proxier.MAX_SPECIFIC_SERVER_PORT = ports.start, ports.stop
    sys.argv = ["ray.util.client.server", *args[split + 1 :]]
    server.main()


if __name__ == "__main__":  # pragma: no cover - run as a process by RayHead
    main()
