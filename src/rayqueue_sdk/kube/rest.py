"""The one place the SDK turns a method, path, query and body into an HTTP request (:func:`send`; a
streamed answer, a watch's, from :func:`open_stream`), and
the one GET made before any :class:`~rayqueue_sdk.kube.session.KubeSession` exists (:func:`get_json`:
the credential check of :mod:`~rayqueue_sdk.kube.auth` GETs ``/apis``).

Below :mod:`~rayqueue_sdk.kube.auth` and :mod:`~rayqueue_sdk.kube.session`; retries and typed errors
come from :func:`rayqueue_sdk.kube.retry.call`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rayqueue_sdk.kube.retry import DEFAULT_POLICY, DEFAULT_REQUEST_TIMEOUT, RetryPolicy, call

if TYPE_CHECKING:  # pragma: no cover
    from kubernetes.client import ApiClient

__all__ = ["get_json", "open_stream", "send"]


def get_json(
    api: ApiClient,
    path: str,
    *,
    request_timeout: tuple[float, float] | float = DEFAULT_REQUEST_TIMEOUT,
    policy: RetryPolicy = DEFAULT_POLICY,
) -> dict[str, Any]:
    """GET an API path and return the decoded JSON body: :func:`send` under
    :func:`~rayqueue_sdk.kube.retry.call` (typed errors, retries).

    Example:
        >>> from rayqueue_sdk.errors import ConnectionFailedError
        >>> from rayqueue_sdk.kube.connection import build_api_client
        >>> from rayqueue_sdk.kube.retry import RetryPolicy
        >>> api = build_api_client("https://127.0.0.1:1")  # nothing listens on port 1
        >>> try:
        ...     get_json(api, "/apis", request_timeout=1.0, policy=RetryPolicy(attempts=1))
        ... except ConnectionFailedError as err:
        ...     print("unreachable" in str(err))
        True
    """
    body = call(
        send,
        api,
        "GET",
        path,
        timeout=request_timeout,
        verb="get",
        resource=path,
        server=str(api.configuration.host),
        policy=policy,
        request_timeout=None,
    )
    decoded: dict[str, Any] = json.loads(body or b"{}")
    return decoded


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
    response = _issue(
        api, method, path, body=body, query=query, content_type=content_type, accept=accept, timeout=timeout
    )
    return bytes(response.read() or b"")


def open_stream(
    api: ApiClient,
    path: str,
    *,
    query: Mapping[str, Any] | None = None,
    accept: str = "application/json",
    timeout: tuple[float, float] | float = DEFAULT_REQUEST_TIMEOUT,
) -> Any:
    """GET an API path whose answer is a stream (a watch), once: the ``urllib3`` response, its body not
    read yet (iterate it for its lines; ``release_conn()`` when done, ``shutdown()`` from another thread
    ends a blocked read), or ``ApiException`` for a non-2xx answer. The same request as :func:`send`'s.

    Example:
        >>> from rayqueue_sdk.kube.connection import build_api_client
        >>> api = build_api_client("https://127.0.0.1:1")  # nothing listens on port 1
        >>> try:
        ...     open_stream(api, "/api/v1/namespaces/ds/pods", query={"watch": "true"}, timeout=1.0)
        ... except Exception as err:
        ...     print(type(err).__name__)
        NewConnectionError
    """
    return _issue(api, "GET", path, query=query, accept=accept, timeout=timeout).response


def _issue(
    api: ApiClient,
    method: str,
    path: str,
    *,
    body: Any = None,
    query: Mapping[str, Any] | None = None,
    content_type: str = "application/json",
    accept: str = "application/json",
    timeout: tuple[float, float] | float,
) -> Any:
    """The request, through the ``ApiClient``'s configuration (server, TLS, bearer token, User-Agent); its
    ``RESTResponse`` with the body unread, or ``ApiException`` (the body read) for a non-2xx answer."""
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
    if not 200 <= response.status <= 299:
        response.read()
        text = response.data.decode("utf-8", errors="replace") if response.data else None
        raise ApiException.from_response(http_resp=response, body=text, data=None)
    return response
