"""Field tables of the Kubernetes protobuf messages decoded here, loaded from generated data.

The tables live beside this module in ``prototables.json``, written by ``local/tools/gen_protobuf_tables.py``
from k8s.io/api (https://github.com/kubernetes/api) and k8s.io/apiextensions-apiserver
(https://github.com/kubernetes/apiextensions-apiserver) at the commits the file records (``commit``,
``apiextensions_commit``): ``core/v1``, ``apps/v1``, ``batch/v1``, ``rbac/v1``, ``networking/v1``,
``scheduling/v1alpha3`` (reached from batch/v1's JobSpec) and ``apiextensions/v1``, each from its
``generated.proto`` (field numbers, repeated fields, maps, scalar and message types) joined with its
``types.go`` (the JSON name of each field, ``omitempty``, Go pointers, and embedded structs whose fields
encoding/json promotes into the parent). Only the messages reachable from the file's ``roots`` are kept
(a CRD's free-form ``JSONSchemaProps`` is left out). The protobuf codec decodes only the kinds it lists;
the others' tables (Event, Node, CustomResourceDefinition) give the registry their known fields. The same
run writes, for the same messages, what their OpenAPI schemas need (``registry/schematables.json``, see
:mod:`rayqueue_local.registry.coreschemas`).

:data:`GENERATED` maps ``"<group>/<version>.<Message>"`` to ``{field number: (JSON name, type,
flags)}``. The type is ``string``, ``int`` (int32/int64 varints), ``bool``, ``bytes`` or a message
name, prefixed with ``[]`` for a repeated field or ``map`` for a ``map<string, type>``. Flags: ``o`` the
JSON tag has ``omitempty``, ``p`` the Go field is a pointer, ``i`` an embedded struct whose fields are
inlined (its JSON name is empty). The apimachinery messages these refer to (``meta/v1.*``,
``intstr.IntOrString``, ``resource.Quantity``) are in
:mod:`rayqueue_local.apimachinery.protobuf`.

Example:
    >>> GENERATED["apps/v1.DeploymentSpec"][1]
    ('replicas', 'int', 'op')
"""

from __future__ import annotations

import json
from importlib import resources

__all__ = ["GENERATED"]


def _load() -> dict[str, dict[int, tuple[str, str, str]]]:
    """The ``messages`` of ``prototables.json``, with int field numbers and tuple rows."""
    text = resources.files(__package__ or __name__).joinpath("prototables.json").read_text(encoding="utf-8")
    messages: dict[str, dict[str, list[str]]] = json.loads(text)["messages"]
    return {
        name: {int(number): (row[0], row[1], row[2]) for number, row in fields.items()}
        for name, fields in messages.items()
    }


#: message -> {field number: (JSON name, type, flags)}
GENERATED: dict[str, dict[int, tuple[str, str, str]]] = _load()
