"""The kube layer's pure parts: exception mapping, retry decisions, credential hygiene.

Real ``kubernetes``/``urllib3`` exception objects, no server (the server-side behaviour is in
test_auth.py and test_wait.py against the local control plane).
"""

from __future__ import annotations

import json
import ssl

import pytest
import urllib3.exceptions as u3
from kubernetes.client.exceptions import ApiException

from rayqueue_sdk.errors import (
    AlreadyExistsError,
    ApiError,
    AuthenticationError,
    ConfigError,
    ConflictError,
    ConnectionFailedError,
    ForbiddenError,
    NotFoundError,
    TLSVerificationError,
)
from rayqueue_sdk.kube.auth import TokenAuthentication
from rayqueue_sdk.kube.errors import translate
from rayqueue_sdk.kube.retry import RetryPolicy, call, is_retryable


def api_exc(status: int, body: dict | None = None, headers: dict | None = None) -> ApiException:
    exc = ApiException(status=status, reason="x")
    exc.body = json.dumps(body) if body is not None else None
    exc.headers = headers
    return exc


def status_body(code: int, reason: str, message: str, causes: list | None = None) -> dict:
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message,
    }
    if causes:
        body["details"] = {"causes": causes}
    return body


FORBIDDEN_MSG = (
    'rayclusters.ray.io "ws" is forbidden: User "alice" cannot create resource "rayclusters" in API group '
    '"ray.io" in the namespace "team-b"'
)


@pytest.mark.parametrize(
    ("status", "reason", "message", "expected"),
    [
        (401, "Unauthorized", "Unauthorized", AuthenticationError),
        (403, "Forbidden", FORBIDDEN_MSG, ForbiddenError),
        (404, "NotFound", 'rayclusters.ray.io "ws" not found', NotFoundError),
        (409, "AlreadyExists", 'rayclusters.ray.io "ws" already exists', AlreadyExistsError),
        (
            409,
            "Conflict",
            "the object has been modified; please apply your changes to the latest version",
            ConflictError,
        ),
        (422, "Invalid", 'RayCluster.ray.io "ws" is invalid: spec.headGroupSpec: Required value', ApiError),
        (429, "TooManyRequests", "too many requests", ApiError),
        (500, "InternalError", "etcd went away", ApiError),
        (503, "ServiceUnavailable", "the server is currently unable to handle the request", ApiError),
    ],
)
def test_status_codes_map_to_the_error_tree(status: int, reason: str, message: str, expected: type) -> None:
    err = translate(
        api_exc(status, status_body(status, reason, message)),
        verb="create",
        resource="rayclusters.ray.io",
        namespace="team-b",
    )
    assert type(err) is expected
    assert isinstance(err, ApiError)
    assert (err.status, err.reason) == (status, reason)
    assert message in err.message


def test_forbidden_names_verb_resource_and_namespace_from_the_status() -> None:
    err = translate(api_exc(403, status_body(403, "Forbidden", FORBIDDEN_MSG)), verb="get", resource="x")
    assert isinstance(err, ForbiddenError) and isinstance(err, PermissionError)
    assert (err.verb, err.resource, err.namespace) == ("create", "rayclusters.ray.io", "team-b")


def test_forbidden_without_a_parsable_message_uses_the_callers_context() -> None:
    err = translate(api_exc(403, None), verb="list", resource="workloads.kueue.x-k8s.io", namespace="ds")
    assert isinstance(err, ForbiddenError)
    assert (err.verb, err.resource, err.namespace) == ("list", "workloads.kueue.x-k8s.io", "ds")


def test_invalid_carries_the_causes() -> None:
    causes = [{"reason": "FieldValueRequired", "field": "spec.headGroupSpec", "message": "Required value"}]
    err = translate(api_exc(422, status_body(422, "Invalid", "is invalid", causes)))
    assert err.causes == causes  # type: ignore[attr-defined]


def test_non_status_body_still_gives_a_useful_message() -> None:
    exc = ApiException(status=502, reason="Bad Gateway")
    exc.body = "<html>bad gateway</html>"
    err = translate(exc, verb="get", resource="rayclusters.ray.io", name="ws")
    assert isinstance(err, ApiError) and err.status == 502
    assert "502" in str(err) and "rayclusters.ray.io" in str(err)


