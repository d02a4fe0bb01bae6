"""The service account tokens controller: legacy token Secrets, and tokens that die with their objects.

As upstream's ``pkg/controller/serviceaccount/tokens_controller.go``: a Secret of type
``kubernetes.io/service-account-token`` whose annotation ``kubernetes.io/service-account.name`` names a
ServiceAccount of its namespace gets ``data.token`` (a bearer token for
``system:serviceaccount:<ns>:<name>``), ``data.ca.crt`` (the plane's CA) and ``data.namespace``, and the
annotation ``kubernetes.io/service-account.uid``. A token Secret whose ServiceAccount does not exist (or
has another uid) is deleted, and deleting a ServiceAccount deletes its token Secrets. KEDA's
``TriggerAuthentication`` in seed 000 reads ``token`` from such a Secret.

The token is bound to the Secret and to the ServiceAccount: deleting either revokes it at once (the API
server does that, :class:`~rayqueue_local.apiserver.tokenrequest.TokenRequestAPI`, whether this controller
runs or not). After a restart the tokens stored in Secrets are registered again.

Example:
    >>> from rayqueue_local.apiserver.auth import Authenticator
    >>> from rayqueue_local.storage.store import Store
    >>> store, auth = Store(), Authenticator()
    >>> tokens = TokensController(auth, ca_pem=b"-----BEGIN CERTIFICATE-----\\n")
    >>> tokens.store = store
    >>> _ = store.create("serviceaccounts", {"metadata": {"name": "bot", "namespace": "default"}})
    >>> _ = store.create("secrets", {"metadata": {"name": "bot-token", "namespace": "default",
    ...     "annotations": {"kubernetes.io/service-account.name": "bot"}},
    ...     "type": "kubernetes.io/service-account-token"})
    >>> tokens.reconcile(("secrets", "default", "bot-token"))
    >>> secret = store.get("secrets", "default", "bot-token")
    >>> sorted(secret["data"]), auth.user_for_token(b64decode(secret["data"]["token"]).decode()).name
    (['ca.crt', 'namespace', 'token'], 'system:serviceaccount:default:bot')
"""

from __future__ import annotations

import contextlib
import logging
from base64 import b64decode, b64encode
from typing import Any

from rayqueue_local.apiserver.auth import Authenticator
from rayqueue_local.controllers.base import QueueController
from rayqueue_local.storage.store import Event, StoreError

log = logging.getLogger(__name__)

__all__ = ["SA_NAME_ANNOTATION", "SA_UID_ANNOTATION", "TOKEN_SECRET_TYPE", "TokensController"]

#: The Secret type the controller fills.
TOKEN_SECRET_TYPE = "kubernetes.io/service-account-token"
#: The annotation naming the ServiceAccount of a token Secret.
SA_NAME_ANNOTATION = "kubernetes.io/service-account.name"
#: The annotation the controller sets to the ServiceAccount's uid.
SA_UID_ANNOTATION = "kubernetes.io/service-account.uid"


