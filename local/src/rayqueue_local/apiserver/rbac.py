"""RBAC from objects: ``rbac.authorization.k8s.io/v1`` Roles, ClusterRoles and their bindings, as
upstream's RBAC authorizer reads them (``plugin/pkg/auth/authorizer/rbac`` in kubernetes/kubernetes).

What a request may do (:meth:`Authorizer.decide`) is allowed when any of these allows it:

* the admin, or any member of ``system:masters`` (upstream's superuser group);
* the plane's :class:`~rayqueue_local.apiserver.auth.Policy`, for the plane's own users (not for service
  accounts, and not for names the plane does not know);
* :data:`~rayqueue_local.apiserver.auth.BASIC_USER_RULES` for ``system:authenticated``;
* a ``ClusterRoleBinding`` (its ClusterRole's rules, in every namespace and at the cluster scope), or a
  ``RoleBinding`` (its Role's or ClusterRole's rules, in the binding's namespace only), whose subjects
  include the user: ``User`` by name, ``Group`` by the user's groups, ``ServiceAccount`` as
  ``system:serviceaccount:<namespace>:<name>`` (a RoleBinding's subject without a namespace means the
  binding's own) [rbac.go appliesToUser].

A rule matches as upstream's ``RuleAllows`` does: ``verbs`` (``*`` is any), ``apiGroups`` (``*``),
``resources`` (``*``, ``plural``, ``plural/subresource``, ``*/subresource``), ``resourceNames`` (when
given, only those names; a request with no name does not match), and, in ClusterRoles,
``nonResourceURLs`` (exact, ``*``, or a prefix ending in ``*``) for non-resource requests.

The bindings are indexed by subject; the index is rebuilt when an RBAC object changes (the store tells
:class:`RBACIndex`), never scanned per request. Privilege escalation is refused as upstream
(``pkg/registry/rbac/validation``): creating or updating a Role or ClusterRole needs every permission
it grants (or ``escalate`` on it), and a binding needs the permissions of the role it names (or ``bind``
on that role); the 403 says which permissions are missing, in upstream's words. ``roleRef`` cannot change.

Example:
    >>> from rayqueue_local.apiserver.auth import Authenticator
    >>> from rayqueue_local.storage.store import Store
    >>> store, auth = Store(namespaces=("ns",)), Authenticator()
    >>> authz = Authorizer(auth, store)
    >>> _ = store.create("roles.rbac.authorization.k8s.io", {"metadata": {"name": "r", "namespace": "ns"},
    ...     "rules": [{"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"],
    ...                "verbs": ["get", "patch"]}]})
    >>> _ = store.create("rolebindings.rbac.authorization.k8s.io", {
    ...     "metadata": {"name": "rb", "namespace": "ns"},
    ...     "subjects": [{"kind": "ServiceAccount", "name": "reaper"}],
    ...     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"}})
    >>> sa = User("system:serviceaccount:ns:reaper")
    >>> authz.decide(sa, Attributes("patch", "kueue.x-k8s.io", "workloads", "ns", name="w"))
    (True, 'RBAC: allowed by RoleBinding "rb/ns" of Role "r" to ServiceAccount "reaper/ns"')
    >>> authz.authorize(sa, Attributes("delete", "kueue.x-k8s.io", "workloads", "ns", name="w"))
    False
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from rayqueue_local.apimachinery.patch import deep_copy
from rayqueue_local.apiserver.auth import (
    BASIC_USER_RULES,
    DISCOVERY_PATHS,
    Attributes,
    Authenticator,
    Rule,
    User,
    user_groups,
)
from rayqueue_local.storage.store import Event, Store, StoreError

__all__ = [
    "ADMIN_REASON",
    "RBAC_GROUP",
    "RBAC_KEYS",
    "REQUEST_USER",
    "Authorizer",
    "PolicyRule",
    "RBACIndex",
    "bootstrap_objects",
    "compact_string",
    "covers",
]

#: The API group of the RBAC kinds.
RBAC_GROUP = "rbac.authorization.k8s.io"
_ROLES = f"roles.{RBAC_GROUP}"
_CLUSTER_ROLES = f"clusterroles.{RBAC_GROUP}"
_BINDINGS = f"rolebindings.{RBAC_GROUP}"
_CLUSTER_BINDINGS = f"clusterrolebindings.{RBAC_GROUP}"
#: The store keys of the four RBAC kinds.
RBAC_KEYS: tuple[str, ...] = (_ROLES, _CLUSTER_ROLES, _BINDINGS, _CLUSTER_BINDINGS)

#: The reason upstream gives for the superuser group (the bootstrap ``cluster-admin`` binding).
ADMIN_REASON = (
    'RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin" '
    'to Group "system:masters"'
)

#: Who sends the request being served (set by the API server around the REST call), so the store's
#: admission hooks can refuse privilege escalation as upstream's RBAC storage does; None for the
#: controllers' own writes, which are not checked.
REQUEST_USER: contextvars.ContextVar[User | None] = contextvars.ContextVar("rbac_request_user", default=None)


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


@dataclass(frozen=True)
class PolicyRule:
    """One ``rbacv1.PolicyRule``: verbs on resources of API groups (or on non-resource URLs).

    Example:
        >>> r = PolicyRule.from_dict({"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]})
        >>> r.allows(Attributes("get", "", "pods", "ns", "log", "p"))
        True
        >>> r.allows(Attributes("get", "", "pods", "ns"))
        False
        >>> PolicyRule.from_dict({"apiGroups": ["*"], "resources": ["*/scale"], "verbs": ["*"]}).allows(
        ...     Attributes("update", "apps", "deployments", "ns", "scale", "d"))
        True
    """

    verbs: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, rule: Any) -> PolicyRule:
        """A rule from its JSON form (missing or malformed lists are empty, so they match nothing)."""
        rule = rule if isinstance(rule, dict) else {}
        return cls(
            _strings(rule.get("verbs")),
            _strings(rule.get("apiGroups")),
            _strings(rule.get("resources")),
            _strings(rule.get("resourceNames")),
            _strings(rule.get("nonResourceURLs")),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, as a ``ResourceRule`` / ``NonResourceRule`` of a SelfSubjectRulesReview."""
        out: dict[str, Any] = {"verbs": list(self.verbs)}
        if self.non_resource_urls:
            out["nonResourceURLs"] = list(self.non_resource_urls)
            return out
        out["apiGroups"] = list(self.api_groups)
        out["resources"] = list(self.resources)
        if self.resource_names:
            out["resourceNames"] = list(self.resource_names)
        return out

    def _verb(self, verb: str) -> bool:
        return "*" in self.verbs or verb in self.verbs

    def allows(self, attrs: Attributes) -> bool:
        """Upstream's ``RuleAllows`` for a resource request."""
        if not self._verb(attrs.verb):
            return False
        if "*" not in self.api_groups and attrs.group not in self.api_groups:
            return False
        if not _resource_matches(self.resources, attrs.resource, attrs.subresource):
            return False
        return not self.resource_names or (bool(attrs.name) and attrs.name in self.resource_names)

    def allows_url(self, verb: str, path: str) -> bool:
        """Upstream's ``NonResourceURLMatches`` with the verb."""
        if not self._verb(verb):
            return False
        return any(
            url == "*" or url == path or (url.endswith("*") and path.startswith(url[:-1]))
            for url in self.non_resource_urls
        )


def _resource_matches(rule_resources: tuple[str, ...], resource: str, subresource: str) -> bool:
    combined = f"{resource}/{subresource}" if subresource else resource
    for candidate in rule_resources:
        if candidate in ("*", combined):
            return True
        if subresource and candidate == f"*/{subresource}":
            return True
    return False


# -- escalation: upstream's Covers (pkg/apis/rbac/validation/policy_comparator.go) -------------------
def _breakdown(rule: PolicyRule) -> Iterator[PolicyRule]:
    """One rule per verb and group and resource (and name), or per verb and URL."""
    for group in rule.api_groups:
        for resource in rule.resources:
            for verb in rule.verbs:
                if rule.resource_names:
                    for name in rule.resource_names:
                        yield PolicyRule((verb,), (group,), (resource,), (name,))
                else:
                    yield PolicyRule((verb,), (group,), (resource,))
    for url in rule.non_resource_urls:
        for verb in rule.verbs:
            yield PolicyRule((verb,), non_resource_urls=(url,))


def _has_all(owner: tuple[str, ...], wanted: tuple[str, ...]) -> bool:
    return "*" in owner or all(w in owner for w in wanted)


def _resource_covers(owner: tuple[str, ...], wanted: tuple[str, ...]) -> bool:
    if "*" in owner:
        return True
    for item in wanted:
        if item in owner:
            continue
        _, slash, sub = item.partition("/")
        if slash and f"*/{sub}" in owner:
            continue
        return False
    return True


def _url_covers(owner: tuple[str, ...], wanted: tuple[str, ...]) -> bool:
    return all(
        any(o == "*" or o == w or (o.endswith("*") and w.startswith(o[:-1])) for o in owner) for w in wanted
    )


def _rule_covers(owner: PolicyRule, servant: PolicyRule) -> bool:
    if not _has_all(owner.verbs, servant.verbs):
        return False
    if servant.non_resource_urls:
        return _url_covers(owner.non_resource_urls, servant.non_resource_urls)
    return (
        _has_all(owner.api_groups, servant.api_groups)
        and _resource_covers(owner.resources, servant.resources)
        and (not owner.resource_names or all(n in owner.resource_names for n in servant.resource_names))
        and (bool(servant.resource_names) or not owner.resource_names)
    )


def covers(owner: Iterable[PolicyRule], servant: Iterable[PolicyRule]) -> tuple[bool, list[PolicyRule]]:
    """Whether ``owner`` rules hold every permission of ``servant``; and the ones they do not hold.

    Example:
        >>> mine = [PolicyRule(("get", "list"), ("",), ("pods",))]
        >>> covers(mine, [PolicyRule(("get",), ("",), ("pods",))])
        (True, [])
        >>> covers(mine, [PolicyRule(("get", "delete"), ("",), ("pods", "secrets"))])[1]  # doctest: +ELLIPSIS
        [PolicyRule(verbs=('delete',), api_groups=('',), resources=('pods',), ...), ...]
    """
    owned = list(owner)
    missing = [
        atom for rule in servant for atom in _breakdown(rule) if not any(_rule_covers(o, atom) for o in owned)
    ]
    return not missing, missing


def _compact(rules: list[PolicyRule]) -> list[PolicyRule]:
    """Upstream's ``CompactRules``: simple rules of one group and one resource merge their verbs."""
    merged: dict[tuple[str, str], list[str]] = {}
    out: list[PolicyRule] = []
    for rule in rules:
        simple = len(rule.api_groups) == 1 and len(rule.resources) == 1 and not rule.resource_names
        if simple and not rule.non_resource_urls:
            verbs = merged.setdefault((rule.api_groups[0], rule.resources[0]), [])
            verbs.extend(v for v in rule.verbs if v not in verbs)
        else:
            out.append(rule)
    return [PolicyRule(tuple(v), (g,), (r,)) for (g, r), v in merged.items()] + out


def _go_quoted(values: Iterable[str]) -> str:
    """Go's ``%q`` of a ``[]string``: ``["a" "b"]``."""
    escaped = (v.replace("\\", "\\\\").replace('"', '\\"') for v in values)
    return "[" + " ".join(f'"{v}"' for v in escaped) + "]"


def compact_string(rule: PolicyRule) -> str:
    """Upstream's ``CompactString`` of a rule, as its escalation 403 lists missing permissions.

    Example:
        >>> compact_string(PolicyRule(("get", "patch"), ("kueue.x-k8s.io",), ("workloads",)))
        '{APIGroups:["kueue.x-k8s.io"], Resources:["workloads"], Verbs:["get" "patch"]}'
    """
    parts = []
    for label, values in (
        ("APIGroups", rule.api_groups),
        ("Resources", rule.resources),
        ("NonResourceURLs", rule.non_resource_urls),
        ("ResourceNames", rule.resource_names),
        ("Verbs", rule.verbs),
    ):
        if values:
            parts.append(f"{label}:{_go_quoted(values)}")
    return "{" + ", ".join(parts) + "}"


# -- the index ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Grant:
    namespace: str | None  # None: everywhere (a ClusterRoleBinding)
    rules: tuple[PolicyRule, ...]
    reason: str


def _subject_text(subject: dict[str, Any], namespace: str) -> str:
    kind, name = str(subject.get("kind") or ""), str(subject.get("name") or "")
    if kind == "ServiceAccount":
        return f'{kind} "{name}/{subject.get("namespace") or namespace}"'
    return f'{kind} "{name}"'


class RBACIndex:
    """The bindings of a store, by subject; rebuilt on the next lookup after an RBAC object changed.

    Example:
        >>> store = Store()
        >>> index = RBACIndex(store)
        >>> index.grants(User("alice"))
        []
        >>> _ = store.create("clusterroles.rbac.authorization.k8s.io", {"metadata": {"name": "view-cq"},
        ...     "rules": [{"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues"],
        ...                "verbs": ["get"]}]})
        >>> _ = store.create("clusterrolebindings.rbac.authorization.k8s.io", {"metadata": {"name": "b"},
        ...     "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}],
        ...     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
        ...                 "name": "view-cq"}})
        >>> [g.namespace for g in index.grants(User("alice"))]
        [None]
        >>> index.close()
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._changes = 1  # bumped by every RBAC write; the index is current when it equals _built
        self._built = 0
        self._by_user: dict[str, list[_Grant]] = {}
        self._by_group: dict[str, list[_Grant]] = {}
        self._unsubscribe: Callable[[], None] | None = store.subscribe(self._on_event)

    def close(self) -> None:
        """Stop following the store."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def _on_event(self, event: Event) -> None:
        if event.key in RBAC_KEYS:
            self._changes += 1

    def role_rules(self, kind: str, namespace: str, name: str) -> tuple[PolicyRule, ...] | None:
        """The rules of the Role ``namespace/name`` or the ClusterRole ``name``; None when there is none."""
        key = _ROLES if kind == "Role" else _CLUSTER_ROLES if kind == "ClusterRole" else ""
        if not key:
            return None
        try:
            role = self.store.get(key, namespace if kind == "Role" else None, name, copy=False)
        except StoreError:
            return None
        return tuple(PolicyRule.from_dict(r) for r in role.get("rules") or [] if isinstance(r, dict))

    def _rebuild(self) -> None:
        by_user: dict[str, list[_Grant]] = {}
        by_group: dict[str, list[_Grant]] = {}
        roles = {
            (r["metadata"].get("namespace") or "", r["metadata"]["name"]): r
            for r in self.store.list(_ROLES, copy=False)
        }
        cluster_roles = {r["metadata"]["name"]: r for r in self.store.list(_CLUSTER_ROLES, copy=False)}
        for key, kind_text in ((_CLUSTER_BINDINGS, "ClusterRoleBinding"), (_BINDINGS, "RoleBinding")):
            for binding in self.store.list(key, copy=False):
                meta = binding.get("metadata") or {}
                namespace = str(meta.get("namespace") or "")
                ref = binding.get("roleRef") or {}
                ref_kind, ref_name = str(ref.get("kind") or ""), str(ref.get("name") or "")
                if ref_kind == "Role" and namespace:
                    role = roles.get((namespace, ref_name))
                elif ref_kind == "ClusterRole":
                    role = cluster_roles.get(ref_name)
                else:
                    role = None
                if role is None:
                    continue
                rules = tuple(PolicyRule.from_dict(r) for r in role.get("rules") or [] if isinstance(r, dict))
                label = f"{meta.get('name')}/{namespace}" if namespace else str(meta.get("name"))
                for subject in binding.get("subjects") or []:
                    if not isinstance(subject, dict):
                        continue
                    reason = (
                        f'RBAC: allowed by {kind_text} "{label}" of {ref_kind} "{ref_name}" '
                        f"to {_subject_text(subject, namespace)}"
                    )
                    grant = _Grant(namespace or None, rules, reason)
                    kind, name = subject.get("kind"), str(subject.get("name") or "")
                    if kind == "User":
                        by_user.setdefault(name, []).append(grant)
                    elif kind == "Group":
                        by_group.setdefault(name, []).append(grant)
                    elif kind == "ServiceAccount":
                        sa_namespace = str(subject.get("namespace") or namespace)
                        if sa_namespace and name:
                            by_user.setdefault(f"system:serviceaccount:{sa_namespace}:{name}", []).append(
                                grant
                            )
        self._by_user, self._by_group = by_user, by_group

    def grants(self, user: User) -> list[_Grant]:
        """Every grant that applies to ``user`` (by name and by each of its groups), in any namespace."""
        if self._built != self._changes:
            with self._lock:
                changes = self._changes
                if self._built != changes:
                    self._rebuild()
                    self._built = changes
        found = list(self._by_user.get(user.name, ()))
        for group in user_groups(user):
            found.extend(self._by_group.get(group, ()))
        return found


# -- the authorizer ------------------------------------------------------------------------------
def _policy_rule(rule: Rule, user: User, namespace: str | None) -> PolicyRule | None:
    """A plane policy rule as the RBAC rule it amounts to for ``user`` in ``namespace``, if it applies."""
    base = PolicyRule(rule.verbs, (rule.group,), rule.resources)
    if rule.scope == "namespace":
        return base if namespace and namespace in user.namespaces else None
    if rule.scope == "own-namespace":
        return (
            PolicyRule(rule.verbs, (rule.group,), rule.resources, tuple(sorted(user.namespaces)))
            if (user.namespaces)
            else None
        )
    return base


_SUPERUSER_RULES = (PolicyRule(("*",), ("*",), ("*",)), PolicyRule(("*",), non_resource_urls=("*",)))


class Authorizer:
    """The plane's authorizer: admin, plane policy, basic-user rules, and RBAC bindings (module docstring).

    It also installs the store's escalation checks on the four RBAC kinds (:data:`REQUEST_USER`).

    Example:
        >>> from rayqueue_local.storage.store import Store
        >>> auth = Authenticator()
        >>> _ = auth.add_user("alice", ["team-a"])
        >>> authz = Authorizer(auth, Store())
        >>> authz.authorize(auth.users["alice"], Attributes("create", "ray.io", "rayclusters", "team-a"))
        True
        >>> sa = User("system:serviceaccount:team-a:x")
        >>> authz.authorize(sa, Attributes("get", "ray.io", "rayclusters", "team-a"))
        False
    """

    def __init__(self, authenticator: Authenticator, store: Store) -> None:
        self.auth = authenticator
        self.store = store
        self.index = RBACIndex(store)
        for key in RBAC_KEYS:
            if key in store.registry:
                store.add_admission_hook(key, self._admit)

    def close(self) -> None:
        """Stop following the store."""
        self.index.close()

    def ensure_bootstrap(self) -> None:
        """Create the :func:`bootstrap_objects` that are missing (a restart keeps the ones stored)."""
        for key, obj in bootstrap_objects():
            if key not in self.store.registry:
                continue
            try:
                self.store.get(key, None, obj["metadata"]["name"], copy=False)
            except StoreError:
                self.store.create(key, obj)

    def _plane_user(self, user: User) -> bool:
        return not user.is_service_account and user.groups is None and self.auth.users.get(user.name) == user

    @staticmethod
    def _superuser(user: User) -> bool:
        return user.admin or "system:masters" in user_groups(user)

    def decide(self, user: User, attrs: Attributes) -> tuple[bool, str]:
        """``(allowed, reason)`` for a resource request; the reason names the binding that allowed it."""
        if self._superuser(user):
            return True, ADMIN_REASON
        if self._plane_user(user) and any(rule.allows(user, attrs) for rule in self.auth.policy.rules):
            return True, ""
        groups = user_groups(user)
        if "system:authenticated" in groups and any(rule.allows(user, attrs) for rule in BASIC_USER_RULES):
            return True, ""
        for grant in self.index.grants(user):
            if grant.namespace is not None and grant.namespace != attrs.namespace:
                continue
            if any(rule.allows(attrs) for rule in grant.rules):
                return True, grant.reason
        return False, ""

    def authorize(self, user: User, attrs: Attributes) -> bool:
        """Whether ``user`` may do ``attrs``."""
        return self.decide(user, attrs)[0]

    def decide_url(self, user: User, verb: str, path: str) -> tuple[bool, str]:
        """``(allowed, reason)`` for a non-resource request (``GET /healthz``, ...).

        Example:
            >>> from rayqueue_local.storage.store import Store
            >>> Authorizer(Authenticator(), Store()).decide_url(User("bob"), "get", "/apis/ray.io")
            (True, '')
        """
        if self._superuser(user):
            return True, ADMIN_REASON
        groups = user_groups(user)
        if "system:authenticated" in groups and verb == "get" and _discovery_url(path):
            return True, ""
        for grant in self.index.grants(user):
            if grant.namespace is None and any(rule.allows_url(verb, path) for rule in grant.rules):
                return True, grant.reason
        return False, ""

    def rules_for(self, user: User, namespace: str | None) -> tuple[list[PolicyRule], list[PolicyRule]]:
        """``(resource rules, non-resource rules)`` that apply to ``user`` in ``namespace`` (None: the
        cluster scope), as a SelfSubjectRulesReview lists them [rule.go RulesFor]."""
        if self._superuser(user):
            return [_SUPERUSER_RULES[0]], [_SUPERUSER_RULES[1]]
        resource: list[PolicyRule] = []
        non_resource: list[PolicyRule] = []
        if self._plane_user(user):
            for rule in self.auth.policy.rules:
                converted = _policy_rule(rule, user, namespace)
                if converted is not None:
                    resource.append(converted)
        if "system:authenticated" in user_groups(user):
            resource.extend(PolicyRule(r.verbs, (r.group,), r.resources) for r in BASIC_USER_RULES)
            non_resource.append(PolicyRule(("get",), non_resource_urls=DISCOVERY_PATHS))
        for grant in self.index.grants(user):
            if grant.namespace is not None and grant.namespace != namespace:
                continue
            for granted in grant.rules:
                if granted.non_resource_urls:
                    if grant.namespace is None:
                        non_resource.append(granted)
                else:
                    resource.append(granted)
        return resource, non_resource

    # -- escalation prevention (store admission hook) -------------------------------------------------
    def _admit(self, operation: str, new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        user = REQUEST_USER.get()
        if old is not None and "roleRef" in new and new.get("roleRef") != old.get("roleRef"):
            kind = str(new.get("kind") or "RoleBinding")
            name = str((new.get("metadata") or {}).get("name") or "")
            raise StoreError(
                422,
                "Invalid",
                f'{kind}.{RBAC_GROUP} "{name}" is invalid: roleRef: Invalid value: '
                f"{_go_role_ref(new.get('roleRef'))}: cannot change roleRef",
                [{"reason": "FieldValueInvalid", "field": "roleRef", "message": "cannot change roleRef"}],
                details={"name": name, "group": RBAC_GROUP, "kind": kind},
            )
        if user is None or self._superuser(user):
            return new
        meta = new.get("metadata") or {}
        namespace = meta.get("namespace") or None
        name = str(meta.get("name") or "")
        if "roleRef" in new:
            self._check_binding(user, new, namespace, name)
        elif old is None or new.get("rules") != old.get("rules"):
            self._check_role(user, new, namespace, name)
        return new

    def _check_role(self, user: User, role: dict[str, Any], namespace: str | None, name: str) -> None:
        plural = "roles" if namespace else "clusterroles"
        if self.authorize(user, Attributes("escalate", RBAC_GROUP, plural, namespace, name=name)):
            return
        wanted = [PolicyRule.from_dict(r) for r in role.get("rules") or [] if isinstance(r, dict)]
        self._confirm_no_escalation(user, wanted, namespace, plural, name)

    def _check_binding(self, user: User, binding: dict[str, Any], namespace: str | None, name: str) -> None:
        ref = binding.get("roleRef") or {}
        ref_kind, ref_name = str(ref.get("kind") or ""), str(ref.get("name") or "")
        ref_plural = "roles" if ref_kind == "Role" else "clusterroles"
        if self.authorize(user, Attributes("bind", RBAC_GROUP, ref_plural, namespace, name=ref_name)):
            return
        rules = self.index.role_rules(ref_kind, namespace or "", ref_name) or ()
        plural = "rolebindings" if namespace else "clusterrolebindings"
        self._confirm_no_escalation(user, list(rules), namespace, plural, name)

    def _confirm_no_escalation(
        self, user: User, wanted: list[PolicyRule], namespace: str | None, plural: str, name: str
    ) -> None:
        resource, non_resource = self.rules_for(user, namespace)
        ok, missing = covers(resource + non_resource, wanted)
        if ok:
            return
        lines = sorted({compact_string(r) for r in _compact(missing)})
        raise StoreError(
            403,
            "Forbidden",
            f'{plural}.{RBAC_GROUP} "{name}" is forbidden: user "{user.name}" '
            f"(groups={_go_quoted(user_groups(user))}) is attempting to grant RBAC permissions not "
            "currently held:\n" + "\n".join(lines),
            details={"name": name, "group": RBAC_GROUP, "kind": plural},
        )


def _go_role_ref(ref: Any) -> str:
    ref = ref if isinstance(ref, dict) else {}
    group, kind, name = (str(ref.get(k, "")) for k in ("apiGroup", "kind", "name"))
    return f"rbac.RoleRef{{APIGroup:{group}, Kind:{kind}, Name:{name}}}"


def _discovery_url(path: str) -> bool:
    return any(
        path.startswith(pattern[:-1]) if pattern.endswith("*") else path == pattern
        for pattern in DISCOVERY_PATHS
    )


def bootstrap_objects() -> list[tuple[str, dict[str, Any]]]:
    """``(store key, object)`` of the bootstrap RBAC the plane creates when missing: upstream's
    ``cluster-admin`` ClusterRole and its ClusterRoleBinding to ``system:masters``
    (``plugin/pkg/auth/authorizer/rbac/bootstrappolicy``), so users can bind ``cluster-admin``.

    Example:
        >>> [(k.split(".")[0], o["metadata"]["name"]) for k, o in bootstrap_objects()]
        [('clusterroles', 'cluster-admin'), ('clusterrolebindings', 'cluster-admin')]
    """
    labels = {"kubernetes.io/bootstrapping": "rbac-defaults"}
    annotations = {"rbac.authorization.kubernetes.io/autoupdate": "true"}
    role = {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "cluster-admin", "labels": dict(labels), "annotations": dict(annotations)},
        "rules": [r.to_dict() for r in _SUPERUSER_RULES],
    }
    binding = {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "cluster-admin", "labels": dict(labels), "annotations": dict(annotations)},
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"apiGroup": RBAC_GROUP, "kind": "Group", "name": "system:masters"}],
    }
    return [(_CLUSTER_ROLES, deep_copy(role)), (_CLUSTER_BINDINGS, deep_copy(binding))]
