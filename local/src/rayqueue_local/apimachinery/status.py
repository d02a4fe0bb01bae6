"""Kubernetes ``Status`` bodies, and the error that carries one through the HTTP layer.

Example:
    >>> status_body(404, "NotFound", 'rayclusters.ray.io "x" not found',
    ...             details={"name": "x", "group": "ray.io", "kind": "rayclusters"})["reason"]
    'NotFound'
    >>> HTTPError.not_found_resource().code
    404
"""

from __future__ import annotations

from typing import Any

from rayqueue_local.errors import LocalControlPlaneError

__all__ = ["HTTPError", "aggregate", "status_body", "success_status"]


def aggregate(messages: list[str]) -> str:
    """Several errors in one message, as apimachinery's aggregate error writes them: one alone, more in
    brackets.

    Example:
        >>> aggregate(["a: bad"]), aggregate(["a: bad", "b: worse"])
        ('a: bad', '[a: bad, b: worse]')
    """
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


def status_body(
    code: int,
    reason: str,
    message: str,
    *,
    details: dict[str, Any] | None = None,
    causes: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A ``v1 Status`` failure body as the API server writes it."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details is not None or causes:
        d = dict(details or {})
        if causes:
            d["causes"] = causes
        body["details"] = d
    return body


def success_status(details: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``v1 Status`` success body (returned e.g. by a delete of an object without finalizers)."""
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
    if details:
        body["details"] = details
    return body


class HTTPError(LocalControlPlaneError):
    """An error response: a status code and its ``Status`` body (plus optional extra headers).

    Example:
        >>> e = HTTPError.bad_request("bad")
        >>> (e.code, e.body["reason"])
        (400, 'BadRequest')
    """

    def __init__(self, code: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        super().__init__(body.get("message", ""))
        self.code = code
        self.body = body
        self.headers = headers or {}

    @classmethod
    def make(
        cls,
        code: int,
        reason: str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        causes: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> HTTPError:
        """Build from the fields of a ``Status``."""
        return cls(code, status_body(code, reason, message, details=details, causes=causes), headers)

    @classmethod
    def invalid(cls, kind: str, group: str, name: str, causes: list[dict[str, Any]]) -> HTTPError:
        """A 422 Invalid of ``Kind.group "name"``, its message the ``field: message`` of each cause.

        Example:
            >>> causes = [{"reason": "FieldValueRequired", "field": "spec.user", "message": "Required value"}]
            >>> e = HTTPError.invalid("SubjectAccessReview", "authorization.k8s.io", "", causes)
            >>> e.code, e.body["details"]["kind"]
            (422, 'SubjectAccessReview')
            >>> e.body["message"]
            'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Required value'
        """
        joined = aggregate([f"{c['field']}: {c['message']}" for c in causes])
        details = {"group": group, "kind": kind, **({"name": name} if name else {})}
        return cls.make(
            422, "Invalid", f'{kind}.{group} "{name}" is invalid: {joined}', details=details, causes=causes
        )

    @classmethod
    def not_found_resource(cls) -> HTTPError:
        """The 404 of an unknown path, resource or version (the API server's exact words)."""
        return cls.make(404, "NotFound", "the server could not find the requested resource", details={})

    @classmethod
    def bad_request(cls, message: str) -> HTTPError:
        """A 400 BadRequest."""
        return cls.make(400, "BadRequest", message)

    @classmethod
    def method_not_allowed(cls, method: str) -> HTTPError:
        """A 405 MethodNotAllowed."""
        return cls.make(
            405,
            "MethodNotAllowed",
            f"the server does not allow this method on the requested resource ({method})",
        )

    @classmethod
    def unauthorized(cls) -> HTTPError:
        """A 401 Unauthorized (the message the API server gives, with no hint about the token)."""
        return cls.make(401, "Unauthorized", "Unauthorized")
