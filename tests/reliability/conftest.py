"""One control plane for the bad-input catalogue, with a namespace, a sentinel and a limited user.

Every case ends with :func:`assert_state_unchanged`: the catalogue's namespace holds exactly what it
held before the case (nothing created, nothing half-made), and the sentinel ConfigMap still reads back
over HTTP with the same resourceVersion.
"""

from __future__ import annotations

import http.client
import json
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from reliability_catalogue import NS, SENTINEL

from rayqueue_local import LocalControlPlane
from rayqueue_sdk.kube.client import set_current_client

#: The namespaced kinds a bad input could leave behind.
WATCHED_KINDS = (
    "configmaps",
    "secrets",
    "rayclusters.ray.io",
    "rayjobs.ray.io",
    "workloads.kueue.x-k8s.io",
    "localqueues.kueue.x-k8s.io",
)


@pytest.fixture(scope="session")
def rel_plane(crd_dir: Path) -> Iterator[LocalControlPlane]:
    """The API server alone (no controllers), validating against ../shared/crds."""
    with LocalControlPlane(crd_dir=crd_dir, controllers=[]) as plane:
        plane.store.create("namespaces", {"metadata": {"name": NS}})
        plane.store.create(
            "configmaps", {"metadata": {"name": SENTINEL, "namespace": NS}, "data": {"k": "v"}}
        )
        yield plane


@pytest.fixture(scope="session")
def rel_user_token(rel_plane: LocalControlPlane) -> str:
    """A data scientist limited to the catalogue's namespace."""
    return rel_plane.add_user("rel-user", [NS])


def snapshot(plane: LocalControlPlane) -> dict[tuple[str, str], str]:
    """(kind, name) -> resourceVersion of everything in the catalogue's namespace."""
    seen: dict[tuple[str, str], str] = {}
    for kind in WATCHED_KINDS:
        for obj in plane.store.list(kind, NS):
            seen[(kind, obj["metadata"]["name"])] = obj["metadata"]["resourceVersion"]
    return seen


def read_sentinel(plane: LocalControlPlane) -> dict[str, Any]:
    """The sentinel ConfigMap, read over HTTPS as a client would."""
    host, port = plane.server.removeprefix("https://").split(":")
    ctx = ssl.create_default_context(cafile=str(plane.ca_cert_path))
    conn = http.client.HTTPSConnection(host, int(port), context=ctx, timeout=30)
    try:
        conn.request(
            "GET",
            f"/api/v1/namespaces/{NS}/configmaps/{SENTINEL}",
            headers={"Authorization": f"Bearer {plane.token}"},
        )
        resp = conn.getresponse()
        body = json.loads(resp.read())
    finally:
        conn.close()
    assert resp.status == 200, body
    return body


@pytest.fixture
def assert_state_unchanged(rel_plane: LocalControlPlane) -> Iterator[None]:
    """Around one case: the namespace's contents and the sentinel are exactly as before."""
    before = snapshot(rel_plane)
    sentinel = read_sentinel(rel_plane)
    yield
    assert snapshot(rel_plane) == before, "a bad input created or changed something"
    after = read_sentinel(rel_plane)
    assert after["data"] == sentinel["data"] == {"k": "v"}
    assert after["metadata"]["resourceVersion"] == sentinel["metadata"]["resourceVersion"]


@pytest.fixture
def sdk_client(rel_plane: LocalControlPlane) -> Iterator[Any]:
    """The SDK's current client is the catalogue's plane, as the admin (so only validation can refuse)."""
    client = rel_plane.api_client()
    set_current_client(client)
    try:
        yield client
    finally:
        set_current_client(None)
        client.close()
