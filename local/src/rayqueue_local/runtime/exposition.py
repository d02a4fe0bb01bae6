"""A loopback Prometheus ``/metrics`` endpoint: what the control plane's exporters share.

:class:`MetricsEndpoint` owns a ``prometheus_client`` registry in which the subclass registers itself
as the collector (its ``collect()``), renders the text exposition, and serves it from a daemon thread
on ``127.0.0.1:<port>`` (a free port unless one is given).

Example:
    >>> from prometheus_client.core import GaugeMetricFamily
    >>> class One(MetricsEndpoint):
    ...     def collect(self):
    ...         yield GaugeMetricFamily("one", "The number one.", value=1)
    >>> endpoint = One()
    >>> [line for line in endpoint.render().splitlines() if not line.startswith("#")]
    ['one 1.0']
    >>> endpoint.start(); endpoint.url.startswith("http://127.0.0.1:"), endpoint.port > 0
    (True, True)
    >>> endpoint.stop(); endpoint.stop()
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, generate_latest, start_http_server
from prometheus_client.core import GaugeMetricFamily

__all__ = ["MetricsEndpoint"]


class MetricsEndpoint:
    """Serves the series of its subclass's ``collect()`` at ``/metrics`` on a loopback port.

    Example:
        >>> endpoint = MetricsEndpoint(port=0)
        >>> endpoint.target
        '127.0.0.1:0'
        >>> endpoint.render()
        ''
    """

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host, self.port = host, port
        self._registry = CollectorRegistry(auto_describe=False)
        self._registry.register(self)
        self._server: WSGIServer | None = None
        self._thread: threading.Thread | None = None

    def collect(self) -> Iterator[GaugeMetricFamily]:
        """The series to expose (none here; subclasses yield theirs)."""
        yield from ()

    def render(self) -> str:
        """The Prometheus text exposition (format 0.0.4) of every series, by ``prometheus_client``."""
        return generate_latest(self._registry).decode()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` once started."""
        return f"http://{self.host}:{self.port}"

    @property
    def target(self) -> str:
        """``127.0.0.1:<port>``: the scrape target."""
        return f"{self.host}:{self.port}"

    def start(self) -> None:
        """Serve ``/metrics`` from a daemon thread. Idempotent."""
        if self._server is not None:
            return
        self._server, self._thread = start_http_server(self.port, addr=self.host, registry=self._registry)
        self.port = self._server.server_address[1]

    def stop(self) -> None:
        """Stop serving. Idempotent."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None
