"""Bearer-token authentication and a small, data-driven RBAC for the local control plane.

There is one admin (all verbs on everything) and any number of users limited to namespaces. What
a user may do is a list of :class:`Rule` objects (like the rules of a Kubernetes ``Role``), so other
components can grant more, e.g. the Kueue visibility API::

    cp.auth.policy.add_rule(Rule(group="visibility.kueue.x-k8s.io",
                                 resources=("localqueues/pendingworkloads",), verbs=READ))

Tokens are looked up by their SHA-256 digest and never logged or shown in a repr. What a request may
do beyond the policy comes from RBAC objects (:mod:`rayqueue_local.apiserver.rbac`).

Example:
    >>> a = Authenticator()
    >>> token = a.add_user("alice", ["team-a"])
    >>> a.authenticate(f"Bearer {token}").name
    'alice'
    >>> a.authenticate("Bearer nope") is None
    True
    >>> attrs = Attributes(verb="create", group="ray.io", resource="rayclusters", namespace="team-b")
    >>> a.policy.authorize(a.authenticate(f"Bearer {token}"), attrs)
    False
    >>> print(forbidden_message(a.users["alice"], attrs))  # doctest: +NORMALIZE_WHITESPACE
    rayclusters.ray.io is forbidden: User "alice" cannot create resource "rayclusters"
    in API group "ray.io" in the namespace "team-b"
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "ALL_VERBS",
    "BASIC_USER_RULES",
    "DISCOVERY_PATHS",
    "READ",
    "SERVICE_ACCOUNT_PREFIX",
    "Attributes",
    "Authenticator",
    "Policy",
    "Rule",
    "User",
    "data_scientist_rules",
    "forbidden_message",
    "user_groups",
]

#: Every verb a rule can grant on a collection resource.
ALL_VERBS: tuple[str, ...] = (
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
)
READ: tuple[str, ...] = ("get", "list", "watch")

#: How a service account's user name starts: ``system:serviceaccount:<namespace>:<name>``.
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"

#: The non-resource URLs every authenticated user may ``get``: upstream's ``system:discovery`` and
#: ``system:public-info-viewer`` ClusterRoles (``plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go``).
#: A trailing ``*`` matches any suffix, as RBAC's ``nonResourceURLs`` do.
DISCOVERY_PATHS: tuple[str, ...] = (
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/healthz",
    "/livez",
    "/openapi",
    "/openapi/*",
    "/readyz",
    "/version",
    "/version/",
)


@dataclass(frozen=True)
class User:
    """An authenticated identity: the admin, or a user limited to ``namespaces``.

    Example:
        >>> User("bob", frozenset({"team-b"})).admin
        False
    """

    name: str
    namespaces: frozenset[str] = frozenset()
    admin: bool = False
    #: The identity's uid where it has one (a service account's ``metadata.uid``), as TokenReview shows it.
    uid: str = ""
    #: Exactly these groups instead of :func:`user_groups`' own (a SubjectAccessReview's ``spec.groups``).
    groups: tuple[str, ...] | None = None

    @property
    def is_service_account(self) -> bool:
        """Whether this is a service account (``system:serviceaccount:<namespace>:<name>``).

        Example:
            >>> User("system:serviceaccount:ns:sa").is_service_account, User("alice").is_service_account
            (True, False)
        """
        return self.name.startswith(SERVICE_ACCOUNT_PREFIX)


@dataclass(frozen=True)
class Attributes:
    """What a request wants to do, in RBAC terms (the API server's authorizer attributes).

    ``resource`` is the plural; ``subresource`` e.g. ``"status"``; ``namespace`` is None for a
    cluster-scoped resource.

    Example:
        >>> Attributes("get", "kueue.x-k8s.io", "workloads", "team-a", "status").resource_path
        'workloads/status'
    """

    verb: str
    group: str
    resource: str
    namespace: str | None = None
    subresource: str = ""
    name: str = ""

    @property
    def resource_path(self) -> str:
        """``plural`` or ``plural/subresource``."""
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


@dataclass(frozen=True)
class Rule:
    """One permission: ``verbs`` on ``resources`` (``plural`` or ``plural/subresource``) of ``group``.

    ``scope`` is ``"namespace"`` (objects in the user's namespaces), ``"cluster"`` (cluster-scoped
    resources) or ``"own-namespace"`` (the user's own ``Namespace`` objects, by name).

    Example:
        >>> r = Rule(group="ray.io", resources=("rayclusters",), verbs=ALL_VERBS)
        >>> r.allows(User("a", frozenset({"x"})), Attributes("delete", "ray.io", "rayclusters", "x"))
        True
    """

    group: str
    resources: tuple[str, ...]
    verbs: tuple[str, ...]
    scope: Literal["namespace", "cluster", "own-namespace"] = "namespace"

    def allows(self, user: User, attrs: Attributes) -> bool:
        """Whether this rule grants ``attrs`` to ``user``."""
        if attrs.group != self.group or attrs.verb not in self.verbs:
            return False
        if attrs.resource_path not in self.resources and "*" not in self.resources:
            return False
        if self.scope == "namespace":
            return attrs.namespace is not None and attrs.namespace in user.namespaces
        if self.scope == "cluster":
            return attrs.namespace is None
        # own-namespace: a Namespace object whose name is one of the user's namespaces
        return attrs.namespace is None and bool(attrs.name) and attrs.name in user.namespaces


def data_scientist_rules() -> list[Rule]:
    """The default rules for a user: manage their Ray work in their namespaces, read queues.

    Example:
        >>> any(r.group == "kueue.x-k8s.io" and "create" in r.verbs for r in data_scientist_rules())
        False
    """
    return [
        Rule("ray.io", ("rayclusters", "rayjobs", "rayclusters/status", "rayjobs/status"), ALL_VERBS),
        Rule("", ("secrets", "configmaps", "serviceaccounts"), ALL_VERBS),
        Rule("", ("serviceaccounts/token",), ("create",)),
        Rule("rbac.authorization.k8s.io", ("roles", "rolebindings"), ALL_VERBS),
        # escalate/bind on Roles: a user may give a service account of theirs any Role in their own
        # namespaces (the scale-to-zero reaper's get/patch of Workloads, which they cannot patch
        # themselves); never ClusterRoles they do not hold (upstream's escalation check).
        Rule("rbac.authorization.k8s.io", ("roles",), ("escalate", "bind")),
        Rule("keda.sh", ("triggerauthentications", "scaledobjects", "scaledobjects/status"), ALL_VERBS),
        Rule("kueue.x-k8s.io", ("localqueues", "localqueues/status", "workloads", "workloads/status"), READ),
        Rule("", ("pods", "pods/status", "pods/log", "services", "events"), READ),
        Rule("events.k8s.io", ("events",), READ),
        Rule("networking.k8s.io", ("ingresses",), READ),
        Rule("", ("namespaces",), ("get",), scope="own-namespace"),
        Rule(
            "kueue.x-k8s.io",
            ("workloadpriorityclasses", "clusterqueues", "clusterqueues/status", "resourceflavors"),
            READ,
            scope="cluster",
        ),
    ]


#: What every authenticated user may do whatever the policy says: upstream's ``system:basic-user``
#: ClusterRole, bound to the group ``system:authenticated`` (create the self reviews).
BASIC_USER_RULES: tuple[Rule, ...] = (
    Rule(
        "authorization.k8s.io",
        ("selfsubjectaccessreviews", "selfsubjectrulesreviews"),
        ("create",),
        scope="cluster",
    ),
    Rule("authentication.k8s.io", ("selfsubjectreviews",), ("create",), scope="cluster"),
)


def user_groups(user: User) -> list[str]:
    """The groups an authenticated user is in, as ``kubectl auth whoami`` shows them.

    The admin is in ``system:masters`` (upstream's superuser group, which RBAC never denies); a
    service account is in ``system:serviceaccounts`` and ``system:serviceaccounts:<namespace>``
    [pkg/serviceaccount/util.go MakeGroupNames]; every user is in ``system:authenticated``.

    Example:
        >>> user_groups(User("admin", admin=True)), user_groups(User("alice"))
        (['system:masters', 'system:authenticated'], ['system:authenticated'])
        >>> user_groups(User("system:serviceaccount:ns:sa"))[:2]
        ['system:serviceaccounts', 'system:serviceaccounts:ns']
    """
    if user.groups is not None:
        return list(user.groups)
    if user.admin:
        groups = ["system:masters", "system:authenticated"]
    elif user.is_service_account:
        namespace = user.name[len(SERVICE_ACCOUNT_PREFIX) :].split(":", 1)[0]
        groups = ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"]
    else:
        groups = ["system:authenticated"]
    return groups


@dataclass
class Policy:
    """The rules that apply to every non-admin user; admins may do anything.

    Example:
        >>> p = Policy()
        >>> p.add_rule(Rule("visibility.kueue.x-k8s.io", ("localqueues/pendingworkloads",), READ))
        >>> attrs = Attributes("get", "visibility.kueue.x-k8s.io", "localqueues", "ns", "pendingworkloads")
        >>> p.authorize(User("a", frozenset({"ns"})), attrs)
        True
    """

    rules: list[Rule] = field(default_factory=data_scientist_rules)

    def add_rule(self, rule: Rule) -> None:
        """Grant ``rule`` to every user."""
        self.rules.append(rule)

    def authorize(self, user: User, attrs: Attributes) -> bool:
        """Whether ``user`` may do ``attrs`` (the policy's rules, plus :data:`BASIC_USER_RULES`)."""
        return (
            user.admin
            or any(rule.allows(user, attrs) for rule in self.rules)
            or any(rule.allows(user, attrs) for rule in BASIC_USER_RULES)
        )


def forbidden_message(user: User, attrs: Attributes) -> str:
    """The API server's 403 message, word for word.

    Example:
        >>> attrs = Attributes("create", "kueue.x-k8s.io", "clusterqueues", name="cq")
        >>> print(forbidden_message(User("a"), attrs))  # doctest: +NORMALIZE_WHITESPACE
        clusterqueues.kueue.x-k8s.io "cq" is forbidden: User "a" cannot create resource "clusterqueues"
        in API group "kueue.x-k8s.io" at the cluster scope
    """
    qualified = f"{attrs.resource}.{attrs.group}" if attrs.group else attrs.resource
    subject = f'{qualified} "{attrs.name}"' if attrs.name else qualified
    where = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
    return (
        f'{subject} is forbidden: User "{user.name}" cannot {attrs.verb} resource "{attrs.resource_path}" '
        f'in API group "{attrs.group}" {where}'
    )


def _digest(token: str) -> bytes:
    """The key a token is kept under: its SHA-256, so a lookup never compares secrets byte by byte."""
    return hashlib.sha256(token.encode()).digest()


@dataclass(frozen=True)
class _Token:
    user: User
    #: ``time.time()`` after which the token is refused (None: no expiry).
    expires: float | None = None
    #: ``(kind, namespace, name)`` of the object whose deletion ends the token (a Secret, a ServiceAccount).
    bound: tuple[tuple[str, str, str], ...] = ()


class Authenticator:
    """Holds the tokens: one admin token, one per user, and service accounts' tokens. Thread-safe.

    Tokens are kept under their SHA-256 digest (a dict lookup; no secret is compared byte by byte, and
    none is kept in the clear for service accounts). A service account's token may expire and may be
    bound to objects whose deletion revokes it (:meth:`revoke_bound`), as upstream's bound tokens are.

    Example:
        >>> a = Authenticator(admin_token="t0ken-for-tests")
        >>> a.authenticate("Bearer t0ken-for-tests").admin
        True
        >>> "t0ken" in repr(a)
        False
    """

    def __init__(
        self,
        admin_token: str | None = None,
        policy: Policy | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._lock = threading.Lock()
        self._tokens: dict[bytes, _Token] = {}
        #: the clear tokens of the admin and the users, for persistence (never service accounts')
        self._clear: dict[str, str] = {}
        self.users: dict[str, User] = {}
        self.policy = policy or Policy()
        self.clock = clock
        self.admin_token = admin_token or secrets.token_urlsafe(32)
        self._add(self.admin_token, User("admin", admin=True))

    def __repr__(self) -> str:
        return f"Authenticator(users={sorted(self.users)!r})"

    def _add(self, token: str, user: User) -> None:
        with self._lock:
            old = self._clear.pop(user.name, None)
            if old is not None:
                self._tokens.pop(_digest(old), None)
            self._tokens[_digest(token)] = _Token(user)
            self._clear[user.name] = token
            self.users[user.name] = user

    def add_user(
        self, name: str, namespaces: Iterable[str], token: str | None = None, *, admin: bool = False
    ) -> str:
        """Create (or replace) ``name``, limited to ``namespaces`` or an ``admin``; returns its token."""
        token = token or secrets.token_urlsafe(32)
        self._add(token, User(name, frozenset(namespaces), admin=admin))
        return token

    def remove_user(self, name: str) -> bool:
        """Forget ``name`` and its token at once (its next request is a 401); whether it existed.

        The built-in ``admin`` cannot be removed.

        Example:
            >>> a = Authenticator()
            >>> t = a.add_user("bob", ["team-b"])
            >>> a.remove_user("bob"), a.authenticate(f"Bearer {t}"), a.remove_user("bob")
            (True, None, False)
        """
        if name == "admin":
            return False
        with self._lock:
            token = self._clear.pop(name, None)
            if token is not None:
                self._tokens.pop(_digest(token), None)
            found = self.users.pop(name, None) is not None
        return found

    def service_account_token(
        self,
        namespace: str,
        name: str,
        *,
        uid: str = "",
        expiration_seconds: int | None = None,
        bound: Iterable[tuple[str, str, str]] = (),
        token: str | None = None,
    ) -> str:
        """A bearer token for the ServiceAccount ``name`` in ``namespace`` (a new one per call).

        Its user is ``system:serviceaccount:<namespace>:<name>``, as upstream names a service
        account's identity [pkg/serviceaccount/util.go MakeUsername], with the account's ``uid``.
        What it may do comes from RBAC bindings (:mod:`rayqueue_local.apiserver.rbac`); what the
        policy grants users by namespace does not apply to it. ``expiration_seconds``: refused (401)
        once that many seconds have passed; ``bound``: ``(kind, namespace, name)`` of objects whose
        deletion revokes it (:meth:`revoke_bound`); the ServiceAccount itself always is one.
        ``token``: register this token (a legacy token Secret's, after a restart) instead of a new
        one. Service accounts are not :attr:`users` (nor in :meth:`tokens`). Never log it.

        Example:
            >>> a = Authenticator()
            >>> t = a.service_account_token("team-a", "reaper")
            >>> a.authenticate(f"Bearer {t}").name
            'system:serviceaccount:team-a:reaper'
            >>> a.revoke_bound("ServiceAccount", "team-a", "reaper"), a.authenticate(f"Bearer {t}")
            (1, None)
        """
        token = token or secrets.token_urlsafe(32)
        user = User(f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}", uid=uid)
        now = self.clock()
        expires = now + expiration_seconds if expiration_seconds is not None else None
        ties = (("ServiceAccount", namespace, name), *bound)
        with self._lock:
            self._tokens = {
                k: v for k, v in self._tokens.items() if v.expires is None or v.expires > now
            }  # forget expired tokens as new ones come
            self._tokens[_digest(token)] = _Token(user, expires, tuple(ties))
        return token

    def revoke_bound(self, kind: str, namespace: str, name: str) -> int:
        """Revoke every token bound to the object ``kind namespace/name`` (it was deleted); how many.

        Example:
            >>> a = Authenticator()
            >>> t = a.service_account_token("ns", "sa", bound=[("Secret", "ns", "sa-token")])
            >>> a.revoke_bound("Secret", "ns", "other"), a.revoke_bound("Secret", "ns", "sa-token")
            (0, 1)
        """
        tie = (kind, namespace, name)
        with self._lock:
            gone = [k for k, v in self._tokens.items() if tie in v.bound]
            for key in gone:
                del self._tokens[key]
        return len(gone)

    def tokens(self) -> dict[str, tuple[str, list[str]]]:
        """``{user: (token, namespaces)}`` for persistence (admins excluded). Never log this."""
        with self._lock:
            return {
                name: (token, sorted(self.users[name].namespaces))
                for name, token in self._clear.items()
                if not self.users[name].admin
            }

    def admin_tokens(self) -> dict[str, str]:
        """``{user: token}`` of the admins added by :meth:`add_user` (not the built-in one). Never log it."""
        with self._lock:
            return {
                name: token
                for name, token in self._clear.items()
                if self.users[name].admin and name != "admin"
            }

    def user_for_token(self, token: str) -> User | None:
        """The user a bearer token belongs to, or None (as :meth:`authenticate`).

        Example:
            >>> a = Authenticator(admin_token="t0ken-for-tests")
            >>> a.user_for_token("t0ken-for-tests").name, a.user_for_token("nope")
            ('admin', None)
        """
        return self.authenticate(f"Bearer {token}")

    def authenticate(self, authorization: str | None) -> User | None:
        """The user for an ``Authorization`` header value, or None (-> 401); an expired token is None.

        Example:
            >>> now = [1000.0]
            >>> a = Authenticator(clock=lambda: now[0])
            >>> t = a.service_account_token("ns", "sa", expiration_seconds=600)
            >>> a.authenticate(f"Bearer {t}") is not None
            True
            >>> now[0] += 601
            >>> a.authenticate(f"Bearer {t}") is None
            True
        """
        # The scheme is case-insensitive (RFC 7235), as the real API server treats it: the
        # kubernetes client's in-cluster loader sends "bearer <token>".
        scheme, _, credentials = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not credentials.strip():
            return None
        found = self._tokens.get(_digest(credentials.strip()))
        if found is None:
            return None
        if found.expires is not None and found.expires <= self.clock():
            return None
        return found.user
