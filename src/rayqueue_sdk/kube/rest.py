"""Raw GETs of API paths the generated client has no method for (discovery, the visibility API).

Below :mod:`~rayqueue_sdk.kube.auth` (the credential check GETs ``/apis``) and
:mod:`~rayqueue_sdk.kube.resources`; every call goes through :func:`rayqueue_sdk.kube.retry.call`:
bounded retries, typed errors.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rayqueue_sdk.kube.connection import server_of
from rayqueue_sdk.kube.retry import DEFAULT_POLICY, DEFAULT_REQUEST_TIMEOUT, RetryPolicy, call

if TYPE_CHECKING:  # pragma: no cover
    from kubernetes.client import ApiClient

__all__ = ["get_path", "get_text", "send", "send_path"]


def get_path(
    api: ApiClient,
    path: str,
    *,
    query: dict[str, Any] | None = None,
    request_timeout: tuple[float, float] | float = DEFAULT_REQUEST_TIMEOUT,
    policy: RetryPolicy = DEFAULT_POLICY,
    deadline: float | None = None,
) -> dict[str, Any]:
    """GET an arbitrary API path and return the decoded JSON body (typed errors, retries).

    Example:
        >>> from rayqueue_sdk.errors import ConnectionFailedError
        >>> from rayqueue_sdk.kube.connection import build_api_client
        >>> from rayqueue_sdk.kube.retry import RetryPolicy
        >>> api = build_api_client("https://127.0.0.1:1")  # nothing listens on port 1
        >>> try:
        ...     get_path(api, "/apis", request_timeout=1.0, policy=RetryPolicy(attempts=1))
        ... except ConnectionFailedError as err:
        ...     print("unreachable" in str(err))
        True
    """
    body = _get_bytes(api, path, "application/json", query, request_timeout, policy, deadline)
    decoded: dict[str, Any] = json.loads(body or b"{}")
    return decoded


def get_text(
    api: ApiClient,
    path: str,
    *,
    query: dict[str, Any] | None = None,
    request_timeout: tuple[float, float] | float = DEFAULT_REQUEST_TIMEOUT,
    policy: RetryPolicy = DEFAULT_POLICY,
) -> str:
    """GET an API path whose answer is text (``pods/{name}/log``), decoded as UTF-8 (typed errors, retries).

    Example:
        >>> from rayqueue_sdk.errors import ConnectionFailedError
        >>> from rayqueue_sdk.kube.connection import build_api_client
        >>> from rayqueue_sdk.kube.retry import RetryPolicy
        >>> api = build_api_client("https://127.0.0.1:1")
        >>> try:
        ...     get_text(api, "/api/v1/namespaces/ds/pods/p/log", policy=RetryPolicy(attempts=1))
        ... except ConnectionFailedError as err:
        ...     print("unreachable" in str(err))
        True
    """
    body = _get_bytes(api, path, "text/plain, */*", query, request_timeout, policy, None)
    return body.decode("utf-8", errors="replace")


def _get_bytes(
    api: ApiClient,
    path: str,
    accept: str,
    query: dict[str, Any] | None,
    request_timeout: tuple[float, float] | float,
    policy: RetryPolicy,
    deadline: float | None,
) -> bytes:
    def _get() -> bytes:
        from kubernetes.client.exceptions import ApiException  # lazy: kubernetes is slow to import

        params = api.param_serialize(
            method="GET",
            resource_path=path,
            query_params=list((query or {}).items()),
            header_params={"Accept": accept},
            auth_settings=["BearerToken"],
        )
        response = api.call_api(*params, _request_timeout=request_timeout)
        response.read()
        if not 200 <= response.status <= 299:
            text = response.data.decode("utf-8", errors="replace") if response.data else None
            raise ApiException.from_response(http_resp=response, body=text, data=None)
        return bytes(response.data or b"")

    return call(
        _get,
        verb="get",
        resource=path,
        server=server_of(api),
        policy=policy,
        deadline=deadline,
        request_timeout=None,
    )


def send_path(
    api: ApiClient,
    method: str,
    path: str,
    body: Any = None,
    *,
    content_type: str = "application/json",
    verb: str,
    resource: str,
    namespace: str | None = None,
    name: str | None = None,
    idempotent: bool = True,
    query: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Send ``method`` to an API path with a JSON body; the decoded answer (typed errors, retries).

    For the kinds the generated ``CustomObjectsApi`` cannot reach (the core group's ``/api/v1``) or
    reaches only typed: ServiceAccounts, Secrets, Roles, ConfigMaps, Deployments.
    ``idempotent=False`` (a create) is not repeated after an unclear failure.

    Example:
        >>> from rayqueue_sdk.errors import ConnectionFailedError
        >>> from rayqueue_sdk.kube.connection import build_api_client
        >>> api = build_api_client("https://127.0.0.1:1")
        >>> try:
        ...     send_path(api, "DELETE", "/api/v1/namespaces/ds/configmaps/x", verb="delete",
        ...               resource="configmaps", idempotent=False)
        ... except ConnectionFailedError as err:
        ...     print("unreachable" in str(err))
        True
    """

    def _send() -> dict[str, Any]:
        from kubernetes.client.exceptions import ApiException  # lazy: kubernetes is slow to import

        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        params = api.param_serialize(
            method=method,
            resource_path=path,
            query_params=list((query or {}).items()),
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
        )
        response = api.call_api(*params, _request_timeout=DEFAULT_REQUEST_TIMEOUT)
        response.read()
        if not 200 <= response.status <= 299:
            text = response.data.decode("utf-8", errors="replace") if response.data else None
            raise ApiException.from_response(http_resp=response, body=text, data=None)
        doc: dict[str, Any] = json.loads(response.data or b"{}")
        return doc

    return call(
        _send,
        verb=verb,
        resource=resource,
        namespace=namespace,
        name=name,
        server=server_of(api),
        idempotent=idempotent,
        request_timeout=None,
    )


def send(
    api: ApiClient,
    method: str,
    path: str,
    *,
    body: Any = None,
    query: Mapping[str, Any] | None = None,
    content_type: str = "application/json",
    accept: str = "application/json",
    timeout: tuple[float, float] | float = DEFAULT_REQUEST_TIMEOUT,
) -> bytes:
    """Send one request to an API path, once (no retries: callers wrap it in
    :func:`~rayqueue_sdk.kube.retry.call`); the answer's body, or ``ApiException`` for a non-2xx answer.

    The one place the SDK turns a method, path, query and body into an HTTP request (through the
    ``ApiClient``'s configuration: server, TLS, bearer token).

    Example:
        >>> from kubernetes.client.exceptions import ApiException
        >>> from rayqueue_sdk.kube.connection import build_api_client
        >>> api = build_api_client("https://127.0.0.1:1")  # nothing listens on port 1
        >>> try:
        ...     send(api, "GET", "/apis", timeout=1.0)
        ... except Exception as err:
        ...     print(type(err).__name__)
        NewConnectionError
    """
    from kubernetes.client.exceptions import ApiException  # lazy: kubernetes is slow to import

    headers = {"Accept": accept}
    if body is not None:
        headers["Content-Type"] = content_type
    params = api.param_serialize(
        method=method,
        resource_path=path,
        query_params=list((query or {}).items()),
        header_params=headers,
        body=body,
        auth_settings=["BearerToken"],
    )
    response = api.call_api(*params, _request_timeout=timeout)
    response.read()
    if not 200 <= response.status <= 299:
        text = response.data.decode("utf-8", errors="replace") if response.data else None
        raise ApiException.from_response(http_resp=response, body=text, data=None)
    return bytes(response.data or b"")
