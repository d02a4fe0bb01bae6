"""``POST /api/v1/namespaces/{ns}/serviceaccounts/{name}/token``: the ``TokenRequest`` subresource
(``authentication.k8s.io/v1``), behind ``kubectl create token SA [--duration D] [--audience A]``.

As upstream's ``pkg/registry/core/serviceaccount/storage/token.go`` and
``pkg/apis/authentication/validation``:

* ``spec.expirationSeconds`` defaults to 3600; less than 600 is a 422 (``may not specify a duration less
  than 10 minutes``), more than 2^32 too; ``spec.audiences`` default to the server's audience;
* a missing ServiceAccount is a 404 in upstream's words (``serviceaccounts "x" not found``); a
  ``metadata.name``/``namespace`` in the body that differs from the URL is a 422;
* ``spec.boundObjectRef`` (a ``Pod`` or ``Secret`` in the same namespace, or a ``Node``) must exist, and
  match its ``uid`` when one is given; the token then dies with that object;
* the answer is ``201`` with the request, ``status.token`` and ``status.expirationTimestamp``.

The token is one of the :class:`~rayqueue_local.apiserver.auth.Authenticator`'s: its user is
``system:serviceaccount:<ns>:<name>`` with the account's uid, it is refused (401) once expired, and it
is revoked when the ServiceAccount (or the bound object) is deleted: :class:`TokenRequestAPI` follows
the store and revokes, in the deleting writer's thread, every token bound to a deleted ServiceAccount,
Secret, Pod or Node, so the token is refused before the ``DELETE`` returns. Unlike upstream's JWTs it does
not survive a restart of the plane. Only ``create`` is served; any other verb is a 405.

Example:
    >>> from rayqueue_local.apiserver.auth import Authenticator, User
    >>> from rayqueue_local.apiserver.http import parse_request
    >>> from rayqueue_local.storage.store import Store
    >>> store, auth = Store(), Authenticator()
    >>> _ = store.create("serviceaccounts", {"metadata": {"name": "bot", "namespace": "default"}})
    >>> info = parse_request("POST", "/api/v1/namespaces/default/serviceaccounts/bot/token", {})
    >>> out = TokenRequestAPI(auth, store).handle(info, b'{"spec": {}}', {}, User("admin", admin=True))
    >>> out.code, out.body["spec"]["expirationSeconds"], auth.user_for_token(out.body["status"]["token"]).name
    (201, 3600, 'system:serviceaccount:default:bot')
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from rayqueue_local.apimachinery import protowire
from rayqueue_local.apimachinery.status import HTTPError
from rayqueue_local.apiserver.auth import Authenticator, User
from rayqueue_local.apiserver.http import RequestInfo, Response, parse_body
from rayqueue_local.storage.store import Event, Store, StoreError

__all__ = ["DEFAULT_AUDIENCE", "DEFAULT_EXPIRATION_SECONDS", "MIN_EXPIRATION_SECONDS", "TokenRequestAPI"]

#: ``TokenRequestSpec.expirationSeconds`` when none is given [SetDefaults_TokenRequestSpec].
DEFAULT_EXPIRATION_SECONDS = 3600
#: The shortest lifetime a TokenRequest may ask for (10 minutes).
MIN_EXPIRATION_SECONDS = 600
_MAX_EXPIRATION_SECONDS = 1 << 32
#: The API server's audience (kube-apiserver's default ``--api-audiences``: its issuer).
DEFAULT_AUDIENCE = "https://kubernetes.default.svc.cluster.local"
_PROTOBUF = "application/vnd.kubernetes.protobuf"
_BOUND_KINDS = {"Pod": ("pods", True), "Secret": ("secrets", True), "Node": ("nodes", False)}
#: What the deletion of an object of a store key revokes: the tokens bound to that kind.
_REVOKING_KEYS = {"serviceaccounts": "ServiceAccount", "secrets": "Secret", "pods": "Pod", "nodes": "Node"}

# authentication/v1 generated.proto: TokenRequest{metadata=1, spec=2}, TokenRequestSpec{audiences=1,
# boundObjectRef=3, expirationSeconds=4}, BoundObjectReference{kind=1, apiVersion=2, name=3, uid=4}.
_PROTO_SPEC: protowire.MessageSpec = {
    1: ("metadata", "message", {1: ("name", "string", None), 3: ("namespace", "string", None)}),
    2: (
        "spec",
        "message",
        {
            1: ("audiences", "repeated string", None),
            3: (
                "boundObjectRef",
                "message",
                {
                    1: ("kind", "string", None),
                    2: ("apiVersion", "string", None),
                    3: ("name", "string", None),
                    4: ("uid", "string", None),
                },
            ),
            4: ("expirationSeconds", "int", None),
        },
    ),
}


def _invalid(name: str, field: str, value: Any, text: str) -> HTTPError:
    shown = f'"{value}"' if isinstance(value, str) else str(value)
    return HTTPError.make(
        422,
        "Invalid",
        f'TokenRequest.authentication.k8s.io "{name}" is invalid: {field}: Invalid value: {shown}: {text}',
        details={"name": name, "group": "authentication.k8s.io", "kind": "TokenRequest"},
        causes=[
            {"reason": "FieldValueInvalid", "field": field, "message": f"Invalid value: {shown}: {text}"}
        ],
    )


def _rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class TokenRequestAPI:
    """Serves ``serviceaccounts/token`` (see the module docstring).

    Example:
        >>> from rayqueue_local.apiserver.http import parse_request
        >>> api = TokenRequestAPI(Authenticator(), Store())
        >>> api.serves(parse_request("POST", "/api/v1/namespaces/a/serviceaccounts/b/token", {}))
        True
        >>> api.serves(parse_request("POST", "/api/v1/namespaces/a/serviceaccounts", {}))
        False
    """

    def __init__(self, authenticator: Authenticator, store: Store) -> None:
        self.auth = authenticator
        self.store = store
        self._unsubscribe = store.subscribe(self._on_event)

    def close(self) -> None:
        """Stop following the store."""
        self._unsubscribe()

    def _on_event(self, event: Event) -> None:
        kind = _REVOKING_KEYS.get(event.key)
        if kind is not None and event.type == "DELETED":
            meta = event.object.get("metadata") or {}
            self.auth.revoke_bound(kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""))

    @staticmethod
    def serves(info: RequestInfo) -> bool:
        """Whether ``info`` addresses ``serviceaccounts/<name>/token`` in the core group."""
        return (
            info.kind == "resource"
            and not info.group
            and info.resource == "serviceaccounts"
            and info.subresource == "token"
        )

    def handle(self, info: RequestInfo, body: bytes, headers: Any, user: User) -> Response:
        """``201`` and the TokenRequest with its ``status``; 405 for anything but a create."""
        if info.verb != "create":
            raise HTTPError.method_not_allowed(info.verb.upper())
        namespace, name = info.namespace or "", info.name
        media = (headers.get("Content-Type") or "application/json").split(";")[0].strip().lower()
        obj = _protobuf_body(body) if media == _PROTOBUF else parse_body(body, media)
        if not isinstance(obj, dict):
            raise HTTPError.bad_request(
                "the body of the request was in an unknown format - expected an object"
            )
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        meta, spec = dict(meta or {}), dict(spec or {})
        if meta.get("name") and meta["name"] != name:
            raise _invalid(
                name, "metadata.name", meta["name"], "must match the service account name if specified"
            )
        if meta.get("namespace") and meta["namespace"] != namespace:
            raise _invalid(
                name,
                "metadata.namespace",
                meta["namespace"],
                "must match the service account namespace if specified",
            )
        seconds = spec.get("expirationSeconds")
        if seconds is None:
            seconds = DEFAULT_EXPIRATION_SECONDS
        if not isinstance(seconds, int) or isinstance(seconds, bool):
            raise HTTPError.bad_request("spec.expirationSeconds must be an integer")
        if seconds < MIN_EXPIRATION_SECONDS:
            raise _invalid(
                name, "spec.expirationSeconds", seconds, "may not specify a duration less than 10 minutes"
            )
        if seconds > _MAX_EXPIRATION_SECONDS:
            raise _invalid(
                name, "spec.expirationSeconds", seconds, "may not specify a duration larger than 2^32 seconds"
            )
        try:
            account = self.store.get("serviceaccounts", namespace, name, copy=False)
        except StoreError as err:
            raise HTTPError.make(err.code, err.reason, err.message, details=err.details) from None
        bound = self._bound_object(spec.get("boundObjectRef"), namespace)
        audiences = [str(a) for a in spec.get("audiences") or []] or [DEFAULT_AUDIENCE]
        now = datetime.now(UTC).replace(microsecond=0)
        token = self.auth.service_account_token(
            namespace,
            name,
            uid=str(account["metadata"].get("uid") or ""),
            expiration_seconds=seconds,
            bound=[bound] if bound else (),
        )
        spec.update({"audiences": audiences, "expirationSeconds": seconds})
        out = {
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {**meta, "name": name, "namespace": namespace, "creationTimestamp": _rfc3339(now)},
            "spec": spec,
            "status": {"token": token, "expirationTimestamp": _rfc3339(now + timedelta(seconds=seconds))},
        }
        return Response(201, out)

    def _bound_object(self, ref: Any, namespace: str) -> tuple[str, str, str] | None:
        if not isinstance(ref, dict) or not ref:
            return None
        kind = str(ref.get("kind") or "")
        if kind not in _BOUND_KINDS:
            raise _invalid(
                str(ref.get("name") or ""),
                "spec.boundObjectRef.kind",
                kind,
                'supported values: "Node", "Pod", "Secret"',
            )
        key, namespaced = _BOUND_KINDS[kind]
        name = str(ref.get("name") or "")
        try:
            obj = self.store.get(key, namespace if namespaced else None, name, copy=False)
        except StoreError as err:
            raise HTTPError.make(err.code, err.reason, err.message, details=err.details) from None
        uid = str(ref.get("uid") or "")
        if uid and uid != obj["metadata"].get("uid"):
            raise HTTPError.make(
                409,
                "Conflict",
                f"the UID in the bound object reference ({uid}) does not match the UID in record. "
                "The object might have been deleted and then recreated",
            )
        return (kind, namespace if namespaced else "", name)


def _protobuf_body(body: bytes) -> dict[str, Any]:
    """A TokenRequest sent as Kubernetes protobuf (kubectl's typed client sends it so)."""
    try:
        _, _, raw = protowire.unwrap(body)
        return protowire.decode(raw, _PROTO_SPEC)
    except protowire.ProtoError as err:
        raise HTTPError.bad_request(f"the body of the request was in an unknown format - {err}") from None
