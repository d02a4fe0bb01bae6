"""The Go types of the built-in kinds, as one table: each message's fields (JSON name, type, flags).

:data:`MESSAGES` joins the tables generated from k8s.io/api
(:data:`~rayqueue_local.apimachinery.prototables.GENERATED`) with apimachinery's own messages
(:data:`APIMACHINERY`: ``meta/v1`` is not in k8s.io/api, so those few are written here). The protobuf codec
reads field numbers from it, and the registry's known fields (what ``fieldValidation`` calls unknown)
read :func:`json_fields` from it, so a field is named in one place.

Example:
    >>> json_fields("meta/v1.OwnerReference")
    ('apiVersion', 'kind', 'name', 'uid', 'controller', 'blockOwnerDeletion')
    >>> "restartPolicy" in json_fields("core/v1.Container")
    True
    >>> "httpGet" in json_fields("core/v1.Probe")    # ProbeHandler's fields, inlined by encoding/json
    True
"""

from __future__ import annotations

import functools

from rayqueue_local.apimachinery.prototables import GENERATED

__all__ = ["APIMACHINERY", "MESSAGES", "json_fields"]

# The apimachinery messages, from k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto and types.go
# (field numbers and JSON tags), in the format of prototables.GENERATED: field number -> (JSON name,
# type, flags: o = omitempty, p = pointer, i = inlined).
APIMACHINERY: dict[str, dict[int, tuple[str, str, str]]] = {
    "meta/v1.ObjectMeta": {
        1: ("name", "string", "o"),
        2: ("generateName", "string", "o"),
        3: ("namespace", "string", "o"),
        4: ("selfLink", "string", "o"),
        5: ("uid", "string", "o"),
        6: ("resourceVersion", "string", "o"),
        7: ("generation", "int", "o"),
        8: ("creationTimestamp", "meta/v1.Time", "o"),
        9: ("deletionTimestamp", "meta/v1.Time", "op"),
        10: ("deletionGracePeriodSeconds", "int", "op"),
        11: ("labels", "mapstring", "o"),
        12: ("annotations", "mapstring", "o"),
        13: ("ownerReferences", "[]meta/v1.OwnerReference", "o"),
        14: ("finalizers", "[]string", "o"),
        17: ("managedFields", "[]meta/v1.ManagedFieldsEntry", "o"),
    },
    "meta/v1.OwnerReference": {
        5: ("apiVersion", "string", ""),
        1: ("kind", "string", ""),
        3: ("name", "string", ""),
        4: ("uid", "string", ""),
        6: ("controller", "bool", "op"),
        7: ("blockOwnerDeletion", "bool", "op"),
    },
    "meta/v1.ManagedFieldsEntry": {
        1: ("manager", "string", "o"),
        2: ("operation", "string", "o"),
        3: ("apiVersion", "string", "o"),
        4: ("time", "meta/v1.Time", "op"),
        6: ("fieldsType", "string", "o"),
        7: ("fieldsV1", "meta/v1.FieldsV1", "op"),
        8: ("subresource", "string", "o"),
    },
    "meta/v1.LabelSelector": {
        1: ("matchLabels", "mapstring", "o"),
        2: ("matchExpressions", "[]meta/v1.LabelSelectorRequirement", "o"),
    },
    "meta/v1.LabelSelectorRequirement": {
        1: ("key", "string", ""),
        2: ("operator", "string", ""),
        3: ("values", "[]string", "o"),
    },
    "meta/v1.Condition": {
        1: ("type", "string", ""),
        2: ("status", "string", ""),
        3: ("observedGeneration", "int", "o"),
        4: ("lastTransitionTime", "meta/v1.Time", ""),
        5: ("reason", "string", ""),
        6: ("message", "string", ""),
    },
}
#: Every message the server knows: field number -> (JSON name, type, flags).
MESSAGES: dict[str, dict[int, tuple[str, str, str]]] = {**GENERATED, **APIMACHINERY}


@functools.cache
def json_fields(message: str) -> tuple[str, ...]:
    """The JSON names of ``message``'s fields, in the table's order, with the fields of an embedded
    struct (flag ``i``) in its place, as Go's encoding/json promotes them.

    Raises:
        KeyError: a message that is not in :data:`MESSAGES`.
    """
    names: list[str] = []
    for name, kind, flags in MESSAGES[message].values():
        names.extend(json_fields(kind) if "i" in flags else (name,))
    return tuple(names)
