"""Bearer-token authentication and a small, data-driven RBAC for the local control plane.

There is one admin (all verbs on everything) and any number of users limited to namespaces. What
a user may do is a list of :class:`Rule` objects (like the rules of a Kubernetes ``Role``), so other
components can grant more, e.g. the Kueue visibility API::

    cp.auth.policy.add_rule(Rule(group="visibility.kueue.x-k8s.io",
                                 resources=("localqueues/pendingworkloads",), verbs=READ))

Tokens are compared in constant time and never logged or shown in a repr.

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

import hmac
import secrets
import threading
from collections.abc import Iterable
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
    if user.admin:
        return ["system:masters", "system:authenticated"]
    if user.name.startswith(SERVICE_ACCOUNT_PREFIX):
        namespace = user.name[len(SERVICE_ACCOUNT_PREFIX) :].split(":", 1)[0]
        return ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"]
    return ["system:authenticated"]


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


class Authenticator:
    """Holds the tokens: one admin token and one per user. Thread-safe.

    Example:
        >>> a = Authenticator(admin_token="t0ken-for-tests")
        >>> a.authenticate("Bearer t0ken-for-tests").admin
        True
        >>> "t0ken" in repr(a)
        False
    """

    def __init__(self, admin_token: str | None = None, policy: Policy | None = None) -> None:
        self._lock = threading.Lock()
        self._tokens: list[tuple[bytes, User]] = []
        self.users: dict[str, User] = {}
        self.policy = policy or Policy()
        self.admin_token = admin_token or secrets.token_urlsafe(32)
        self._add(self.admin_token, User("admin", admin=True))

    def __repr__(self) -> str:
        return f"Authenticator(users={sorted(self.users)!r})"

    def _add(self, token: str, user: User) -> None:
        with self._lock:
            self._tokens = [(t, u) for t, u in self._tokens if u.name != user.name] + [(token.encode(), user)]
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
            kept = [(t, u) for t, u in self._tokens if u.name != name]
            found = len(kept) != len(self._tokens)
            self._tokens = kept
            self.users.pop(name, None)
        return found

    def service_account_token(self, namespace: str, name: str) -> str:
        """A bearer token for the ServiceAccount ``name`` in ``namespace`` (a new one per call).

        Its user is ``system:serviceaccount:<namespace>:<name>``, as upstream names a service
        account's identity [pkg/serviceaccount/util.go MakeUsername]. It is granted nothing beyond
        what every authenticated user may do; what the policy grants users by namespace does not
        apply to it. Service accounts are not :attr:`users` (nor in :meth:`tokens`): their tokens
        live as long as this authenticator. Never log it.

        Example:
            >>> a = Authenticator()
            >>> t = a.service_account_token("team-a", "reaper")
            >>> a.authenticate(f"Bearer {t}").name
            'system:serviceaccount:team-a:reaper'
        """
        token = secrets.token_urlsafe(32)
        user = User(f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}")
        with self._lock:
            self._tokens.append((token.encode(), user))
        return token

    def tokens(self) -> dict[str, tuple[str, list[str]]]:
        """``{user: (token, namespaces)}`` for persistence (admins excluded). Never log this."""
        with self._lock:
            return {
                u.name: (t.decode(), sorted(u.namespaces))
                for t, u in self._tokens
                if not u.admin and not u.name.startswith(SERVICE_ACCOUNT_PREFIX)
            }

    def admin_tokens(self) -> dict[str, str]:
        """``{user: token}`` of the admins added by :meth:`add_user` (not the built-in one). Never log it."""
        with self._lock:
            return {u.name: t.decode() for t, u in self._tokens if u.admin and u.name != "admin"}

    def user_for_token(self, token: str) -> User | None:
        """The user a bearer token belongs to, or None (compared in constant time, as :meth:`authenticate`).

        Example:
            >>> a = Authenticator(admin_token="t0ken-for-tests")
            >>> a.user_for_token("t0ken-for-tests").name, a.user_for_token("nope")
            ('admin', None)
        """
        return self.authenticate(f"Bearer {token}")

    def authenticate(self, authorization: str | None) -> User | None:
        """The user for an ``Authorization`` header value, or None (-> 401)."""
        # The scheme is case-insensitive (RFC 7235), as the real API server treats it: the
        # kubernetes client's in-cluster loader sends "bearer <token>".
        scheme, _, credentials = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not credentials.strip():
            return None
        given = credentials.strip().encode()
        found: User | None = None
        with self._lock:
            candidates = list(self._tokens)
        for token, user in candidates:  # compare against every token: no early exit
            if hmac.compare_digest(token, given):
                found = user
        return found
