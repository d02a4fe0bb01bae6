"""OpenAPI v3 schemas of ``meta/v1`` (ObjectMeta, ListMeta, Status, ...) and ``Quantity``, by hand.

These are apimachinery's types, not in the k8s.io/api checkout the other built-in schemas are generated
from (:mod:`~rayqueue_local.registry.coreschemas`).

Example:
    >>> sorted(meta_schemas()["io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"]["properties"])
    ['continue', 'remainingItemCount', 'resourceVersion', 'selfLink']
"""

from __future__ import annotations

from rayqueue_local.registry import openapischema as s

__all__ = ["meta_schemas"]


def meta_schemas() -> dict[str, s.Schema]:
    """The ``meta/v1`` definitions (ObjectMeta, ListMeta, Status, ...) and ``Quantity``."""
    m = s.META
    return {
        f"{m}.Time": {
            "type": "string",
            "format": "date-time",
            "description": "Time is a wrapper around time.Time which supports correct marshaling to YAML "
            "and JSON. Wrappers are provided for many of the factory methods that the time package offers.",
        },
        f"{m}.MicroTime": {
            "type": "string",
            "format": "date-time",
            "description": "MicroTime is version of Time with microsecond level precision.",
        },
        f"{m}.FieldsV1": {
            "type": "object",
            "description": "FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format.",
        },
        f"{m}.ObjectMeta": s.obj(
            "ObjectMeta is metadata that all persisted resources must have, which includes all objects "
            "users must create.",
            {
                "annotations": s.strmap(
                    "Annotations is an unstructured key value map stored with a resource that may be set by "
                    "external tools to store and retrieve arbitrary metadata."
                ),
                "creationTimestamp": s.field(
                    s.TIME,
                    "CreationTimestamp is a timestamp representing the server time when this object "
                    "was created. Populated by the system. Read-only.",
                ),
                "deletionGracePeriodSeconds": s.integer(
                    "Number of seconds allowed for this object to gracefully terminate before it will be "
                    "removed from the system. Read-only.",
                    "int64",
                ),
                "deletionTimestamp": s.field(
                    s.TIME,
                    "DeletionTimestamp is RFC 3339 date and time at which this resource will be "
                    "deleted. Populated by the system when a graceful deletion is requested. Read-only.",
                ),
                "finalizers": s.strlist(
                    "Must be empty before the object is deleted from the registry.",
                    **{"x-kubernetes-list-type": "set", "x-kubernetes-patch-strategy": "merge"},
                ),
                "generateName": s.string(
                    "GenerateName is an optional prefix, used by the server, to generate a unique name ONLY "
                    "IF the Name field has not been provided."
                ),
                "generation": s.integer(
                    "A sequence number representing a specific generation of the desired state. Populated "
                    "by the system. Read-only.",
                    "int64",
                ),
                "labels": s.strmap(
                    "Map of string keys and values that can be used to organize and categorize (scope and "
                    "select) objects. May match selectors of replication controllers and services."
                ),
                "managedFields": s.list_of(
                    f"{m}.ManagedFieldsEntry",
                    "ManagedFields maps workflow-id and version to the set of fields that are managed by "
                    "that workflow.",
                    atomic=True,
                ),
                "name": s.string(
                    "Name must be unique within a namespace. Is required when creating resources, although "
                    "some resources may allow a client to request the generation of an appropriate name "
                    "automatically. Cannot be updated."
                ),
                "namespace": s.string(
                    "Namespace defines the space within which each name must be unique. An empty namespace "
                    'is equivalent to the "default" namespace, but "default" is the canonical '
                    "representation. Cannot be updated."
                ),
                "ownerReferences": s.list_of(
                    f"{m}.OwnerReference",
                    "List of objects depended by this object. If ALL objects in the list have been deleted, "
                    "this object will be garbage collected.",
                    merge_key="uid",
                ),
                "resourceVersion": s.string(
                    "An opaque value that represents the internal version of this object that can be used "
                    "by clients to determine when objects have changed. Read-only."
                ),
                "selfLink": s.string(
                    "Deprecated: selfLink is a legacy read-only field that is no longer populated."
                ),
                "uid": s.string(
                    "UID is the unique in time and space value for this object. Populated by the system. "
                    "Read-only."
                ),
            },
        ),
        f"{m}.ListMeta": s.obj(
            "ListMeta describes metadata that synthetic resources must have, including lists and various "
            "status objects.",
            {
                "continue": s.string(
                    "continue may be set if the user set a limit on the number of items returned."
                ),
                "remainingItemCount": s.integer(
                    "remainingItemCount is the number of subsequent items in the list which are not "
                    "included in this list response.",
                    "int64",
                ),
                "resourceVersion": s.string(
                    "String that identifies the server's internal version of this object that can be used "
                    "by clients to determine when objects have changed."
                ),
                "selfLink": s.string(
                    "Deprecated: selfLink is a legacy read-only field that is no longer populated."
                ),
            },
        ),
        f"{m}.OwnerReference": s.obj(
            "OwnerReference contains enough information to let you identify an owning object.",
            {
                "apiVersion": s.string("API version of the referent."),
                "blockOwnerDeletion": s.boolean(
                    'If true, AND if the owner has the "foregroundDeletion" finalizer, then the owner '
                    "cannot be deleted from the key-value store until this reference is removed."
                ),
                "controller": s.boolean("If true, this reference points to the managing controller."),
                "kind": s.string("Kind of the referent."),
                "name": s.string("Name of the referent."),
                "uid": s.string("UID of the referent."),
            },
            ("apiVersion", "kind", "name", "uid"),
        ),
        f"{m}.ManagedFieldsEntry": s.obj(
            "ManagedFieldsEntry is a workflow-id, a FieldSet and the group version of the resource that "
            "the fieldset applies to.",
            {
                "apiVersion": s.string(
                    "APIVersion defines the version of this resource that this field set applies to."
                ),
                "fieldsType": s.string(
                    'FieldsType is the discriminator for the different fields format. "FieldsV1".'
                ),
                "fieldsV1": s.field(f"{m}.FieldsV1", "FieldsV1 holds the first JSON version format."),
                "manager": s.string("Manager is an identifier of the workflow managing these fields."),
                "operation": s.string(
                    "Operation is the type of operation which lead to this ManagedFieldsEntry."
                ),
                "subresource": s.string(
                    "Subresource is the name of the subresource used to update that object."
                ),
                "time": s.field(s.TIME, "Time is the timestamp of when the ManagedFields entry was added."),
            },
        ),
        f"{m}.LabelSelector": s.obj(
            "A label selector is a label query over a set of resources.",
            {
                "matchExpressions": s.list_of(
                    f"{m}.LabelSelectorRequirement",
                    "matchExpressions is a list of label selector requirements. The requirements are ANDed.",
                    atomic=True,
                ),
                "matchLabels": s.strmap("matchLabels is a map of {key,value} pairs."),
            },
        ),
        f"{m}.LabelSelectorRequirement": s.obj(
            "A label selector requirement is a selector that contains values, a key, and an operator that "
            "relates the key and values.",
            {
                "key": s.string("key is the label key that the selector applies to."),
                "operator": s.string("operator represents a key's relationship to a set of values."),
                "values": s.strlist(
                    "values is an array of string values.", **{"x-kubernetes-list-type": "atomic"}
                ),
            },
            ("key", "operator"),
        ),
        f"{m}.Condition": s.obj(
            "Condition contains details for one aspect of the current state of this API Resource.",
            {
                "lastTransitionTime": s.field(s.TIME, "The last time the condition transitioned."),
                "message": s.string("A human readable message indicating details about the transition."),
                "observedGeneration": s.integer(
                    "The .metadata.generation the condition was set on.", "int64"
                ),
                "reason": s.string(
                    "A programmatic identifier indicating the reason for the last transition."
                ),
                "status": s.string("Status of the condition, one of True, False, Unknown."),
                "type": s.string("Type of condition in CamelCase or in foo.example.com/CamelCase."),
            },
            ("type", "status", "lastTransitionTime", "reason", "message"),
        ),
        f"{m}.Patch": {
            "type": "object",
            "description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH "
            "request body.",
        },
        f"{m}.DeleteOptions": s.obj(
            "DeleteOptions may be provided when deleting an API object.",
            {
                "apiVersion": s.string(s.API_VERSION_DESCRIPTION),
                "dryRun": s.strlist("When present, indicates that modifications should not be persisted."),
                "gracePeriodSeconds": s.integer(
                    "The duration in seconds before the object should be deleted.", "int64"
                ),
                "kind": s.string(s.KIND_DESCRIPTION),
                "preconditions": s.free("Must be fulfilled before a deletion is carried out."),
                "propagationPolicy": s.string(
                    "Whether and how garbage collection will be performed: 'Orphan', 'Background' or "
                    "'Foreground'."
                ),
            },
        ),
        f"{m}.Status": s.obj(
            "Status is a return value for calls that don't return other objects.",
            {
                "apiVersion": s.string(s.API_VERSION_DESCRIPTION),
                "code": s.integer("Suggested HTTP return code for this status, 0 if not set."),
                "details": s.field(f"{m}.StatusDetails", "Extended data associated with the reason."),
                "kind": s.string(s.KIND_DESCRIPTION),
                "message": s.string("A human-readable description of the status of this operation."),
                "metadata": s.field(f"{m}.ListMeta", s.LIST_META_DESCRIPTION, default={}),
                "reason": s.string(
                    "A machine-readable description of why this operation is in the Failure status."
                ),
                "status": s.string('Status of the operation. One of: "Success" or "Failure".'),
            },
        ),
        f"{m}.StatusDetails": s.obj(
            "StatusDetails is a set of additional properties that MAY be set by the server to provide "
            "additional information about a response.",
            {
                "causes": s.list_of(
                    f"{m}.StatusCause", "The Causes array includes more details.", atomic=True
                ),
                "group": s.string(
                    "The group attribute of the resource associated with the status StatusReason."
                ),
                "kind": s.string(
                    "The kind attribute of the resource associated with the status StatusReason."
                ),
                "name": s.string(
                    "The name attribute of the resource associated with the status StatusReason."
                ),
                "retryAfterSeconds": s.integer(
                    "If specified, the time in seconds before the operation should be retried."
                ),
                "uid": s.string("UID of the resource."),
            },
        ),
        f"{m}.StatusCause": s.obj(
            "StatusCause provides more information about an api.Status failure.",
            {
                "field": s.string(
                    "The field of the resource that has caused this error, as named by its JSON "
                    "serialization."
                ),
                "message": s.string("A human-readable description of the cause of the error."),
                "reason": s.string("A machine-readable description of the cause of the error."),
            },
        ),
        s.QUANTITY: {
            "description": "Quantity is a fixed-point representation of a number, e.g. 500m, 2Gi.",
            "oneOf": [{"type": "string"}, {"type": "number"}],
            "x-kubernetes-int-or-string": True,
        },
    }
