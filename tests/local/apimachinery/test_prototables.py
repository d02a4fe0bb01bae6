"""The generated protobuf tables: ``prototables.json``'s shape, and what the loader makes of it.

The expected entries and counts below were read from the tables when they were still a generated
Python module (228 messages and 945 fields from k8s.io/api's kinds, then 38 messages and 148 fields more
when Event, Node and CustomResourceDefinition joined), so a loader or a file that changes any answer
fails here.
"""

from __future__ import annotations

import json
import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from rayqueue_local.apimachinery.gotypes import MESSAGES
from rayqueue_local.apimachinery.prototables import GENERATED

SCALARS = {"string", "int", "bool", "bytes"}
# Messages the decoder reads by hand (rayqueue_local.apimachinery.protobuf), with no field table.
SPECIAL = {"meta/v1.Time", "meta/v1.FieldsV1", "intstr.IntOrString", "resource.Quantity"}
# Messages referred to but without a table: a CRD's free-form JSONSchemaProps (OPAQUE in the generator) and
# an Event's MicroTime (an apimachinery type, read only for known fields: the codec decodes no Event).
OPAQUE = {"apiextensions/v1.JSONSchemaProps", "meta/v1.MicroTime"}


def _data() -> dict[str, Any]:
    text = resources.files("rayqueue_local.apimachinery").joinpath("prototables.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def test_the_file_names_its_source_and_roots_and_each_row_has_three_strings() -> None:
    data = _data()
    assert set(data) == {
        "source",
        "commit",
        "apiextensions_source",
        "apiextensions_commit",
        "roots",
        "messages",
    }
    assert data["source"] == "https://github.com/kubernetes/api"
    assert data["apiextensions_source"] == "https://github.com/kubernetes/apiextensions-apiserver"
    assert re.fullmatch(r"[0-9a-f]{40}", data["commit"])
    assert re.fullmatch(r"[0-9a-f]{40}", data["apiextensions_commit"])
    assert set(data["roots"]) <= set(data["messages"])
    for name, fields in data["messages"].items():
        assert re.fullmatch(r"[a-z0-9]+/v\w+\.\w+", name), name
        for number, row in fields.items():
            assert number.isdigit() and int(number) > 0, (name, number)
            assert isinstance(row, list) and len(row) == 3 and all(isinstance(x, str) for x in row)
            assert set(row[2]) <= set("opi"), (name, number, row)


def test_every_type_a_field_names_is_a_scalar_a_special_or_a_message_with_a_table() -> None:
    for name, fields in GENERATED.items():
        for json_name, typ, flags in fields.values():
            base = typ.removeprefix("[]").removeprefix("map")
            assert base in SCALARS | SPECIAL | OPAQUE or base in MESSAGES, (name, json_name, typ)
            assert (json_name == "") == ("i" in flags), (name, typ)


def test_the_loader_gives_the_tables_the_generated_module_held() -> None:
    assert len(GENERATED) == 228 + 38
    assert sum(len(fields) for fields in GENERATED.values()) == 945 + 148
    assert list(GENERATED) == sorted(GENERATED)
    assert GENERATED["apps/v1.DeploymentSpec"][1] == ("replicas", "int", "op")
    assert GENERATED["apps/v1.DaemonSet"] == {
        1: ("metadata", "meta/v1.ObjectMeta", "o"),
        2: ("spec", "apps/v1.DaemonSetSpec", "o"),
        3: ("status", "apps/v1.DaemonSetStatus", "o"),
    }
    assert GENERATED["core/v1.ConfigMap"] == {
        1: ("metadata", "meta/v1.ObjectMeta", "o"),
        2: ("data", "mapstring", "o"),
        3: ("binaryData", "mapbytes", "o"),
        4: ("immutable", "bool", "op"),
    }
    assert GENERATED["core/v1.ConfigMapEnvSource"][1] == ("", "core/v1.LocalObjectReference", "i")
    assert GENERATED["core/v1.PodSpec"][2] == ("containers", "[]core/v1.Container", "")
    assert GENERATED["scheduling/v1alpha3.WorkloadPodGroupSingleDisruptionMode"] == {}
    assert GENERATED["core/v1.Node"][2] == ("spec", "core/v1.NodeSpec", "o")
    assert "apiextensions/v1.JSONSchemaProps" not in GENERATED  # free-form: left out on purpose


def test_the_json_file_ships_as_package_data() -> None:
    pyproject = Path(__file__).parents[3] / "local" / "pyproject.toml"
    package_data = tomllib.loads(pyproject.read_text("utf-8"))["tool"]["setuptools"]["package-data"]
    assert "apimachinery/prototables.json" in package_data["rayqueue_local"]
