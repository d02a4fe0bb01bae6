"""OpenAPI v3 schemas of every built-in kind this server serves, by upstream name.

:func:`builtin_schemas` gathers the definitions generated from k8s.io/api and the CRD's package
(:mod:`~rayqueue_local.registry.coreschemas`: core, apps, batch, rbac, networking, ``autoscaling/v1``
Scale and ``apiextensions.k8s.io/v1``, whose ``openAPIV3Schema`` is left undescribed, as a preserved
object) and the hand-written apimachinery ones (:mod:`~rayqueue_local.registry.metaschemas`:
``meta/v1`` and ``Quantity``).

Example:
    >>> schemas = builtin_schemas()
    >>> schemas["io.k8s.api.apps.v1.Deployment"]["x-kubernetes-group-version-kind"]
    [{'group': 'apps', 'kind': 'Deployment', 'version': 'v1'}]
    >>> schemas["io.k8s.api.core.v1.ConfigMap"]["properties"]["metadata"]["allOf"]
    [{'$ref': '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'}]
"""

from __future__ import annotations

import functools

from rayqueue_local.registry import openapischema as s
from rayqueue_local.registry.coreschemas import generated_schemas
from rayqueue_local.registry.metaschemas import meta_schemas

__all__ = ["builtin_schemas"]


@functools.cache
def _all() -> dict[str, s.Schema]:
    return {**meta_schemas(), **generated_schemas()}


def builtin_schemas() -> dict[str, s.Schema]:
    """Every built-in definition by upstream name (shared: treat as read-only).

    Example:
        >>> "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in builtin_schemas()
        True
    """
    return _all()