def test_transport_errors() -> None:
    refused = u3.MaxRetryError(None, "/apis", u3.NewConnectionError(None, "[Errno 111] Connection refused"))
    assert type(translate(refused, server="https://h:1")) is ConnectionFailedError
    assert "unreachable" in str(translate(refused, server="https://h:1"))
    timeout = u3.ConnectTimeoutError(None, "timed out")
    assert "timed out" in str(translate(timeout, server="https://h:1"))
    dropped = u3.ProtocolError("Connection aborted.", ConnectionResetError(104, "reset"))
    assert isinstance(translate(dropped), ConnectionFailedError)


@pytest.mark.parametrize(
    "exc",
    [
        ApiException(
            status=0,
            reason="SSLError\n[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: "
            "self-signed certificate in certificate chain",
        ),
        u3.MaxRetryError(
            None, "/apis", u3.SSLError(ssl.SSLCertVerificationError(1, "certificate verify failed"))
        ),
        ssl.SSLCertVerificationError(1, "certificate verify failed: unable to get local issuer certificate"),
    ],
)
def test_tls_failures_explain_ca_cert_path_and_skip_tls(exc: BaseException) -> None:
    err = translate(exc, server="https://api.example:6443")
    assert isinstance(err, TLSVerificationError) and isinstance(err, ConnectionError)
    text = str(err)
    assert "ca_cert_path" in text and "skip_tls" in text and "https://api.example:6443" in text


@pytest.mark.parametrize(
    ("exc", "idempotent", "expected"),
    [
        (api_exc(429), False, True),
        (api_exc(503), False, True),
        (api_exc(500), True, True),
        (api_exc(500), False, False),
        (api_exc(504), True, True),
        (api_exc(400), True, False),
        (api_exc(401), True, False),
        (api_exc(403), True, False),
        (api_exc(404), True, False),
        (api_exc(409), True, False),
        (api_exc(422), True, False),
        (u3.NewConnectionError(None, "refused"), False, True),
        (u3.ProtocolError("Connection aborted.", ConnectionResetError()), True, True),
        (u3.ProtocolError("Connection aborted.", ConnectionResetError()), False, False),
        (u3.ReadTimeoutError(None, "/", "read timed out"), True, True),
        (ssl.SSLCertVerificationError(1, "certificate verify failed"), True, False),
    ],
)
def test_retry_decisions(exc: BaseException, idempotent: bool, expected: bool) -> None:
    assert is_retryable(exc, idempotent=idempotent) is expected


def test_retry_honours_retry_after_and_gives_up_with_a_typed_error() -> None:
    sleeps: list[float] = []

    def always_429() -> None:
        raise api_exc(429, status_body(429, "TooManyRequests", "slow down"), headers={"Retry-After": "1"})

    with pytest.raises(ApiError) as info:
        call(
            always_429,
            verb="list",
            resource="rayclusters.ray.io",
            sleep=sleeps.append,
            policy=RetryPolicy(attempts=4, budget=60),
            request_timeout=None,
        )
    assert sleeps == [1.0, 1.0, 1.0]
    assert info.value.status == 429 and "slow down" in str(info.value)


def test_retry_backoff_is_bounded_by_the_budget() -> None:
    sleeps: list[float] = []

    def always_503() -> None:
        raise api_exc(503, headers={"Retry-After": "10"})

    with pytest.raises(ApiError):
        call(
            always_503,
            verb="get",
            resource="x",
            sleep=sleeps.append,
            policy=RetryPolicy(attempts=10, budget=5.0),
            request_timeout=None,
        )
    assert sleeps == []  # a 10 s Retry-After does not fit a 5 s budget


def test_non_retryable_errors_are_not_retried() -> None:
    calls: list[int] = []

    def forbidden() -> None:
        calls.append(1)
        raise api_exc(403, status_body(403, "Forbidden", FORBIDDEN_MSG))

    with pytest.raises(ForbiddenError):
        call(
            forbidden,
            verb="create",
            resource="rayclusters.ray.io",
            sleep=lambda s: None,
            request_timeout=None,
        )
    assert calls == [1]


TOKEN = "sha256~Zm9vYmFyLXNlY3JldC10b2tlbi0xMjM0NQ"


def test_token_is_not_in_repr_str_or_vars() -> None:
    auth = TokenAuthentication(token=TOKEN, server="https://api.example:6443")
    for text in (repr(auth), str(auth), str(vars(auth)), repr(vars(auth))):
        assert TOKEN not in text
    assert "<redacted>" in repr(auth)


def test_bad_token_or_server_is_config_error_without_the_token() -> None:
    with pytest.raises(ConfigError) as info:
        TokenAuthentication(token=TOKEN, server="api.example:6443")
    assert TOKEN not in str(info.value)
    with pytest.raises(ConfigError):
        TokenAuthentication(token="", server="https://api.example:6443")
