"""The client every SDK call uses: the one given, else the current login, else detected credentials.

``login()`` (see :mod:`rayqueue_sdk.kube.auth`) builds an ``ApiClient`` and makes it current; every
later SDK call that is not given an explicit client uses it. With nothing logged in,
:func:`get_client` detects credentials (kubeconfig, then in-cluster) once and makes them current.

This module sits on top of the connection stack (:mod:`~rayqueue_sdk.kube.connection` →
:mod:`~rayqueue_sdk.kube.rest` → :mod:`~rayqueue_sdk.kube.auth` → here) and also re-exports the
connection primitives, so ``rayqueue_sdk.kube.client`` stays the one place callers import them from.

Example:
    >>> mine = build_api_client("https://127.0.0.1:6443", namespace="ds-team")
    >>> get_client(mine) is mine, default_namespace(mine)
    (True, 'ds-team')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.kube.auth import ambient_namespace, detect
from rayqueue_sdk.kube.connection import ClientInfo as ClientInfo
from rayqueue_sdk.kube.connection import ClientSource as ClientSource
from rayqueue_sdk.kube.connection import build_api_client as build_api_client
from rayqueue_sdk.kube.connection import clear_current_client as clear_current_client
from rayqueue_sdk.kube.connection import current_client as current_client
from rayqueue_sdk.kube.connection import current_client_or, state_of
from rayqueue_sdk.kube.connection import set_current_client as set_current_client

if TYPE_CHECKING:  # pragma: no cover
    from kubernetes.client import ApiClient

# The connection primitives above are re-exported (``import X as X``), so callers import them from here.
__all__ = ["default_namespace", "get_api_client", "get_client", "set_api_client"]


def get_client(client: ApiClient | ClientSource | None = None) -> ApiClient:
    """The client to use: ``client`` if given, else the current one, else auto-detected credentials.

    ``client`` may be an ``ApiClient`` or an authentication object (``TokenAuthentication``, ...).
    Auto-detection (kubeconfig from ``$KUBECONFIG`` or ``~/.kube/config``, then the in-cluster
    service account) happens once and its result becomes the current client.

    Raises:
        AuthenticationError: nothing is logged in and no credentials were found.

    Example:
        >>> api = build_api_client("https://k8s.example:6443")
        >>> get_client(api) is api
        True
    """
    if client is not None:
        api_client = getattr(client, "api_client", None)
        if callable(api_client):
            made: ApiClient = api_client()
            return made
        return client  # type: ignore[return-value]
    return current_client_or(lambda: detect(check=False))


def default_namespace(client: ApiClient | ClientSource | None = None) -> str:
    """The namespace implied by the credentials (kubeconfig context, service account), else ``"default"``.

    A client the SDK did not build (``set_api_client(kube_authkit.get_k8s_client(...))``) carries no
    namespace: then the environment decides, as codeflare-sdk does (the pod's service-account namespace,
    else the kubeconfig's current context: :func:`~rayqueue_sdk.kube.auth.ambient_namespace`).

    Example:
        >>> default_namespace(build_api_client("https://k8s.example:6443", namespace="ds-team"))
        'ds-team'
    """
    info = state_of(get_client(client)).info
    if info.namespace:
        return info.namespace
    return (ambient_namespace() if info.source == "explicit" else None) or "default"


def set_api_client(api_client: ApiClient | ClientSource) -> None:
    """Make ``api_client`` the client every later SDK call uses unless given one (codeflare-sdk's name).

    Any ``kubernetes.client.ApiClient`` works, however it was made: ``kube_authkit.get_k8s_client(...)``,
    ``kubernetes.config.new_client_from_config()``, or the SDK's own authentication objects
    (``TokenAuthentication(...)``: its ``api_client()`` is used). Like ``login()``, it sets one
    process-wide client: the last call wins. A per-object client is ``Cluster(cfg, client=...)``.

    Raises:
        ConfigError: ``api_client`` is neither an ``ApiClient`` nor something that makes one.

    Example:
        >>> api = build_api_client("https://k8s.example:6443", namespace="ds-team")
        >>> set_api_client(api); get_api_client() is api
        True
        >>> set_api_client("https://k8s.example:6443")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: api_client: not an ApiClient but str (got ...); allowed: ...
        >>> set_current_client(None)
    """
    if callable(getattr(api_client, "api_client", None)):
        api_client = get_client(api_client)
    if not (hasattr(api_client, "configuration") and callable(getattr(api_client, "call_api", None))):
        raise ConfigError(
            "api_client",
            f"<{type(api_client).__name__}>",
            "a kubernetes.client.ApiClient (e.g. kube_authkit.get_k8s_client(config=...)) or an "
            "authentication object such as TokenAuthentication",
            problem=f"not an ApiClient but {type(api_client).__name__}",
        )
    set_current_client(api_client)  # type: ignore[arg-type]


def get_api_client() -> ApiClient:
    """The ``ApiClient`` the SDK uses now (codeflare-sdk's name): the one set by :func:`set_api_client` or
    ``login()``, else credentials detected from the kubeconfig or the pod's service account.

    Hand it to the ``kubernetes`` API classes, e.g. ``CoreV1Api(get_api_client())``.

    Raises:
        AuthenticationError: nothing is set and no credentials were found.

    Example:
        >>> api = build_api_client("https://k8s.example:6443")
        >>> set_api_client(api); get_api_client() is api
        True
        >>> set_current_client(None)
    """
    return get_client()
