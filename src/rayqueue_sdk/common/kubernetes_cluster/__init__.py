"""``codeflare_sdk.common.kubernetes_cluster``'s names: the SDK's client and the authentication classes.

``get_api_client()`` is the ``ApiClient`` the SDK uses now (for ``kubernetes.client.CoreV1Api(...)`` and
the like); ``set_api_client(api_client)`` sets it. kube-authkit's ``AuthConfig``/``get_k8s_client`` are not
re-exported (it is not a dependency): import them from ``kube_authkit`` and pass the client to
``set_api_client`` or ``SDKConfig(auth=...)``.

Example:
    >>> from rayqueue_sdk.common.kubernetes_cluster import TokenAuthentication, get_api_client, set_api_client
    >>> TokenAuthentication.__name__
    'TokenAuthentication'
"""

from __future__ import annotations

from rayqueue_sdk.kube.auth import KubeConfigFileAuthentication as KubeConfigFileAuthentication
from rayqueue_sdk.kube.auth import TokenAuthentication as TokenAuthentication
from rayqueue_sdk.kube.client import get_api_client as get_api_client
from rayqueue_sdk.kube.client import set_api_client as set_api_client

__all__ = ["KubeConfigFileAuthentication", "TokenAuthentication", "get_api_client", "set_api_client"]
