"""Map ``kubernetes`` client and ``urllib3`` exceptions to the rayqueue_sdk error tree.

Every API call made by :mod:`rayqueue_sdk.kube` goes through :func:`translate` (usually via
:func:`rayqueue_sdk.kube.retry.call`). Messages are built from the server's ``Status`` body, the
verb, the resource and the server URL: never from request headers, so a bearer token cannot leak
into an exception.

Example:
    >>> from kubernetes.client.exceptions import ApiException
    >>> exc = ApiException(status=404, reason="Not Found")
    >>> exc.body = '{"kind": "Status", "reason": "NotFound", "message": "rayclusters.ray.io ws not found"}'
    >>> err = translate(exc, verb="get", resource="rayclusters.ray.io", namespace="ds")
    >>> type(err).__name__, err.status, err.message
    ('NotFoundError', 404, 'rayclusters.ray.io ws not found')
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from rayqueue_sdk.errors import (
    AlreadyExistsError,
    ApiError,
    AuthenticationError,
    ConflictError,
    ConnectionFailedError,
    ForbiddenError,
    NotFoundError,
    RayQueueError,
    TLSVerificationError,
)

__all__ = ["parse_status", "retry_after", "status_code", "tls_error", "translate", "is_tls_failure"]

# 'rayclusters.ray.io "ws" is forbidden: User "u" cannot create resource "rayclusters" in API group
# "ray.io" in the namespace "other"'
_FORBIDDEN_RE = re.compile(
    r'cannot (?P<verb>[\w-]+) resource "(?P<resource>[^"]+)"'
    r'(?: in API group "(?P<group>[^"]*)")?'
    r'(?: in the namespace "(?P<namespace>[^"]+)")?'
)


def parse_status(body: Any) -> dict[str, Any]:
    """Parse a Kubernetes ``Status`` body (JSON text, bytes or dict); ``{}`` if it is not one.

    Example:
        >>> parse_status('{"kind": "Status", "code": 409, "reason": "AlreadyExists"}')["reason"]
        'AlreadyExists'
        >>> parse_status("<html>bad gateway</html>")
        {}
    """
    if isinstance(body, bytes | bytearray):
        body = body.decode("utf-8", errors="replace")
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            return {}
    return body if isinstance(body, dict) else {}


def status_code(exc: BaseException) -> int:
    """The HTTP status of an ``ApiException`` (0 for transport failures and other exceptions).

    Example:
        >>> from kubernetes.client.exceptions import ApiException
        >>> status_code(ApiException(status=503)), status_code(OSError())
        (503, 0)
    """
    status = getattr(exc, "status", None)
    return status if isinstance(status, int) else 0


def retry_after(exc: BaseException) -> float | None:
    """The ``Retry-After`` delay in seconds of a 429/503 answer, if the server sent one.

    Example:
        >>> from kubernetes.client.exceptions import ApiException
        >>> e = ApiException(status=429); e.headers = {"Retry-After": "2"}
        >>> retry_after(e)
        2.0
    """
    headers = getattr(exc, "headers", None) or {}
    try:
        value = headers.get("Retry-After") or headers.get("retry-after")
    except AttributeError:
        return None
    if value is None:
        details = parse_status(getattr(exc, "body", None)).get("details") or {}
        value = details.get("retryAfterSeconds")
    try:
        return max(0.0, float(value)) if value is not None else None
    except (TypeError, ValueError):
        return None


def _walk(exc: BaseException) -> list[BaseException]:
    """The exception, its ``reason`` (urllib3's MaxRetryError) and its causes."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        cur = todo.pop()
        if cur is None or any(cur is s for s in seen) or len(seen) > 10:
            continue
        seen.append(cur)
        reason = getattr(cur, "reason", None)
        if isinstance(reason, BaseException):
            todo.append(reason)
        todo.append(cur.__cause__)
        todo.append(cur.__context__)
    return seen


def is_tls_failure(exc: BaseException) -> bool:
    """True if ``exc`` (or what it wraps) is a TLS certificate failure.

    Example:
        >>> import ssl
        >>> is_tls_failure(ssl.SSLCertVerificationError("certificate verify failed"))
        True
    """
    # An ssl.SSLError can only exist once ssl is loaded: look it up rather than import it (~10 ms).
    ssl = sys.modules.get("ssl")
    for cur in _walk(exc):
        if ssl is not None and isinstance(cur, ssl.SSLError):
            return True
        name = type(cur).__name__
        if name == "SSLError":
            return True
        if status_code(cur) == 0 and str(getattr(cur, "reason", "") or "").startswith("SSLError"):
            return True
    return False


def _tls_detail(exc: BaseException) -> str:
    for cur in _walk(exc):
        text = str(getattr(cur, "reason", "") or cur)
        match = re.search(r"certificate verify failed[^')\"]*", text)
        if match:
            return match.group(0).strip()
        match = re.search(r"(hostname '[^']*' doesn't match[^')\"]*|Hostname mismatch[^')\"]*)", text)
        if match:
            return match.group(0).strip()
    return "the certificate could not be verified"


def tls_error(server: str | None, exc: BaseException | None = None) -> TLSVerificationError:
    """The error for an untrusted server certificate, explaining ``ca_cert_path`` and ``skip_tls``.

    Example:
        >>> print(tls_error("https://api.example:6443"))  # doctest: +NORMALIZE_WHITESPACE
        TLS verification of https://api.example:6443 failed (the certificate could not be verified).
        Pass ca_cert_path='/path/to/ca.crt' (the CA that signed the API server's certificate), or
        skip_tls=True to connect without verifying it (insecure: anyone on the network path could
        read your token). (see docs/troubleshooting.md#tlsverificationerror)
    """
    detail = _tls_detail(exc) if exc is not None else "the certificate could not be verified"
    where = server or "the API server"
    return TLSVerificationError(
        f"TLS verification of {where} failed ({detail}). Pass ca_cert_path='/path/to/ca.crt' (the CA "
        "that signed the API server's certificate), or skip_tls=True to connect without verifying it "
        "(insecure: anyone on the network path could read your token)."
    )


def _transport(exc: BaseException, server: str | None) -> RayQueueError | None:
    """Map urllib3/socket failures to ConnectionFailedError/TLSVerificationError, else None."""
    if is_tls_failure(exc):
        return tls_error(server, exc)
    try:
        import urllib3.exceptions as u3  # lazy: urllib3 (kubernetes' transport) costs ~70 ms to import
    except ImportError:  # pragma: no cover - urllib3 comes with kubernetes
        return None
    where = server or "the API server"
    chain = _walk(exc)
    # Most specific first, over the whole chain (MaxRetryError wraps the real cause).
    # NewConnectionError subclasses ConnectTimeoutError in urllib3: test it first.
    for cur in chain:
        if isinstance(cur, u3.NewConnectionError | u3.NameResolutionError | ConnectionRefusedError):
            return ConnectionFailedError(f"{where} is unreachable ({_short_cause(cur)})")
    for cur in chain:
        if isinstance(cur, u3.ConnectTimeoutError) or (
            isinstance(cur, TimeoutError | u3.TimeoutError) and "connect" in str(cur).lower()
        ):
            return ConnectionFailedError(f"{where} did not answer in time (connection timed out)")
    for cur in chain:
        if isinstance(cur, u3.ReadTimeoutError | TimeoutError):
            return ConnectionFailedError(f"{where} did not answer in time (read timed out)")
    for cur in chain:
        if isinstance(cur, u3.ProtocolError | u3.HTTPError | ConnectionError | OSError):
            return ConnectionFailedError(f"the connection to {where} failed ({_short_cause(cur)})")
    return None


def _short_cause(exc: BaseException) -> str:
    text = str(exc)
    # urllib3 messages embed the connection object repr; keep the human part.
    text = re.sub(r"<[^>]*>:?\s*", "", text).strip(" :")
    return text[:200] or type(exc).__name__


def translate(
    exc: BaseException,
    *,
    verb: str | None = None,
    resource: str | None = None,
    namespace: str | None = None,
    name: str | None = None,
    server: str | None = None,
) -> RayQueueError:
    """Turn a ``kubernetes``/``urllib3`` exception into the matching :class:`RayQueueError`.

    401 → :class:`AuthenticationError`; 403 → :class:`ForbiddenError` naming the verb, resource and
    namespace (parsed from the server's message, else the caller's context); 404 →
    :class:`NotFoundError`; 409 → :class:`AlreadyExistsError` or :class:`ConflictError`; other
    statuses (422, 429, 5xx, ...) → :class:`ApiError` with the server's reason, message and causes;
    certificate failures → :class:`TLSVerificationError`; other transport failures →
    :class:`ConnectionFailedError`. A :class:`RayQueueError` is returned unchanged.

    Example:
        >>> from kubernetes.client.exceptions import ApiException
        >>> e = ApiException(status=403, reason="Forbidden")
        >>> import json
        >>> e.body = json.dumps({"kind": "Status", "reason": "Forbidden", "message":
        ...     'rayclusters.ray.io is forbidden: User "alice" cannot create resource "rayclusters" '
        ...     'in API group "ray.io" in the namespace "prod"'})
        >>> err = translate(e)
        >>> (err.verb, err.resource, err.namespace)
        ('create', 'rayclusters.ray.io', 'prod')
    """
    if isinstance(exc, RayQueueError):
        return exc
    status = status_code(exc)
    if status == 0:
        mapped = _transport(exc, server)
        if mapped is not None:
            return mapped
        # Raised while the request was being built (e.g. http.client's "Invalid header value ..."):
        # such text may quote request headers, the bearer token among them, so it is not shown.
        kind = type(exc).__name__
        return ApiError(
            0, kind, f"the request could not be sent ({kind}; details withheld: they may hold headers)"
        )

    body = parse_status(getattr(exc, "body", None))
    reason = str(body.get("reason") or getattr(exc, "reason", "") or "")
    message = str(body.get("message") or "") or _default_message(status, verb, resource, namespace, name)
    causes = list((body.get("details") or {}).get("causes") or [])

    if status == 401:
        return AuthenticationError(
            401,
            reason or "Unauthorized",
            f"{message} (the token or credentials were rejected by {server or 'the API server'}; "
            "log in again with a valid token)",
            causes,
        )
    if status == 403:
        match = _FORBIDDEN_RE.search(message)
        f_verb, f_resource, f_ns = verb, resource, namespace
        if match:
            f_verb = match.group("verb")
            group = match.group("group")
            f_resource = f"{match.group('resource')}.{group}" if group else match.group("resource")
            f_ns = match.group("namespace") or (None if "cluster scope" in message else namespace)
        return ForbiddenError(
            403, reason or "Forbidden", message, causes, verb=f_verb, resource=f_resource, namespace=f_ns
        )
    if status == 404:
        return NotFoundError(404, reason or "NotFound", message, causes)
    if status == 409:
        if reason == "AlreadyExists":
            return AlreadyExistsError(409, reason, message, causes)
        return ConflictError(409, reason or "Conflict", message, causes)
    return ApiError(status, reason or _default_reason(status), message, causes)


def _default_reason(status: int) -> str:
    return {
        400: "BadRequest",
        410: "Expired",
        422: "Invalid",
        429: "TooManyRequests",
        500: "InternalError",
        503: "ServiceUnavailable",
        504: "Timeout",
    }.get(status, "Error")


def _default_message(
    status: int, verb: str | None, resource: str | None, namespace: str | None, name: str | None
) -> str:
    what = resource or "the resource"
    if name:
        what += f" {name!r}"
    if namespace:
        what += f" in namespace {namespace!r}"
    action = f"{verb} {what}" if verb else what
    return f"the API server answered {status} to {action}"
