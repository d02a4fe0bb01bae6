"""Create, read, patch and delete any of the plain Kubernetes objects the SDK makes besides Ray's and
Kueue's: ServiceAccounts, Secrets, ConfigMaps, Roles, RoleBindings, Deployments and KEDA's objects.

The REST path comes from the manifest's ``apiVersion`` and ``kind`` through :data:`PLURALS` (the SDK's
kinds only: no discovery round trip). Every call goes through :func:`rayqueue_sdk.kube.rest.send_path`:
bounded retries, typed errors naming the verb and the resource (``roles.rbac.authorization.k8s.io``).

In the examples below ``api`` is an ``ApiClient`` of a running cluster (the doctests give them a local
control plane's).

Example:
    >>> object_path({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ds"}})
    '/api/v1/namespaces/ds/configmaps/c'
    >>> resource_of("rbac.authorization.k8s.io/v1", "Role")
    'roles.rbac.authorization.k8s.io'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rayqueue_sdk.errors import NotFoundError
from rayqueue_sdk.kube.rest import send_path

if TYPE_CHECKING:  # pragma: no cover
    from kubernetes.client import ApiClient

__all__ = [
    "PLURALS",
    "create_manifest",
    "delete_manifest",
    "get_manifest",
    "object_path",
    "patch_manifest",
    "resource_of",
]

#: Kind -> plural of the kinds the SDK creates through this module.
PLURALS: dict[str, str] = {
    "ServiceAccount": "serviceaccounts",
    "Secret": "secrets",
    "ConfigMap": "configmaps",
    "Role": "roles",
    "RoleBinding": "rolebindings",
    "Deployment": "deployments",
    "TriggerAuthentication": "triggerauthentications",
    "ScaledObject": "scaledobjects",
    "RayCluster": "rayclusters",
}


def _group(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def resource_of(api_version: str, kind: str) -> str:
    """``<plural>.<group>`` (just the plural for the core group), as RBAC and errors name it.

    Example:
        >>> resource_of("v1", "Secret"), resource_of("keda.sh/v1alpha1", "ScaledObject")
        ('secrets', 'scaledobjects.keda.sh')
    """
    group, _ = _group(api_version)
    plural = PLURALS[kind]
    return f"{plural}.{group}" if group else plural


def object_path(obj: Mapping[str, Any], *, collection: bool = False) -> str:
    """The REST path of ``obj`` (or of its collection).

    Example:
        >>> object_path({"apiVersion": "apps/v1", "kind": "Deployment",
        ...              "metadata": {"name": "d", "namespace": "ds"}}, collection=True)
        '/apis/apps/v1/namespaces/ds/deployments'
    """
    group, version = _group(str(obj["apiVersion"]))
    meta = obj.get("metadata") or {}
    base = f"/apis/{group}/{version}" if group else f"/api/{version}"
    path = f"{base}/namespaces/{meta['namespace']}/{PLURALS[str(obj['kind'])]}"
    return path if collection else f"{path}/{meta['name']}"


def _ctx(obj: Mapping[str, Any], verb: str) -> dict[str, Any]:
    meta = obj.get("metadata") or {}
    return {
        "verb": verb,
        "resource": resource_of(str(obj["apiVersion"]), str(obj["kind"])),
        "namespace": meta.get("namespace"),
        "name": meta.get("name"),
    }


def create_manifest(api: ApiClient, obj: Mapping[str, Any]) -> dict[str, Any]:
    """POST ``obj``; an existing one is :class:`~rayqueue_sdk.errors.AlreadyExistsError`.

    Example:
        >>> sa = {"apiVersion": "v1", "kind": "ServiceAccount",
        ...       "metadata": {"name": "doc-sa", "namespace": "default"}}
        >>> create_manifest(api, sa)["metadata"]["name"]
        'doc-sa'
        >>> create_manifest(api, sa)
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.AlreadyExistsError: ...
    """
    return send_path(
        api, "POST", object_path(obj, collection=True), dict(obj), idempotent=False, **_ctx(obj, "create")
    )


def get_manifest(api: ApiClient, obj: Mapping[str, Any]) -> dict[str, Any]:
    """GET the stored object named like ``obj`` (only ``apiVersion``, ``kind`` and ``metadata`` matter).

    Example:
        >>> cm = {"apiVersion": "v1", "kind": "ConfigMap",
        ...       "metadata": {"name": "doc-get", "namespace": "default"}, "data": {"a": "1"}}
        >>> get_manifest(api, create_manifest(api, cm))["data"]
        {'a': '1'}
    """
    return send_path(api, "GET", object_path(obj), **_ctx(obj, "get"))


def patch_manifest(api: ApiClient, obj: Mapping[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """Merge-patch the object named like ``obj``.

    Example:
        >>> cm = {"apiVersion": "v1", "kind": "ConfigMap",
        ...       "metadata": {"name": "doc-patch", "namespace": "default"}}
        >>> _ = create_manifest(api, cm)
        >>> patch_manifest(api, cm, {"metadata": {"annotations": {"a": "b"}}})["metadata"]["annotations"]
        {'a': 'b'}
    """
    return send_path(
        api,
        "PATCH",
        object_path(obj),
        patch,
        content_type="application/merge-patch+json",
        **_ctx(obj, "patch"),
    )


def delete_manifest(api: ApiClient, obj: Mapping[str, Any]) -> bool:
    """DELETE the object named like ``obj`` (background propagation); ``False`` if it was already gone.

    Example:
        >>> cm = {"apiVersion": "v1", "kind": "ConfigMap",
        ...       "metadata": {"name": "doc-delete", "namespace": "default"}}
        >>> _ = create_manifest(api, cm)
        >>> delete_manifest(api, cm), delete_manifest(api, cm)
        (True, False)
    """
    try:
        send_path(
            api,
            "DELETE",
            object_path(obj),
            {"propagationPolicy": "Background"},
            **_ctx(obj, "delete"),
        )
    except NotFoundError:
        return False
    return True
