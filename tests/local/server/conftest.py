"""Fixtures for the API server conformance suite: one control plane per session, real clients.

``cp`` is the session's control plane (from the ``rayqueue_local`` pytest plugin, validating
against ../shared/crds); ``raw`` sends hand-made HTTPS requests for the bad inputs no client
library would produce.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import ssl
from collections.abc import Iterable, Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def cp(crd_dir: Any) -> Iterator[Any]:
    """The API server alone (no controllers), validating against ../shared/crds, shared by this suite.

    Controllers write status and labels on their own schedule; conformance tests need a server
    whose objects change only when the test changes them.
    """
    from rayqueue_local import LocalControlPlane

    with LocalControlPlane(crd_dir=crd_dir, controllers=[]) as plane:
        yield plane


@pytest.fixture(scope="session")
def api_client(cp: Any) -> Iterator[Any]:
    """Admin ``ApiClient`` for ``cp`` (shadows the plugin's fixture in this directory)."""
    api = cp.api_client()
    yield api
    api.close()


@pytest.fixture
def namespace(cp: Any, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace in ``cp`` (shadows the plugin's fixture in this directory)."""
    import re
    import uuid

    stem = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower()).strip("-")[:40].strip("-")
    name = f"{stem}-{uuid.uuid4().hex[:6]}"
    cp.store.create("namespaces", {"metadata": {"name": name}})
    yield name
    cp.store.delete("namespaces", None, name)


@pytest.fixture(autouse=True)
def _no_leftover_faults(cp: Any) -> Iterator[None]:
    yield
    cp.faults.clear()


@pytest.fixture(scope="session")
def core(api_client: Any) -> Any:
    from kubernetes import client

    return client.CoreV1Api(api_client)


@pytest.fixture(scope="session")
def custom(api_client: Any) -> Any:
    from kubernetes import client

    return client.CustomObjectsApi(api_client)


@pytest.fixture(scope="session")
def dyn(api_client: Any) -> Any:
    from kubernetes import dynamic

    return dynamic.DynamicClient(api_client)


class Raw:
    """A keep-alive HTTPS connection that sends exactly the bytes a test wants."""

    def __init__(self, cp: Any) -> None:
        self.cp = cp
        host, port = cp.server.removeprefix("https://").split(":")
        self.ctx = ssl.create_default_context(cafile=str(cp.ca_cert_path))
        self.conn = http.client.HTTPSConnection(host, int(port), context=self.ctx, timeout=30)

    def request(
        self,
        method: str,
        path: str,
        body: bytes | str | None = None,
        *,
        content_type: str = "application/json",
        token: str | None = "admin",
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any, http.client.HTTPResponse]:
        hdrs = {"Content-Type": content_type, **(headers or {})}
        if token is not None:
            hdrs["Authorization"] = f"Bearer {self.cp.token if token == 'admin' else token}"
        data = body.encode() if isinstance(body, str) else body
        self.conn.request(method, path, body=data, headers=hdrs)
        resp = self.conn.getresponse()
        payload = resp.read()
        try:
            parsed = json.loads(payload) if payload else None
        except ValueError:
            parsed = payload.decode()
        return resp.status, parsed, resp

    def exchange(self, head: bytes, chunks: Iterable[bytes] = ()) -> bytes:
        """Send raw bytes on a fresh TLS connection (``head``, then ``chunks`` until the server stops
        reading) and return everything the server answered before closing."""
        host, port = self.cp.server.removeprefix("https://").split(":")
        data = b""
        with (
            socket.create_connection((host, int(port)), timeout=30) as plain,
            self.ctx.wrap_socket(plain, server_hostname=host) as tls,
        ):
            tls.sendall(head)
            with contextlib.suppress(OSError):  # the server may close while we still send
                for chunk in chunks:
                    tls.sendall(chunk)
            with contextlib.suppress(OSError):
                while part := tls.recv(65536):
                    data += part
        return data

    def close(self) -> None:
        self.conn.close()


@pytest.fixture
def raw(cp: Any) -> Iterator[Raw]:
    r = Raw(cp)
    yield r
    r.close()


def _raycluster(name: str, *, labels: dict[str, str] | None = None, replicas: Any = 1) -> dict[str, Any]:
    container = {"name": "ray", "image": "rayproject/ray:2.40.0"}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {
            "rayVersion": "2.40.0",
            "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [container]}}},
            "workerGroupSpecs": [
                {
                    "groupName": "workers",
                    "replicas": replicas,
                    "minReplicas": 0,
                    "maxReplicas": 4,
                    "rayStartParams": {},
                    "template": {"spec": {"containers": [container]}},
                }
            ],
        },
    }


@pytest.fixture(scope="session")
def raycluster() -> Any:
    """``raycluster(name, labels=..., replicas=...)``: a RayCluster that fits the upstream CRD schema."""
    return _raycluster
