"""Hand-written OpenAPI v3 schemas of every built-in kind this server serves, by upstream name.

The core kinds are in :mod:`~rayqueue_local.registry.coreschemas`, ``meta/v1`` in
:mod:`~rayqueue_local.registry.metaschemas`; this module adds rbac, networking, ``apps/v1``
Deployment, ``batch/v1`` Job and ``apiextensions.k8s.io/v1`` CustomResourceDefinition (whose
``openAPIV3Schema`` is left undescribed, as a preserved object), and :func:`builtin_schemas`
gathers them all.

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
from rayqueue_local.registry.coreschemas import core_schemas
from rayqueue_local.registry.metaschemas import meta_schemas

__all__ = ["builtin_schemas"]


def _group_schemas() -> dict[str, s.Schema]:
    r, a, b = "io.k8s.api.rbac.v1", "io.k8s.api.apps.v1", "io.k8s.api.batch.v1"
    x = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1"
    template = s.field(
        "io.k8s.api.core.v1.PodTemplateSpec", "Template describes the pods that will be created.", default={}
    )
    selector = s.field(f"{s.META}.LabelSelector", "A label query over pods that should match the pod count.")
    conditions = {
        "type": "array",
        "items": s.free("Condition"),
        "description": "Represents the latest available observations of the object's current state.",
        "x-kubernetes-patch-merge-key": "type",
        "x-kubernetes-patch-strategy": "merge",
    }
    return {
        f"{r}.PolicyRule": s.obj(
            "PolicyRule holds information that describes a policy rule.",
            {
                "apiGroups": s.strlist("APIGroups is the name of the APIGroup that contains the resources."),
                "nonResourceURLs": s.strlist(
                    "NonResourceURLs is a set of partial urls that a user should have access to."
                ),
                "resourceNames": s.strlist(
                    "ResourceNames is an optional white list of names that the rule applies to."
                ),
                "resources": s.strlist(
                    "Resources is a list of resources this rule applies to. '*' represents all resources."
                ),
                "verbs": s.strlist(
                    "Verbs is a list of Verbs that apply to ALL the ResourceKinds contained in this rule."
                ),
            },
            ("verbs",),
        ),
        f"{r}.Role": s.kind_schema(
            "rbac.authorization.k8s.io",
            "v1",
            "Role",
            "Role is a namespaced, logical grouping of PolicyRules that can be referenced as a unit by a "
            "RoleBinding.",
            {
                "rules": s.list_of(
                    f"{r}.PolicyRule", "Rules holds all the PolicyRules for this Role", atomic=True
                )
            },
        ),
        f"{r}.Subject": s.obj(
            "Subject contains a reference to the object or user identities a role binding applies to.",
            {
                "apiGroup": s.string("APIGroup holds the API group of the referenced subject."),
                "kind": s.string('Kind of object being referenced: "User", "Group", and "ServiceAccount".'),
                "name": s.string("Name of the object being referenced."),
                "namespace": s.string("Namespace of the referenced object."),
            },
            ("kind", "name"),
        ),
        f"{r}.RoleRef": s.obj(
            "RoleRef contains information that points to the role being used",
            {
                "apiGroup": s.string("APIGroup is the group for the resource being referenced"),
                "kind": s.string("Kind is the type of resource being referenced"),
                "name": s.string("Name is the name of resource being referenced"),
            },
            ("apiGroup", "kind", "name"),
        ),
        f"{r}.RoleBinding": s.kind_schema(
            "rbac.authorization.k8s.io",
            "v1",
            "RoleBinding",
            "RoleBinding references a role, but does not contain it.",
            {
                "roleRef": s.field(
                    f"{r}.RoleRef",
                    "RoleRef can reference a Role in the current namespace or a ClusterRole in the global "
                    "namespace.",
                    default={},
                ),
                "subjects": s.list_of(
                    f"{r}.Subject",
                    "Subjects holds references to the objects the role applies to.",
                    atomic=True,
                ),
            },
            ("roleRef",),
        ),
        "io.k8s.api.networking.v1.Ingress": s.kind_schema(
            "networking.k8s.io",
            "v1",
            "Ingress",
            "Ingress is a collection of rules that allow inbound connections to reach the endpoints "
            "defined by a backend.",
            {
                "spec": s.free("spec is the desired state of the Ingress."),
                "status": s.free("status is the current state of the Ingress."),
            },
        ),
        f"{a}.Deployment": s.kind_schema(
            "apps",
            "v1",
            "Deployment",
            "Deployment enables declarative updates for Pods and ReplicaSets.",
            s.spec_and_status(
                f"{a}.Deployment",
                "Specification of the desired behavior of the Deployment.",
                "Most recently observed status of the Deployment.",
            ),
        ),
        f"{a}.DeploymentSpec": s.obj(
            "DeploymentSpec is the specification of the desired behavior of the Deployment.",
            {
                "minReadySeconds": s.integer(
                    "Minimum number of seconds for which a newly created pod should be ready without any "
                    "of its container crashing."
                ),
                "paused": s.boolean("Indicates that the deployment is paused."),
                "progressDeadlineSeconds": s.integer(
                    "The maximum time in seconds for a deployment to make progress before it is considered "
                    "to be failed."
                ),
                "replicas": s.integer("Number of desired pods. Defaults to 1."),
                "revisionHistoryLimit": s.integer(
                    "The number of old ReplicaSets to retain to allow rollback."
                ),
                "selector": s.field(
                    f"{s.META}.LabelSelector",
                    "Label selector for pods. It must match the pod template's labels.",
                ),
                "strategy": s.free("The deployment strategy to use to replace existing pods with new ones."),
                "template": template,
            },
            ("selector", "template"),
        ),
        f"{a}.DeploymentStatus": s.obj(
            "DeploymentStatus is the most recently observed status of the Deployment.",
            {
                "availableReplicas": s.integer(
                    "Total number of available non-terminating pods targeted by this deployment."
                ),
                "conditions": conditions,
                "observedGeneration": s.integer(
                    "The generation observed by the deployment controller.", "int64"
                ),
                "readyReplicas": s.integer(
                    "Total number of non-terminating pods targeted by this Deployment with a Ready Condition."
                ),
                "replicas": s.integer("Total number of non-terminating pods targeted by this deployment."),
                "unavailableReplicas": s.integer(
                    "Total number of unavailable pods targeted by this deployment."
                ),
                "updatedReplicas": s.integer(
                    "Total number of non-terminating pods targeted by this deployment that have the "
                    "desired template spec."
                ),
            },
        ),
        f"{b}.Job": s.kind_schema(
            "batch",
            "v1",
            "Job",
            "Job represents the configuration of a single job.",
            s.spec_and_status(
                f"{b}.Job", "Specification of the desired behavior of a job.", "Current status of a job."
            ),
        ),
        f"{b}.JobSpec": s.obj(
            "JobSpec describes how the job execution will look like.",
            {
                "activeDeadlineSeconds": s.integer(
                    "Specifies the duration in seconds relative to the startTime that the job may be "
                    "continuously active.",
                    "int64",
                ),
                "backoffLimit": s.integer(
                    "Specifies the number of retries before marking this job failed. Defaults to 6"
                ),
                "completionMode": s.string(
                    "completionMode specifies how Pod completions are tracked: NonIndexed or Indexed."
                ),
                "completions": s.integer(
                    "Specifies the desired number of successfully finished pods the job should be run with."
                ),
                "manualSelector": s.boolean(
                    "manualSelector controls generation of pod labels and pod selectors."
                ),
                "parallelism": s.integer(
                    "Specifies the maximum desired number of pods the job should run at any given time."
                ),
                "selector": selector,
                "suspend": s.boolean(
                    "suspend specifies whether the Job controller should create Pods or not."
                ),
                "template": template,
                "ttlSecondsAfterFinished": s.integer(
                    "ttlSecondsAfterFinished limits the lifetime of a Job that has finished execution."
                ),
            },
            ("template",),
        ),
        f"{b}.JobStatus": s.obj(
            "JobStatus represents the current state of a Job.",
            {
                "active": s.integer("The number of pending and running pods which are not terminating."),
                "completionTime": s.field(s.TIME, "Represents time when the job was completed."),
                "conditions": {**conditions, "x-kubernetes-list-type": "atomic"},
                "failed": s.integer("The number of pods which reached phase Failed."),
                "ready": s.integer(
                    "The number of active pods which have a Ready condition and are not terminating."
                ),
                "startTime": s.field(
                    s.TIME, "Represents time when the job controller started processing a job."
                ),
                "succeeded": s.integer("The number of pods which reached phase Succeeded."),
            },
        ),
        f"{x}.CustomResourceDefinition": s.kind_schema(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "CustomResourceDefinition represents a resource that should be exposed on the API server. Its "
            "name MUST be in the format <.spec.name>.<.spec.group>.",
            {
                "spec": s.field(
                    f"{x}.CustomResourceDefinitionSpec",
                    "spec describes how the user wants the resources to appear",
                    default={},
                ),
                "status": s.free("status indicates the actual state of the CustomResourceDefinition"),
            },
            ("spec",),
        ),
        f"{x}.CustomResourceDefinitionSpec": s.obj(
            "CustomResourceDefinitionSpec describes how a user wants their resource to appear",
            {
                "conversion": s.free("conversion defines conversion settings for the CRD."),
                "group": s.string("group is the API group of the defined custom resource."),
                "names": s.free("names specify the resource and kind names for the custom resource."),
                "preserveUnknownFields": s.boolean(
                    "preserveUnknownFields indicates that object fields which are not specified in the "
                    "OpenAPI schema should be preserved when persisting to storage."
                ),
                "scope": s.string(
                    "scope indicates whether the defined custom resource is cluster- or namespace-scoped: "
                    "Cluster or Namespaced."
                ),
                "versions": {
                    "type": "array",
                    "items": s.free("CustomResourceDefinitionVersion"),
                    "description": "versions is the list of all API versions of the defined custom resource.",
                    "x-kubernetes-list-type": "atomic",
                },
            },
            ("group", "names", "scope", "versions"),
        ),
    }


@functools.cache
def _all() -> dict[str, s.Schema]:
    return {**meta_schemas(), **core_schemas(), **_group_schemas()}


def builtin_schemas() -> dict[str, s.Schema]:
    """Every hand-written definition by upstream name (shared: treat as read-only).

    Example:
        >>> "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in builtin_schemas()
        True
    """
    return _all()
