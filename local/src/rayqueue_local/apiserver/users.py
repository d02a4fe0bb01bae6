"""The plane's own users API, for ``rayqueue local user add|list|remove``: admins only.

A real cluster's users come from its identity provider; this plane's come from its token table
(:class:`~rayqueue_local.apiserver.auth.Authenticator`). So that users can be added to a *running* plane
from a shell, the plane serves a small API of its own under a group no Kubernetes client knows, and only
an admin may call it (no rule grants it to anyone else, so the authoriser answers 403):

* ``GET    /apis/local.rayqueue.dev/v1/users``: ``{"items": [{"name", "namespaces", "admin"}]}``, no tokens;
* ``POST   /apis/local.rayqueue.dev/v1/users?name=N&namespace=NS[&namespace=...][&admin=true]``: 201 with
  the user and its ``token``, shown this once (as a TokenRequest shows its token); adding an existing
  name replaces its token;
* ``DELETE /apis/local.rayqueue.dev/v1/users/N``: 200, or 404 when there is no such user; the token
  stops working at once.

Example:
    >>> class Plane:
    ...     def __init__(self): self.known = {}
    ...     def users(self):
    ...         return [{"name": n, "namespaces": ns, "admin": False} for n, ns in self.known.items()]
    ...     def add_user(self, name, namespaces, *, admin=False):
    ...         self.known[name] = namespaces; return "t0ken"
    ...     def remove_user(self, name): return self.known.pop(name, None) is not None
    >>> routes = {(m, v): h for m, _, v, h in user_routes(Plane())}
    >>> routes[("POST", "create")](None, {"name": ["alice"], "namespace": ["team-a"]}, None)[0]
    201
    >>> routes[("GET", "list")](None, {}, None)[1]["items"]
    [{'name': 'alice', 'namespaces': ['team-a'], 'admin': False}]
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Protocol

from rayqueue_local.apimachinery.status import HTTPError

__all__ = ["USERS_GROUP", "USERS_PATH", "USERS_RESOURCE", "UserAdmin", "user_routes"]

#: The API group of the plane's own users API (no Kubernetes client knows it).
USERS_GROUP = "local.rayqueue.dev"
#: The collection's path; a user is ``USERS_PATH + "/<name>"``.
USERS_PATH = f"/apis/{USERS_GROUP}/v1/users"
#: The RBAC resource of the routes (``<plural>.<group>``), which no rule grants: admins only.
USERS_RESOURCE = f"users.{USERS_GROUP}"
_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\Z")
_NAME_TEXT = "a DNS label: lower-case letters, digits and '-', at most 63 characters"


class UserAdmin(Protocol):
    """What the routes need of the control plane."""

    def users(self) -> list[dict[str, Any]]:
        """Every user but the built-in admin (no tokens)."""
        ...

    def add_user(self, name: str, namespaces: list[str], *, admin: bool = False) -> str:
        """Add or replace a user; its token."""
        ...

    def remove_user(self, name: str) -> bool:
        """Forget a user; whether it existed."""
        ...


def _invalid(field: str, value: str, text: str) -> HTTPError:
    return HTTPError.make(
        422,
        "Invalid",
        f'User.{USERS_GROUP} "{value}" is invalid: {field}: Invalid value: "{value}": {text}',
        causes=[
            {"reason": "FieldValueInvalid", "field": field, "message": f'Invalid value: "{value}": {text}'}
        ],
    )


def user_routes(plane: UserAdmin) -> list[tuple[str, str, str, Callable[..., tuple[int, Any]]]]:
    """``(method, path regex, verb, handler)`` for the plane's users API (see the module docstring)."""

    def listing(match: Any, query: dict[str, list[str]], user: Any) -> tuple[int, Any]:
        return 200, {"apiVersion": f"{USERS_GROUP}/v1", "kind": "UserList", "items": plane.users()}

    def create(match: Any, query: dict[str, list[str]], user: Any) -> tuple[int, Any]:
        name = (query.get("name") or [""])[-1]
        if not _NAME.match(name) or name == "admin":
            raise _invalid("name", name, _NAME_TEXT + ", not 'admin'")
        namespaces = list(dict.fromkeys(query.get("namespace") or []))
        for ns in namespaces:
            if not _NAME.match(ns):
                raise _invalid("namespace", ns, _NAME_TEXT)
        admin = (query.get("admin") or ["false"])[-1].lower() in ("true", "1", "yes")
        if not namespaces and not admin:
            raise _invalid("namespace", "", "at least one namespace for a user who is not an admin")
        token = plane.add_user(name, namespaces, admin=admin)
        return 201, {
            "apiVersion": f"{USERS_GROUP}/v1",
            "kind": "User",
            "name": name,
            "namespaces": namespaces,
            "admin": admin,
            "token": token,
        }

    def delete(match: Any, query: dict[str, list[str]], user: Any) -> tuple[int, Any]:
        name = match.group("name")
        if not plane.remove_user(name):
            raise HTTPError.make(404, "NotFound", f'users.{USERS_GROUP} "{name}" not found')
        return 200, {"apiVersion": "v1", "kind": "Status", "status": "Success", "code": 200}

    return [
        ("GET", re.escape(USERS_PATH), "list", listing),
        ("POST", re.escape(USERS_PATH), "create", create),
        ("DELETE", re.escape(USERS_PATH) + r"/(?P<name>[^/]+)", "delete", delete),
    ]
