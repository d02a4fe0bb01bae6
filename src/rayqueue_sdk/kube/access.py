"""Ask the API server what the caller may do: ``SelfSubjectAccessReview`` (``kubectl auth can-i``).

A review is created and answered, never stored: ``POST
/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`` returns the object with ``status.allowed`` (and
``status.denied``/``reason`` where the authorizer gave one); every authenticated user may create one
(upstream's ``system:basic-user`` ClusterRole). Upstream: https://kubernetes.io/docs/reference/access-authn-
authz/authorization/#checking-api-access and ``pkg/registry/authorization/selfsubjectaccessreview`` in
kubernetes/kubernetes. The widgets use it to disable a button the user may not use, instead of guessing from
names or waiting for a 403.

Example:
    >>> a = Access("patch", "kueue.x-k8s.io", "workloads", "ds", allowed=False)
    >>> a.resource_key, str(a)
    ('workloads.kueue.x-k8s.io', "may not patch workloads.kueue.x-k8s.io in namespace 'ds'")
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rayqueue_sdk.kube.session import KubeSession

__all__ = ["Access", "can_i"]


@dataclass(frozen=True)
class Access:
    """The server's answer to "may I ``verb`` ``resource`` in ``namespace``?".

    Attributes:
        verb, group, resource, namespace: what was asked (``group`` ``""`` is the core group).
        allowed: ``status.allowed`` of the review.
        reason: the authorizer's ``status.reason``, when it gave one.

    Example:
        >>> str(Access("delete", "ray.io", "rayclusters", "ds", allowed=True))
        "may delete rayclusters.ray.io in namespace 'ds'"
    """

    verb: str
    group: str
    resource: str
    namespace: str | None
    allowed: bool
    reason: str | None = None

    @property
    def resource_key(self) -> str:
        """``resource.group`` as kubectl names it (``rayclusters.ray.io``; a core resource alone).

        Example:
            >>> Access("get", "", "pods", None, allowed=True).resource_key
            'pods'
        """
        return f"{self.resource}.{self.group}" if self.group else self.resource

    def __str__(self) -> str:
        where = f" in namespace {self.namespace!r}" if self.namespace else ""
        return f"{'may' if self.allowed else 'may not'} {self.verb} {self.resource_key}{where}"


def can_i(
    session: KubeSession, verb: str, resource: str, *, group: str = "", namespace: str | None = None
) -> Access:
    """Create a ``SelfSubjectAccessReview`` for ``verb`` on ``group``/``resource`` in ``namespace``
    (``None``: a cluster-wide question, not the session's namespace).

    A review has no side effect, so it is retried like a read.

    Raises:
        AuthenticationError, ForbiddenError, ApiError, ConnectionFailedError: the review itself failed.

    Example:
        >>> can_i(session, "patch", "workloads", group="kueue.x-k8s.io", namespace="default").allowed
        True
    """
    attributes: dict[str, Any] = {"verb": verb, "group": group, "resource": resource}
    if namespace:
        attributes["namespace"] = namespace
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": attributes},
    }
    review = json.loads(
        session.request(
            "POST",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            verb="create",
            resource="selfsubjectaccessreviews.authorization.k8s.io",
            body=body,
        )
        or b"{}"
    )
    status = review.get("status") or {}
    return Access(
        verb,
        group,
        resource,
        namespace,
        allowed=bool(status.get("allowed")),
        reason=status.get("reason") or None,
    )
