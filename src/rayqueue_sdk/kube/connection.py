"""The bottom of the connection stack: the ``ApiClient`` factory, what the SDK knows about each client,
and the process-wide "current client" slot.

It imports nothing of the SDK: :mod:`~rayqueue_sdk.kube.rest` and :mod:`~rayqueue_sdk.kube.auth` build
on it, and :mod:`~rayqueue_sdk.kube.client` (``get_client``) sits on top of both, so that credentials are
auto-detected there without a cycle.

``kubernetes`` is imported lazily, inside the functions, so ``import rayqueue_sdk`` stays light.

Example:
    >>> api = build_api_client("https://127.0.0.1:6443", token="s3cr3t", verify=False)
    >>> server_of(api)
    'https://127.0.0.1:6443'
    >>> "s3cr3t" in repr(api)
    False
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

if TYPE_CHECKING:  # pragma: no cover
    from kubernetes.client import ApiClient

__all__ = [
    "ClientInfo",
    "ClientSource",
    "build_api_client",
    "cache_for",
    "clear_current_client",
    "current_client",
    "current_client_or",
    "info_of",
    "register",
    "remembered",
    "server_of",
    "set_current_client",
]


class ClientSource(Protocol):
    """Anything that can hand out an ``ApiClient`` (the authentication classes)."""

    def api_client(self) -> ApiClient: ...


@dataclass(frozen=True)
class ClientInfo:
    """What the SDK knows about a client besides its configuration (never the token).

    Attributes:
        server: the API server URL.
        source: how it was obtained: ``"token"``, ``"kubeconfig"``, ``"in-cluster"`` or ``"explicit"``.
        namespace: the namespace that credentials imply (kubeconfig context, service account), if any.
        verify_tls: whether the server certificate is verified.
    """

    server: str
    source: str
    namespace: str | None = None
    verify_tls: bool = True


_lock = threading.RLock()
T = TypeVar("T")
_current: ApiClient | None = None
_info: weakref.WeakKeyDictionary[Any, ClientInfo] = weakref.WeakKeyDictionary()
_caches: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()


def build_api_client(
    server: str,
    *,
    token: str | None = None,
    ca_cert_path: str | None = None,
    verify: bool = True,
    cert_file: str | None = None,
    key_file: str | None = None,
    source: str = "explicit",
    namespace: str | None = None,
) -> ApiClient:
    """A new ``kubernetes.client.ApiClient`` for ``server``.

    urllib3's own retries are switched off: :mod:`rayqueue_sdk.kube.retry` retries with bounded
    backoff instead, so an unreachable server fails fast and predictably.

    Example:
        >>> api = build_api_client("https://k8s.example:6443", token="t", ca_cert_path=None)
        >>> api.configuration.verify_ssl
        True
    """
    from kubernetes import client as k8s  # lazy: kubernetes costs ~0.4 s to import

    cfg = k8s.Configuration()
    cfg.host = server.rstrip("/")
    cfg.verify_ssl = verify
    if ca_cert_path:
        cfg.ssl_ca_cert = ca_cert_path
    if cert_file:
        cfg.cert_file = cert_file
    if key_file:
        cfg.key_file = key_file
    if token:
        cfg.api_key = {"authorization": token}
        cfg.api_key_prefix = {"authorization": "Bearer"}
    cfg.retries = False
    api = k8s.ApiClient(configuration=cfg)
    register(api, ClientInfo(server=cfg.host, source=source, namespace=namespace, verify_tls=verify))
    return api


def register(api: ApiClient, info: ClientInfo) -> ApiClient:
    """Remember what the SDK knows about ``api`` (see :class:`ClientInfo`). Returns ``api``.

    The transport is not changed here: ``api`` must have been made from a ``Configuration`` with
    ``retries = False`` (urllib3's pool reads it once, when the ``ApiClient`` is made), so that
    :mod:`rayqueue_sdk.kube.retry` is the only layer that retries.
    """
    with _lock:
        _info[api] = info
    return api


def info_of(api: ApiClient) -> ClientInfo:
    """The :class:`ClientInfo` of ``api`` (a minimal one for clients the SDK did not build)."""
    with _lock:
        found = _info.get(api)
    if found is not None:
        return found
    cfg = api.configuration
    return ClientInfo(server=str(cfg.host), source="explicit", verify_tls=bool(cfg.verify_ssl))


def server_of(api: ApiClient) -> str:
    """The API server URL of ``api``."""
    return str(api.configuration.host)


def cache_for(api: ApiClient) -> dict[str, Any]:
    """A per-client dict for cached facts (API discovery); dropped with the client."""
    with _lock:
        cache = _caches.get(api)
        if cache is None:
            cache = _caches[api] = {}
        return cache


def remembered(api: ApiClient, key: str, ttl: float, compute: Callable[[], T]) -> T:
    """``compute()``, remembered in :func:`cache_for` ``(api)`` under ``key`` for ``ttl`` seconds (for
    facts that change slowly and cost a request, e.g. an admission check's retry limit).

    Example:
        >>> api = build_api_client("https://k8s.example:6443")
        >>> calls = []
        >>> first = remembered(api, "answer", 60, lambda: calls.append(1) or 42)
        >>> second = remembered(api, "answer", 60, lambda: calls.append(1) or 43)
        >>> first, second, len(calls)
        (42, 42, 1)
    """
    cache = cache_for(api)
    hit = cache.get(f"remembered:{key}")
    now = time.monotonic()
    if hit is not None and now - hit[0] < ttl:
        return cast(T, hit[1])
    value = compute()
    cache[f"remembered:{key}"] = (now, value)
    return value


def set_current_client(api: ApiClient | None) -> None:
    """Make ``api`` the client later SDK calls use by default (``None`` clears it).

    Example:
        >>> api = build_api_client("https://k8s.example:6443")
        >>> set_current_client(api); current_client() is api
        True
        >>> set_current_client(None); current_client() is None
        True
    """
    global _current
    with _lock:
        _current = api


def clear_current_client(api: ApiClient | None = None) -> None:
    """Forget the current client (only if it is ``api``, when given)."""
    global _current
    with _lock:
        if api is None or _current is api:
            _current = None


def current_client() -> ApiClient | None:
    """The client set by the last ``login()``, or ``None``."""
    with _lock:
        return _current


def current_client_or(make: Callable[[], ApiClient]) -> ApiClient:
    """The current client; if there is none, ``make()`` one and make it current (atomically, once).

    Example:
        >>> set_current_client(None)
        >>> api = current_client_or(lambda: build_api_client("https://k8s.example:6443"))
        >>> current_client_or(lambda: build_api_client("https://other.example")) is api
        True
        >>> set_current_client(None)
    """
    global _current
    with _lock:
        if _current is None:
            _current = make()
        return _current
