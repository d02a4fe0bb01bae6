"""The resource types served without a CRD directory: core v1, rbac, networking, ray.io, kueue, keda.

Custom ones come without schemas; a CRD directory (:mod:`~rayqueue_local.registry.crds`) replaces them.

Example:
    >>> {t.key: t.versions for t in builtin_types()}["clusterqueues.kueue.x-k8s.io"]
    ('v1beta2', 'v1beta1')
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rayqueue_local.registry.resourcetypes import KUEUE, ResourceType

__all__ = ["REVIEW_GROUPS", "builtin_types", "review_types"]

#: The API groups of the create-only review resources (answered by the API server, never stored).
REVIEW_GROUPS = frozenset({"authentication.k8s.io", "authorization.k8s.io"})


def _core(
    plural: str, kind: str, *, namespaced: bool = True, short: tuple[str, ...] = (), **kw: Any
) -> ResourceType:
    return ResourceType(
        group="",
        versions=("v1",),
        storage_version="v1",
        plural=plural,
        singular=kind.lower(),
        kind=kind,
        namespaced=namespaced,
        short_names=short,
        list_kind=kind + "List",
        **kw,
    )


def _custom(
    group: str,
    plural: str,
    kind: str,
    *,
    versions: tuple[str, ...],
    storage: str,
    namespaced: bool = True,
    short: tuple[str, ...] = (),
    status: bool = True,
    categories: tuple[str, ...] = (),
) -> ResourceType:
    return ResourceType(
        group=group,
        versions=versions,
        storage_version=storage,
        plural=plural,
        singular=kind.lower(),
        kind=kind,
        namespaced=namespaced,
        short_names=short,
        subresources=frozenset({"status"}) if status else frozenset(),
        categories=categories,
        list_kind=kind + "List",
    )


_KUEUE_V = ("v1beta2", "v1beta1")
_KUEUE_DEPRECATED = {"v1beta1": "This version is deprecated. Use v1beta2 instead."}


def builtin_types() -> list[ResourceType]:
    """The types served without a CRD directory (custom ones without schemas).

    Example:
        >>> "workloads.kueue.x-k8s.io" in {t.key for t in builtin_types()}
        True
    """
    status = frozenset({"status"})
    types = [
        _core(
            "namespaces",
            "Namespace",
            namespaced=False,
            short=("ns",),
            subresources=status,
            has_generation=False,
        ),
        _core("secrets", "Secret", has_generation=False),
        _core("configmaps", "ConfigMap", short=("cm",), has_generation=False),
        _core(
            "services",
            "Service",
            short=("svc",),
            subresources=status,
            has_generation=False,
            categories=("all",),
        ),
        _core("pods", "Pod", short=("po",), subresources=status, categories=("all",)),
        _core("serviceaccounts", "ServiceAccount", short=("sa",), has_generation=False),
        _core("events", "Event", short=("ev",), has_generation=False),
        dataclasses.replace(
            _custom(
                "rbac.authorization.k8s.io", "roles", "Role", versions=("v1",), storage="v1", status=False
            ),
            has_generation=False,
        ),
        dataclasses.replace(
            _custom(
                "rbac.authorization.k8s.io",
                "rolebindings",
                "RoleBinding",
                versions=("v1",),
                storage="v1",
                status=False,
            ),
            has_generation=False,
        ),
        dataclasses.replace(
            _custom(
                "networking.k8s.io", "ingresses", "Ingress", versions=("v1",), storage="v1", short=("ing",)
            ),
            has_generation=True,
        ),
        _custom("ray.io", "rayclusters", "RayCluster", versions=("v1",), storage="v1", categories=("all",)),
        _custom("ray.io", "rayjobs", "RayJob", versions=("v1",), storage="v1", categories=("all",)),
        _custom(
            KUEUE,
            "workloads",
            "Workload",
            versions=_KUEUE_V,
            storage="v1beta2",
            short=("kwl", "kueueworkload", "kueueworkloads"),
        ),
        _custom(
            KUEUE,
            "clusterqueues",
            "ClusterQueue",
            versions=_KUEUE_V,
            storage="v1beta2",
            namespaced=False,
            short=("cq",),
        ),
        _custom(
            KUEUE,
            "localqueues",
            "LocalQueue",
            versions=_KUEUE_V,
            storage="v1beta2",
            short=("queue", "queues", "lq"),
        ),
        _custom(
            KUEUE,
            "resourceflavors",
            "ResourceFlavor",
            versions=_KUEUE_V,
            storage="v1beta2",
            namespaced=False,
            short=("flavor", "flavors", "rf"),
            status=False,
        ),
        _custom(
            KUEUE,
            "workloadpriorityclasses",
            "WorkloadPriorityClass",
            versions=_KUEUE_V,
            storage="v1beta2",
            namespaced=False,
            short=("wpc",),
            status=False,
        ),
        _custom(
            KUEUE, "cohorts", "Cohort", versions=_KUEUE_V, storage="v1beta2", namespaced=False, short=("co",)
        ),
        _custom(
            KUEUE,
            "admissionchecks",
            "AdmissionCheck",
            versions=_KUEUE_V,
            storage="v1beta2",
            namespaced=False,
            short=("ac",),
        ),
        _custom(
            "keda.sh",
            "scaledobjects",
            "ScaledObject",
            versions=("v1alpha1",),
            storage="v1alpha1",
            short=("so",),
        ),
        _custom(
            "keda.sh",
            "triggerauthentications",
            "TriggerAuthentication",
            versions=("v1alpha1",),
            storage="v1alpha1",
            short=("ta", "triggerauth"),
        ),
        _custom(
            "keda.sh",
            "clustertriggerauthentications",
            "ClusterTriggerAuthentication",
            versions=("v1alpha1",),
            storage="v1alpha1",
            namespaced=False,
            short=("cta", "clustertriggerauth"),
        ),
    ]
    types += review_types()
    return [
        dataclasses.replace(t, deprecated=dict(_KUEUE_DEPRECATED)) if t.group == KUEUE else t for t in types
    ]


def review_types() -> list[ResourceType]:
    """The review resources of ``authentication.k8s.io/v1`` and ``authorization.k8s.io/v1``.

    They are create-only and have no storage: a ``POST`` is answered with the reviewed object and its
    ``status`` filled in (see :mod:`rayqueue_local.apiserver.reviews`). Discovery lists them as upstream
    does, with the single verb ``create`` (``pkg/registry/authentication`` and
    ``pkg/registry/authorization`` of kubernetes/kubernetes).

    Example:
        >>> sorted(t.plural for t in review_types() if t.group == "authentication.k8s.io")
        ['selfsubjectreviews', 'tokenreviews']
        >>> {t.verbs for t in review_types()}
        {('create',)}
    """
    specs = [
        ("authentication.k8s.io", "tokenreviews", "TokenReview", False),
        ("authentication.k8s.io", "selfsubjectreviews", "SelfSubjectReview", False),
        ("authorization.k8s.io", "localsubjectaccessreviews", "LocalSubjectAccessReview", True),
        ("authorization.k8s.io", "selfsubjectaccessreviews", "SelfSubjectAccessReview", False),
        ("authorization.k8s.io", "selfsubjectrulesreviews", "SelfSubjectRulesReview", False),
        ("authorization.k8s.io", "subjectaccessreviews", "SubjectAccessReview", False),
    ]
    return [
        dataclasses.replace(
            _custom(group, plural, kind, versions=("v1",), storage="v1", namespaced=ns, status=False),
            has_generation=False,
            verbs=("create",),
        )
        for group, plural, kind, ns in specs
    ]