class TokensController(QueueController):
    """Fills legacy token Secrets and revokes tokens whose objects are deleted (module docstring)."""

    name = "serviceaccount-tokens"
    watches = ("secrets", "serviceaccounts")
    resync_seconds = 30.0

    def __init__(self, authenticator: Authenticator, *, ca_pem: bytes) -> None:
        super().__init__()
        self.auth = authenticator
        self.ca_pem = ca_pem
        self._registered: set[tuple[str, str, str]] = set()  # (namespace, secret, token) known to auth

    def _on_event(self, event: Event) -> None:
        if event.type == "DELETED" and event.key == "secrets":
            meta = event.object.get("metadata") or {}
            where = (meta.get("namespace"), meta.get("name"))
            self._registered = {r for r in self._registered if r[:2] != where}
        super()._on_event(event)

    def keys_for(self, event: Event) -> list[Any]:
        """A token Secret is its own work item; a ServiceAccount's change rechecks its token Secrets."""
        meta = event.object.get("metadata") or {}
        namespace = meta.get("namespace") or ""
        if event.key == "secrets":
            return [("secrets", namespace, meta.get("name"))] if event.type != "DELETED" else []
        return [
            ("secrets", namespace, s["metadata"]["name"])
            for s in self.store.list("secrets", namespace, copy=False)
            if _token_secret_of(s) == meta.get("name")
        ]

    def resync(self) -> list[Any]:
        """Every token Secret (on start: registers the tokens they hold again)."""
        if self.store is None:
            return []
        return [
            ("secrets", s["metadata"]["namespace"], s["metadata"]["name"])
            for s in self.store.list("secrets", copy=False)
            if _token_secret_of(s) is not None
        ]

    def reconcile(self, item: Any) -> None:
        """Fill, re-register or delete one token Secret."""
        _, namespace, name = item
        try:
            secret = self.store.get("secrets", namespace, name, copy=False)
        except StoreError:
            return
        account_name = _token_secret_of(secret)
        if account_name is None or (secret.get("metadata") or {}).get("deletionTimestamp"):
            return
        annotations = secret["metadata"].get("annotations") or {}
        try:
            account = self.store.get("serviceaccounts", namespace, account_name, copy=False)
        except StoreError:
            account = None
        uid = str((account or {}).get("metadata", {}).get("uid") or "")
        if account is None or (annotations.get(SA_UID_ANNOTATION) not in (None, "", uid)):
            # Upstream deletes a token Secret whose ServiceAccount is gone (or was recreated).
            self.auth.revoke_bound("Secret", namespace, name)
            with contextlib.suppress(StoreError):
                self.store.delete("secrets", namespace, name)
            return
        data = dict(secret.get("data") or {})
        token = _decoded(data.get("token"))
        known = (namespace, name, token) in self._registered
        if token and not known and self._register(namespace, account_name, uid, name, token):
            self._registered.add((namespace, name, token))
        wanted_ca = b64encode(self.ca_pem).decode()
        wanted_ns = b64encode(namespace.encode()).decode()
        if (
            token
            and data.get("ca.crt") == wanted_ca
            and data.get("namespace") == wanted_ns
            and (annotations.get(SA_UID_ANNOTATION) == uid)
        ):
            return
        if not token:
            token = self.auth.service_account_token(
                namespace, account_name, uid=uid, bound=[("Secret", namespace, name)]
            )
            self._registered.add((namespace, name, token))
        data.update(
            {"token": b64encode(token.encode()).decode(), "ca.crt": wanted_ca, "namespace": wanted_ns}
        )
        updated = {
            **secret,
            "metadata": {**secret["metadata"], "annotations": {**annotations, SA_UID_ANNOTATION: uid}},
            "data": data,
        }
        try:
            self.store.update("secrets", updated)
        except StoreError as err:  # changed meanwhile: the update event brings it back
            log.debug("token secret %s/%s not updated: %s", namespace, name, err.message)

    def _register(self, namespace: str, account: str, uid: str, secret: str, token: str) -> bool:
        """Register a token a Secret holds (after a restart, or written by a client); never one that is
        already another identity's."""
        known = self.auth.user_for_token(token)
        if known is not None:
            return known.name == f"system:serviceaccount:{namespace}:{account}"
        self.auth.service_account_token(
            namespace, account, uid=uid, bound=[("Secret", namespace, secret)], token=token
        )
        return True


def _token_secret_of(secret: dict[str, Any]) -> str | None:
    """The ServiceAccount a legacy token Secret is for, or None for any other Secret."""
    if secret.get("type") != TOKEN_SECRET_TYPE:
        return None
    name = ((secret.get("metadata") or {}).get("annotations") or {}).get(SA_NAME_ANNOTATION)
    return str(name) if name else None


def _decoded(value: Any) -> str:
    if not isinstance(value, str) or not value:
        return ""
    try:
        return b64decode(value, validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        return ""
