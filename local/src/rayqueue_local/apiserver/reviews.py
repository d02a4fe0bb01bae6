"""The review APIs: ``authentication.k8s.io/v1`` and ``authorization.k8s.io/v1``, answered from the
server's own tokens and rules.

Upstream serves these create-only resources without storage (``pkg/registry/authentication/tokenreview``,
``.../selfsubjectreview``, ``pkg/registry/authorization/{selfsubjectaccessreview,
selfsubjectrulesreview,subjectaccessreview,localsubjectaccessreview}`` in kubernetes/kubernetes): a
``POST`` returns ``201`` with the object sent and its ``status`` filled in. Here the answers come from the
same :class:`~rayqueue_local.apiserver.auth.Authenticator` and
:class:`~rayqueue_local.apiserver.rbac.Authorizer` (the plane's policy and the RBAC objects) that every
request goes through, so ``kubectl auth can-i`` says what the server then does.

* ``TokenReview`` (``status.authenticated`` and ``status.user`` for a token; an unknown token gets
  ``{"user": {}}``, as upstream omits ``authenticated: false``); a missing token is a 400.
* ``SelfSubjectReview`` (``kubectl auth whoami``): the caller's ``userInfo``.
* ``SelfSubjectAccessReview``, ``SubjectAccessReview``, ``LocalSubjectAccessReview``
  (``kubectl auth can-i``): ``status.allowed`` for resource or non-resource attributes; exactly one of
  them must be given (422, upstream's words in ``pkg/apis/authorization/validation``).
* ``SelfSubjectRulesReview`` (``kubectl auth can-i --list``): the rules that apply in a namespace
  (the plane's policy, the basic-user rules, and the bindings' roles).

Who may call them follows upstream's bootstrap RBAC: the self reviews are open to every authenticated
user (``system:basic-user``, :data:`~rayqueue_local.apiserver.auth.BASIC_USER_RULES`); ``TokenReview`` and
``(Local)SubjectAccessReview`` need ``create`` on them, which only the admin has. The API server checks
that before :meth:`ReviewAPI.handle` runs.

Example:
    >>> from rayqueue_local.apiserver.auth import Authenticator
    >>> from rayqueue_local.apiserver.http import parse_request
    >>> from rayqueue_local.storage.store import Store
    >>> auth, store = Authenticator(), Store()
    >>> token = auth.add_user("alice", ["team-a"])
    >>> reviews = ReviewAPI(auth, store.registry, Authorizer(auth, store))
    >>> info = parse_request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {})
    >>> body = b'{"spec": {"resourceAttributes": {"namespace": "team-b", "verb": "create",' \\
    ...        b' "group": "ray.io", "resource": "rayclusters"}}}'
    >>> reviews.handle(info, body, {}, auth.users["alice"]).body["status"]
    {'allowed': False}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rayqueue_local.apimachinery import protowire
from rayqueue_local.apimachinery.status import HTTPError
from rayqueue_local.apiserver.auth import Attributes, Authenticator, User, user_groups
from rayqueue_local.apiserver.http import RequestInfo, Response, parse_body
from rayqueue_local.apiserver.rbac import Authorizer
from rayqueue_local.registry.builtintypes import REVIEW_GROUPS
from rayqueue_local.registry.registry import Registry

__all__ = ["ReviewAPI"]


class ReviewAPI:
    """Answers the ``POST`` of a review resource (see the module docstring).

    Example:
        >>> from rayqueue_local.apiserver.http import parse_request
        >>> from rayqueue_local.storage.store import Store
        >>> store = Store()
        >>> r = ReviewAPI(Authenticator(), store.registry, Authorizer(Authenticator(), store))
        >>> r.serves(parse_request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {}))
        True
        >>> r.serves(parse_request("GET", "/api/v1/pods", {}))
        False
    """

    def __init__(self, authenticator: Authenticator, registry: Registry, authorizer: Authorizer) -> None:
        self.auth = authenticator
        self.registry = registry
        self.authorizer = authorizer
        self._handlers: dict[str, Callable[[dict[str, Any], RequestInfo, User], dict[str, Any]]] = {
            "tokenreviews": self._token_review,
            "selfsubjectreviews": self._self_subject_review,
            "selfsubjectaccessreviews": self._self_access_review,
            "subjectaccessreviews": self._access_review,
            "localsubjectaccessreviews": self._access_review,
            "selfsubjectrulesreviews": self._rules_review,
        }

    def serves(self, info: RequestInfo) -> bool:
        """Whether ``info`` addresses a review resource (any verb: the others get 405 from :meth:`handle`)."""
        return info.kind == "resource" and info.group in REVIEW_GROUPS and info.resource in self._handlers

    def handle(self, info: RequestInfo, body: bytes, headers: Any, user: User) -> Response:
        """``201`` and the reviewed object; 405 for anything but a create of the collection."""
        if self.registry.lookup(info.group, info.version, info.resource) is None:
            raise HTTPError.not_found_resource()
        if info.verb != "create" or info.name or info.subresource:
            raise HTTPError.method_not_allowed(info.verb.upper() if info.verb != "create" else "POST")
        media = (headers.get("Content-Type") or "application/json").split(";")[0].strip().lower()
        obj = _protobuf_body(info, body) if media == _PROTOBUF else parse_body(body, media)
        if not isinstance(obj, dict):
            raise HTTPError.bad_request(
                "the body of the request was in an unknown format - expected an object"
            )
        rt = self.registry.lookup(info.group, info.version, info.resource)
        assert rt is not None
        spec = obj.get("spec") or {}
        if not isinstance(spec, dict):
            raise HTTPError.bad_request(f"{rt.kind} spec must be an object")
        status = self._handlers[info.resource](spec, info, user)
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        out: dict[str, Any] = {
            "kind": rt.kind,
            "apiVersion": rt.api_version_for(info.version),
            "metadata": {**(meta or {}), "creationTimestamp": None},
        }
        if info.resource != "selfsubjectreviews":
            out["spec"] = spec
        out["status"] = status
        return Response(201, out)

    # -- authentication ---------------------------------------------------------------------------
    def _token_review(self, spec: dict[str, Any], info: RequestInfo, user: User) -> dict[str, Any]:
        token = spec.get("token")
        if not isinstance(token, str) or not token:
            raise HTTPError.bad_request("token is required for TokenReview in authentication")
        found = self.auth.user_for_token(token)
        if found is None:
            return {"user": {}}
        status: dict[str, Any] = {"authenticated": True, "user": _user_info(found)}
        if spec.get("audiences"):
            status["audiences"] = list(spec["audiences"])
        return status

    def _self_subject_review(self, spec: dict[str, Any], info: RequestInfo, user: User) -> dict[str, Any]:
        return {"userInfo": _user_info(user)}

    # -- authorization ----------------------------------------------------------------------------
    def _self_access_review(self, spec: dict[str, Any], info: RequestInfo, user: User) -> dict[str, Any]:
        _check_access_spec("SelfSubjectAccessReview", spec, subject=False)
        return self._decide(user, spec)

    def _access_review(self, spec: dict[str, Any], info: RequestInfo, user: User) -> dict[str, Any]:
        kind = "LocalSubjectAccessReview" if info.namespace else "SubjectAccessReview"
        _check_access_spec(kind, spec, subject=True)
        if info.namespace is not None:
            ns = (spec.get("resourceAttributes") or {}).get("namespace") or ""
            if ns != info.namespace:
                raise HTTPError.bad_request(
                    f"spec.resourceAttributes.namespace must match namespace: {info.namespace}"
                )
        subject = self._subject(str(spec.get("user") or ""), spec.get("groups") or [])
        return self._decide(subject, spec)

    def _subject(self, name: str, groups: list[str]) -> User:
        """The user a SubjectAccessReview asks about: a plane user by name (with its namespaces) when the
        review gives no groups; otherwise exactly the name and groups given, as upstream reads them."""
        known = self.auth.users.get(name)
        if known is not None and not groups:
            return known
        return User(name, groups=tuple(str(g) for g in groups))

    def _decide(self, user: User, spec: dict[str, Any]) -> dict[str, Any]:
        non_resource = spec.get("nonResourceAttributes")
        if isinstance(non_resource, dict):
            allowed, reason = self.authorizer.decide_url(
                user, str(non_resource.get("verb") or ""), str(non_resource.get("path") or "")
            )
        else:
            allowed, reason = self.authorizer.decide(
                user, self._attributes(spec.get("resourceAttributes") or {})
            )
        status: dict[str, Any] = {"allowed": bool(allowed)}
        if allowed and reason:
            status["reason"] = reason
        return status

    def _attributes(self, attrs: dict[str, Any]) -> Attributes:
        group = str(attrs.get("group") or "")
        resource = str(attrs.get("resource") or "")
        namespace: str | None = str(attrs.get("namespace") or "") or None
        name = str(attrs.get("name") or "")
        rt = (
            self.registry.get(f"{resource}.{group}" if group else resource)
            if self._known(group, resource)
            else None
        )
        if rt is not None and not rt.namespaced:
            namespace = None  # a cluster-scoped resource has no namespace, whatever the client sent
        return Attributes(
            str(attrs.get("verb") or ""),
            group,
            resource,
            namespace,
            str(attrs.get("subresource") or ""),
            name,
        )

    def _known(self, group: str, resource: str) -> bool:
        return (f"{resource}.{group}" if group else resource) in self.registry

    def _rules_review(self, spec: dict[str, Any], info: RequestInfo, user: User) -> dict[str, Any]:
        namespace = str(spec.get("namespace") or "")
        resource, non_resource = self.authorizer.rules_for(user, namespace or None)
        return {
            "resourceRules": [r.to_dict() for r in resource],
            "nonResourceRules": [r.to_dict() for r in non_resource],
            "incomplete": False,
        }


_PROTOBUF = "application/vnd.kubernetes.protobuf"

# The protobuf field numbers of the review kinds (k8s.io/api authentication/v1 and authorization/v1
# generated.proto), as far as the server reads them.
_META: protowire.MessageSpec = {
    1: ("name", "string", None),
    2: ("generateName", "string", None),
    3: ("namespace", "string", None),
}
_RESOURCE_ATTRIBUTES: protowire.MessageSpec = {
    1: ("namespace", "string", None),
    2: ("verb", "string", None),
    3: ("group", "string", None),
    4: ("version", "string", None),
    5: ("resource", "string", None),
    6: ("subresource", "string", None),
    7: ("name", "string", None),
}
_NON_RESOURCE_ATTRIBUTES: protowire.MessageSpec = {1: ("path", "string", None), 2: ("verb", "string", None)}
_ACCESS_SPEC: protowire.MessageSpec = {
    1: ("resourceAttributes", "message", _RESOURCE_ATTRIBUTES),
    2: ("nonResourceAttributes", "message", _NON_RESOURCE_ATTRIBUTES),
    3: ("user", "string", None),
    4: ("groups", "repeated string", None),
    6: ("uid", "string", None),
}
_SPECS: dict[str, protowire.MessageSpec] = {
    "tokenreviews": {1: ("token", "string", None), 2: ("audiences", "repeated string", None)},
    "selfsubjectreviews": {},
    "selfsubjectaccessreviews": _ACCESS_SPEC,
    "subjectaccessreviews": _ACCESS_SPEC,
    "localsubjectaccessreviews": _ACCESS_SPEC,
    "selfsubjectrulesreviews": {1: ("namespace", "string", None)},
}


def _protobuf_body(info: RequestInfo, body: bytes) -> dict[str, Any]:
    """A review sent as Kubernetes protobuf (kubectl's typed clients do), as the JSON object it stands for."""
    try:
        _, _, raw = protowire.unwrap(body)
        spec_field = 2 if info.resource != "selfsubjectreviews" else 0
        message: protowire.MessageSpec = {1: ("metadata", "message", _META)}
        if spec_field:
            message[spec_field] = ("spec", "message", _SPECS[info.resource])
        return protowire.decode(raw, message)
    except protowire.ProtoError as err:
        raise HTTPError.bad_request(f"the body of the request was in an unknown format - {err}") from None


def _user_info(user: User) -> dict[str, Any]:
    info: dict[str, Any] = {"username": user.name}
    if user.uid:
        info["uid"] = user.uid
    info["groups"] = user_groups(user)
    return info


def _check_access_spec(kind: str, spec: dict[str, Any], *, subject: bool) -> None:
    """Upstream's ``ValidateSubjectAccessReviewSpec`` / ``ValidateSelfSubjectAccessReviewSpec``: 422."""
    errors: list[dict[str, Any]] = []
    has_resource = isinstance(spec.get("resourceAttributes"), dict)
    has_non_resource = isinstance(spec.get("nonResourceAttributes"), dict)
    if has_resource and has_non_resource:
        errors.append(
            {
                "reason": "FieldValueInvalid",
                "field": "spec.nonResourceAttributes",
                "message": 'Invalid value: "object": cannot be specified in combination with '
                "resourceAttributes",
            }
        )
    if not has_resource and not has_non_resource:
        errors.append(
            {
                "reason": "FieldValueInvalid",
                "field": "spec.resourceAttributes",
                "message": 'Invalid value: "null": exactly one of nonResourceAttributes or '
                "resourceAttributes must be specified",
            }
        )
    if subject and not spec.get("user") and not spec.get("groups"):
        errors.append(
            {
                "reason": "FieldValueInvalid",
                "field": "spec.user",
                "message": 'Invalid value: "": at least one of user or group must be specified',
            }
        )
    if errors:
        raise HTTPError.invalid(kind, "authorization.k8s.io", "", errors)
