"""The catalogue's HTTP cases: the upstream code and reason in a ``Status`` naming the field, nothing made.

Requests are sent byte for byte over a fresh TLS connection each (no client library would produce most of
them); the server must keep serving afterwards, and the namespace and the sentinel must be unchanged.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import ssl
from typing import Any

import pytest
from reliability_catalogue import HTTP_CASES, HttpCase

from rayqueue_local import LocalControlPlane

pytestmark = pytest.mark.usefixtures("assert_state_unchanged")


def _send(plane: LocalControlPlane, case: HttpCase, token: str | None) -> tuple[int, Any]:
    host, port = plane.server.removeprefix("https://").split(":")
    ctx = ssl.create_default_context(cafile=str(plane.ca_cert_path))
    conn = http.client.HTTPSConnection(host, int(port), context=ctx, timeout=60)
    headers = {"Content-Type": case.content_type, "Accept": "application/json", **case.headers}
    if token is not None:
        headers.setdefault("Authorization", f"Bearer {token}")
    body = case.body.encode() if isinstance(case.body, str) else case.body
    try:
        conn.putrequest(case.method, case.path, skip_accept_encoding=True)
        for key, value in headers.items():
            conn.putheader(key, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders()
        if body:
            # The server may answer (413) and close before reading the rest.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError, ssl.SSLError):
                conn.send(body)
        resp = conn.getresponse()
        raw = resp.read()
    finally:
        conn.close()
    try:
        return resp.status, json.loads(raw)
    except ValueError:
        return resp.status, raw.decode(errors="replace")


@pytest.mark.parametrize("case", HTTP_CASES, ids=[c.id for c in HTTP_CASES])
def test_bad_request_gets_the_upstream_status_naming_the_field(
    case: HttpCase, rel_plane: LocalControlPlane, rel_user_token: str
) -> None:
    token = {"admin": rel_plane.token, "user": rel_user_token, "none": None}.get(case.token, case.token)
    status, body = _send(rel_plane, case, token)
    assert isinstance(body, dict) and body.get("kind") == "Status", (status, body)
    assert (status, body["reason"], body["code"]) == (case.status, case.reason, case.status), body
    said = body["message"] + json.dumps(body.get("details", {}).get("causes", []))
    assert case.names in said, (case.names, body)
    assert rel_plane.token not in said and rel_user_token not in said
