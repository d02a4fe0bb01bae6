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

from rayqueue_sdk.kube.auth import detect
from rayqueue_sdk.kube.connection import ClientInfo as ClientInfo
from rayqueue_sdk.kube.connection import ClientSource as ClientSource
from rayqueue_sdk.kube.connection import build_api_client as build_api_client
from rayqueue_sdk.kube.connection import cache_for as cache_for
from rayqueue_sdk.kube.connection import clear_current_client as clear_current_client
from rayqueue_sdk.kube.connection import current_client as current_client
from rayqueue_sdk.kube.connection import current_client_or
from rayqueue_sdk.kube.connection import info_of as info_of
from rayqueue_sdk.kube.connection import server_of as server_of
from rayqueue_sdk.kube.connection import set_current_client as set_current_client

if TYPE_CHECKING:  # pragma: no cover
    from kubernetes.client import ApiClient

# The connection primitives above are re-exported (``import X as X``), so callers import them from here.
__all__ = ["default_namespace", "get_client"]


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
            return api_client()
        return client  # type: ignore[return-value]
    return current_client_or(lambda: detect(check=False))


def default_namespace(client: ApiClient | ClientSource | None = None) -> str:
    """The namespace implied by the credentials (kubeconfig context, service account), else ``"default"``.

    Example:
        >>> default_namespace(build_api_client("https://k8s.example:6443", namespace="ds-team"))
        'ds-team'
    """
    api = get_client(client)
    return info_of(api).namespace or "default"
