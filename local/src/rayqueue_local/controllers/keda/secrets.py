"""The token controller for ``kubernetes.io/service-account-token`` Secrets, and auth lookups.

Kubernetes fills a Secret of type ``kubernetes.io/service-account-token`` (annotated
``kubernetes.io/service-account.name``) with ``token``, ``ca.crt`` and ``namespace``. Seed 000's
``thanos-token`` is one; its TriggerAuthentication reads ``token`` and ``ca.crt`` from it. Here
the token is a real bearer token of the local control plane (a user
``system:serviceaccount:<ns>:<sa>`` limited to the namespace) when the control plane has an
authenticator, and ``ca.crt`` is the control plane's CA.

:func:`resolve_auth` turns a trigger's ``authenticationRef`` into KEDA's auth parameters
(``bearerToken``, ``ca``, ...) from ``secretTargetRef`` (and ``configMapTargetRef``) entries.

Example:
    >>> decoded({"data": {"token": "c2VjcmV0"}}, "token")
    'secret'
"""

from __future__ import annotations

import base64
import logging
import secrets as random_secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rayqueue_local.controllers.base import QueueController
from rayqueue_local.controllers.plane import Plane
from rayqueue_local.storage.store import StoreError

log = logging.getLogger(__name__)

__all__ = ["ServiceAccountTokenController", "decoded", "resolve_auth"]

_SA_TOKEN_TYPE = "kubernetes.io/service-account-token"
_SA_NAME_ANNOTATION = "kubernetes.io/service-account.name"


def decoded(secret: dict[str, Any], key: str) -> str | None:
    """The value of ``key`` in a Secret (``stringData`` first, then base64 ``data``)."""
    if key in (secret.get("stringData") or {}):
        return str(secret["stringData"][key])
    raw = (secret.get("data") or {}).get(key)
    if raw is None:
        return None
    return base64.b64decode(raw).decode()


def _config_value(config: dict[str, Any], key: str) -> str | None:
    """The value of ``key`` in a ConfigMap's ``data``, if there."""
    data = config.get("data") or {}
    return str(data[key]) if key in data else None


#: A TriggerAuthentication's references: (spec field, resource key, noun in errors, value reader).
_TARGET_REFS: tuple[tuple[str, str, str, Callable[[dict[str, Any], str], str | None]], ...] = (
    ("secretTargetRef", "secrets", "secret", decoded),
    ("configMapTargetRef", "configmaps", "configmap", _config_value),
)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class ServiceAccountTokenController(QueueController):
    """Fills service-account-token Secrets with ``token``, ``ca.crt`` and ``namespace``."""

    name = "serviceaccount-token"
    watches = ("secrets", "serviceaccounts")

    def __init__(self, cp: Plane) -> None:
        super().__init__()
        self.cp = cp

    def keys_for(self, event: Any) -> list[Any]:
        meta = event.object.get("metadata", {})
        if event.key == "secrets":
            if event.object.get("type") != _SA_TOKEN_TYPE or event.type == "DELETED":
                return []
            return [(meta.get("namespace"), meta.get("name"))]
        return [
            (s["metadata"].get("namespace"), s["metadata"]["name"])
            for s in self.store.list("secrets", meta.get("namespace"))
            if s.get("type") == _SA_TOKEN_TYPE
            and (s["metadata"].get("annotations") or {}).get(_SA_NAME_ANNOTATION) == meta.get("name")
        ]

    def _token(self, namespace: str, account: str) -> str:
        auth = getattr(self.cp, "auth", None)
        user = f"system:serviceaccount:{namespace}:{account}"
        if auth is not None and hasattr(auth, "add_user"):
            return str(auth.add_user(user, [namespace]))
        return random_secrets.token_urlsafe(32)

    def _ca(self) -> str:
        path = getattr(self.cp, "ca_cert_path", None)
        try:
            return Path(path).read_text() if path else ""
        except OSError:
            return ""

    def reconcile(self, item: tuple[str, str]) -> None:
        namespace, name = item
        try:
            secret = self.store.get("secrets", namespace, name)
        except StoreError:
            return
        account = (secret["metadata"].get("annotations") or {}).get(_SA_NAME_ANNOTATION)
        if secret.get("type") != _SA_TOKEN_TYPE or not account or decoded(secret, "token"):
            return
        data = dict(secret.get("data") or {})
        data.update(
            {
                "token": _b64(self._token(namespace, account)),
                "ca.crt": _b64(self._ca()),
                "namespace": _b64(namespace),
            }
        )
        secret["data"] = data
        self.store.update("secrets", secret)


def resolve_auth(store: Any, namespace: str, ref: dict[str, Any] | None) -> dict[str, str]:
    """KEDA's auth parameters for a trigger's ``authenticationRef`` (``{}`` without one).

    Raises ``ValueError`` with KEDA-like text when the TriggerAuthentication or a Secret is missing.
    """
    if not ref or not ref.get("name"):
        return {}
    kind = ref.get("kind") or "TriggerAuthentication"
    key = (
        "clustertriggerauthentications.keda.sh"
        if kind == "ClusterTriggerAuthentication"
        else "triggerauthentications.keda.sh"
    )
    try:
        auth = store.get(key, None if kind == "ClusterTriggerAuthentication" else namespace, ref["name"])
    except StoreError:
        raise ValueError(f'error getting {kind} "{ref["name"]}": not found') from None
    params: dict[str, str] = {}
    spec = auth.get("spec") or {}
    secret_ns = "keda" if kind == "ClusterTriggerAuthentication" else namespace
    for field, resource, noun, read in _TARGET_REFS:
        for entry in spec.get(field) or []:
            try:
                source = store.get(resource, secret_ns, entry["name"])
            except StoreError:
                raise ValueError(
                    f'error reading {noun} "{entry["name"]}" for {kind} "{ref["name"]}": not found'
                ) from None
            value = read(source, entry["key"])
            if value is not None:
                params[entry["parameter"]] = value
    return params
