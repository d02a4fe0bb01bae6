"""The bottom of the connection stack: the ``ApiClient`` factory, what the SDK knows about each client
(one :class:`ClientState` per client, from :func:`state_of`), and the process-wide "current client" slot.

It imports nothing of the SDK: :mod:`~rayqueue_sdk.kube.rest` and :mod:`~rayqueue_sdk.kube.auth` build
on it, and :mod:`~rayqueue_sdk.kube.client` (``get_client``) sits on top of both, so that credentials are
auto-detected there without a cycle.

``kubernetes`` is imported lazily, inside the functions, so ``import rayqueue_sdk`` stays light.

Example:
    >>> api = build_api_client("https://127.0.0.1:6443", token="s3cr3t", verify=False)
    >>> state_of(api).info.server
    'https://127.0.0.1:6443'
    >>> "s3cr3t" in repr(api)
    False
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

if TYPE_CHECKING:  # pragma: no cover
    from kubernetes.client import ApiClient

__all__ = [
    "ClientInfo",
    "ClientSource",
    "ClientState",
    "build_api_client",
    "clear_current_client",
    "current_client",
    "current_client_or",
    "register",
    "set_current_client",
    "state_of",
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


@dataclass
class ClientState:
    """Everything the SDK keeps per client: what it knows of it and the facts it cached (API discovery),
    dropped with the client. Every :class:`~rayqueue_sdk.kube.session.KubeSession` over one client shares
    its state.

    Attributes:
        info: the :class:`ClientInfo` (set by :func:`register`; a minimal one for clients the SDK did not
            build).
        cache: cached facts, by key.

    Example:
        >>> state = ClientState(ClientInfo(server="https://k8s.example:6443", source="token"))
        >>> calls = []
        >>> first = state.remembered("answer", 60, lambda: calls.append(1) or 42)
        >>> second = state.remembered("answer", 60, lambda: calls.append(1) or 43)
        >>> first, second, len(calls), state.info.server
        (42, 42, 1, 'https://k8s.example:6443')
    """

    info: ClientInfo
    cache: dict[str, Any] = field(default_factory=dict)

    def remembered(self, key: str, ttl: float, compute: Callable[[], T]) -> T:
        """``compute()``, remembered in :attr:`cache` under ``key`` for ``ttl`` seconds (for facts that
        change slowly and cost a request, e.g. an admission check's retry limit)."""
        hit = self.cache.get(f"remembered:{key}")
        now = time.monotonic()
        if hit is not None and now - hit[0] < ttl:
            return cast(T, hit[1])
        value = compute()
        self.cache[f"remembered:{key}"] = (now, value)
        return value


_states: weakref.WeakKeyDictionary[Any, ClientState] = weakref.WeakKeyDictionary()


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
        state = _states.get(api)
        if state is None:
            _states[api] = ClientState(info)
        else:
            state.info = info
    return api


def state_of(api: ApiClient) -> ClientState:
    """The :class:`ClientState` of ``api`` (made on first use, with a minimal :class:`ClientInfo` for
    clients the SDK did not build).

    Example:
        >>> api = build_api_client("https://k8s.example:6443", namespace="ds")
        >>> state_of(api).info.namespace, state_of(api) is state_of(api)
        ('ds', True)
    """
    with _lock:
        state = _states.get(api)
        if state is None:
            cfg = api.configuration
            info = ClientInfo(server=str(cfg.host), source="explicit", verify_tls=bool(cfg.verify_ssl))
            state = _states[api] = ClientState(info)
        return state


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
