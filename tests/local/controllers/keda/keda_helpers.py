"""Helpers for the KEDA tests: a stand-in Prometheus query API, manifests and a polling wait."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse


def wait_for(
    fetch: Callable[[], Any], done: Callable[[Any], bool], timeout: float = 120.0, every: float = 0.2
) -> Any:
    """Poll ``fetch()`` until ``done(value)``; returns the last value (the caller asserts on it)."""
    deadline = time.monotonic() + timeout
    value = fetch()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(every)
        value = fetch()
    return value


class StubPrometheus:
    """A loopback HTTP server answering ``/api/v1/query`` with ``series`` (a list of values), and
    recording each request's query and headers. It stands for "any Prometheus" KEDA may query."""

    def __init__(self) -> None:
        self.series: list[float] = [0.0]
        self.status = 200
        self.requests: list[dict[str, Any]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                url = urlparse(self.path)
                stub.requests.append(
                    {"path": url.path, "query": parse_qs(url.query), "headers": dict(self.headers)}
                )
                result = [
                    {"metric": {"exported_pod": f"p{i}"}, "value": [time.time(), str(v)]}
                    for i, v in enumerate(stub.series)
                ]
                body = json.dumps(
                    {"status": "success", "data": {"resultType": "vector", "result": result}}
                ).encode()
                self.send_response(stub.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def scaled_object(name: str, target: dict[str, str], metadata: dict[str, Any], **spec: Any) -> dict:
    """A ScaledObject with one Prometheus trigger."""
    trigger: dict[str, Any] = {"type": "prometheus", "metadata": metadata}
    if "auth" in spec:
        trigger["authenticationRef"] = {"name": spec.pop("auth"), "kind": "TriggerAuthentication"}
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": name},
        "spec": {"scaleTargetRef": target, "triggers": [trigger], **spec},
    }


def conditions(obj: dict) -> dict[str, tuple[str, str, str]]:
    """type -> (status, reason, message)."""
    return {
        c["type"]: (c["status"], c.get("reason", ""), c.get("message", ""))
        for c in (obj.get("status") or {}).get("conditions", [])
    }
