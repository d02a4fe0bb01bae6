"""The resource types served without a CRD directory: core v1, rbac, networking, apps, batch,
apiextensions, ray.io, kueue, keda.

Custom ones come without schemas; a CRD directory (:mod:`~rayqueue_local.registry.crds`) replaces them.

``apps/v1`` Deployments and ``batch/v1`` Jobs are stored and served (Deployments with ``status`` and
``scale``, Jobs with ``status``), but no Deployment or Job controller runs: no ReplicaSet or Pod is
made for them, and their status is whatever a client writes. Nodes are cluster-scoped with a
``status`` subresource (the control plane publishes one for this machine).

Example:
    >>> {t.key: t.versions for t in builtin_types()}["clusterqueues.kueue.x-k8s.io"]
    ('v1beta2', 'v1beta1')
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rayqueue_local.registry.resourcetypes import KUEUE, ResourceType, ScaleHooks

__all__ = ["DEPLOYMENT_SCALE", "REVIEW_GROUPS", "builtin_types", "review_types"]

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
    versions: tuple[str, ...] = ("v1",),
    namespaced: bool = True,
    short: tuple[str, ...] = (),
    status: bool = True,
    categories: tuple[str, ...] = (),
) -> ResourceType:
    """A type of a named API group, stored as the first of its ``versions``."""
    return ResourceType(
        group=group,
        versions=versions,
        storage_version=versions[0],
        plural=plural,
        singular=kind.lower(),
        kind=kind,
        namespaced=namespaced,
        short_names=short,
        subresources=frozenset({"status"}) if status else frozenset(),
        categories=categories,
        list_kind=kind + "List",
    )


def _kueue(plural: str, kind: str, **kw: Any) -> ResourceType:
    """A ``kueue.x-k8s.io`` type: served as ``v1beta2`` and the deprecated ``v1beta1``, stored as v1beta2."""
    kueue = _custom(KUEUE, plural, kind, versions=_KUEUE_V, **kw)
    return dataclasses.replace(kueue, deprecated=dict(_KUEUE_DEPRECATED))


def _rbac(plural: str, kind: str, *, namespaced: bool = True) -> ResourceType:
    """An ``rbac.authorization.k8s.io/v1`` type: no status subresource, no ``metadata.generation``."""
    rbac = _custom("rbac.authorization.k8s.io", plural, kind, namespaced=namespaced, status=False)
    return dataclasses.replace(rbac, has_generation=False)


def _deployment_replicas(obj: dict[str, Any]) -> int:
    replicas = (obj.get("spec") or {}).get("replicas")
    return 1 if replicas is None else int(replicas)  # upstream's default


def _set_deployment_replicas(obj: dict[str, Any], replicas: int) -> dict[str, Any]:
    obj.setdefault("spec", {})["replicas"] = replicas
    return obj


def _selector_string(obj: dict[str, Any]) -> str:
    """``spec.selector`` as the string ``Scale.status.selector`` carries (``a=b,c in (d)``)."""
    selector = (obj.get("spec") or {}).get("selector") or {}
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for req in selector.get("matchExpressions") or []:
        key, op, values = req.get("key", ""), req.get("operator", ""), req.get("values") or []
        if op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
        else:
            parts.append(f"{key} {'notin' if op == 'NotIn' else 'in'} ({','.join(sorted(values))})")
    return ",".join(parts)


#: ``/scale`` of ``apps/v1`` Deployments: ``spec.replicas`` (default 1), ``status.replicas``, the selector.
DEPLOYMENT_SCALE = ScaleHooks(
    get_replicas=_deployment_replicas,
    set_replicas=_set_deployment_replicas,
    get_status_replicas=lambda o: int((o.get("status") or {}).get("replicas") or 0),
    get_selector=_selector_string,
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
        _core(
            "serviceaccounts",
            "ServiceAccount",
            short=("sa",),
            has_generation=False,
            subresources=frozenset({"token"}),
        ),
        _core("events", "Event", short=("ev",), has_generation=False),
        _core("podtemplates", "PodTemplate", has_generation=False),
        _core("nodes", "Node", namespaced=False, short=("no",), subresources=status, has_generation=False),
        dataclasses.replace(
            _custom("apps", "deployments", "Deployment", short=("deploy",), categories=("all",)),
            subresources=frozenset({"status", "scale"}),
            scale=DEPLOYMENT_SCALE,
        ),
        _custom("batch", "jobs", "Job", categories=("all",)),
        _custom(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            "CustomResourceDefinition",
            namespaced=False,
            short=("crd", "crds"),
        ),
        _rbac("roles", "Role"),
        _rbac("rolebindings", "RoleBinding"),
        _rbac("clusterroles", "ClusterRole", namespaced=False),
        _rbac("clusterrolebindings", "ClusterRoleBinding", namespaced=False),
        dataclasses.replace(
            _custom("networking.k8s.io", "ingresses", "Ingress", short=("ing",)),
            has_generation=True,
        ),
        _custom("ray.io", "rayclusters", "RayCluster", categories=("all",)),
        _custom("ray.io", "rayjobs", "RayJob", categories=("all",)),
        _kueue("workloads", "Workload", short=("kwl", "kueueworkload", "kueueworkloads")),
        _kueue("clusterqueues", "ClusterQueue", namespaced=False, short=("cq",)),
        _kueue("localqueues", "LocalQueue", short=("queue", "queues", "lq")),
        _kueue(
            "resourceflavors",
            "ResourceFlavor",
            namespaced=False,
            short=("flavor", "flavors", "rf"),
            status=False,
        ),
        _kueue(
            "workloadpriorityclasses", "WorkloadPriorityClass", namespaced=False, short=("wpc",), status=False
        ),
        _kueue("cohorts", "Cohort", namespaced=False, short=("co",)),
        _kueue("topologies", "Topology", namespaced=False, short=("topo",), status=False),
        _kueue("admissionchecks", "AdmissionCheck", namespaced=False, short=("ac",)),
        _kueue("provisioningrequestconfigs", "ProvisioningRequestConfig", namespaced=False, status=False),
        _custom(
            "autoscaling.x-k8s.io", "provisioningrequests", "ProvisioningRequest", versions=("v1", "v1beta1")
        ),
        _custom("keda.sh", "scaledobjects", "ScaledObject", versions=("v1alpha1",), short=("so",)),
        _custom(
            "keda.sh",
            "triggerauthentications",
            "TriggerAuthentication",
            versions=("v1alpha1",),
            short=("ta", "triggerauth"),
        ),
        _custom(
            "keda.sh",
            "clustertriggerauthentications",
            "ClusterTriggerAuthentication",
            versions=("v1alpha1",),
            namespaced=False,
            short=("cta", "clustertriggerauth"),
        ),
    ]
    return types + review_types()


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
            _custom(group, plural, kind, namespaced=ns, status=False),
            has_generation=False,
            verbs=("create",),
        )
        for group, plural, kind, ns in specs
    ]
