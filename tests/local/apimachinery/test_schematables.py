"""The generated schema tables (``registry/schematables.json``) and the built-in schemas made from them.

The generator writes them with the protobuf tables from one parse of the same checkouts: the two files
must name the same commits, the same messages and, message by message, the same JSON fields. What
kubectl reads from them (strategic-merge keys, list types, references that resolve) is checked here;
the field names, types, required fields and descriptions are held against the ``kubernetes`` client's
models in ``test_gotypes_match_client.py``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from rayqueue_local.apimachinery.prototables import GENERATED
from rayqueue_local.apimachinery.strategic import MERGE_KEYS
from rayqueue_local.registry.builtinschemas import builtin_schemas
from rayqueue_local.registry.coreschemas import definition_name, generated_schemas

_REF = re.compile(r'"#/components/schemas/([^"]+)"')
_ROOT = Path(__file__).parents[3]
# Git checkouts of k8s.io/api and k8s.io/apiextensions-apiserver, named by these variables. CI has no
# network to fetch them, so there the regenerate-and-diff test is skipped (the other tests hold the data
# against the kubernetes client's models instead).
_CHECKOUTS = (
    os.environ.get("RAYQUEUE_K8S_API_CHECKOUT", ""),
    os.environ.get("RAYQUEUE_K8S_APIEXTENSIONS_CHECKOUT", ""),
)


def _data(package: str, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(resources.files(package).joinpath(name).read_text("utf-8"))
    return data


def _schema_tables() -> dict[str, Any]:
    return _data("rayqueue_local.registry", "schematables.json")


def test_both_outputs_of_the_generator_name_the_same_source_and_messages() -> None:
    tables, proto = _schema_tables(), _data("rayqueue_local.apimachinery", "prototables.json")
    for key in ("source", "commit", "apiextensions_source", "apiextensions_commit"):
        assert tables[key] == proto[key], key
    # The schemas' roots add the kinds no table decodes (a /scale subresource's Scale), and what they reach.
    assert tables["roots"] == [*proto["roots"], "autoscaling/v1.Scale"]
    assert list(tables["messages"]) == sorted(
        [*GENERATED, "autoscaling/v1.Scale", "autoscaling/v1.ScaleSpec", "autoscaling/v1.ScaleStatus"]
    )
    for name, message in tables["messages"].items():
        assert set(message) == {"description", "kind", "mapType", "fields"}, name
        if name not in GENERATED:
            continue
        proto_rows = [row for _, row in sorted(GENERATED[name].items())]
        assert [row[0] for row in message["fields"]] == [row[0] for row in proto_rows], name
        for (json_name, typ, flags, _, _), (_, proto_type, proto_flags) in zip(
            message["fields"], proto_rows, strict=True
        ):
            # The same type, with the proto scalar's width (int32/int64) where the tables say "int".
            assert re.sub(r"int(32|64)$", "int", typ) == proto_type, (name, json_name)
            assert set(flags) <= set("pir"), (name, json_name)
            assert ("i" in flags) == ("i" in proto_flags) and ("p" in flags) == ("p" in proto_flags)


def test_every_kind_of_the_roots_carries_its_group_version_kind() -> None:
    tables = _schema_tables()
    kinds = {name for name, message in tables["messages"].items() if message["kind"] is not None}
    assert set(tables["roots"]) <= kinds
    schema = generated_schemas()["io.k8s.api.rbac.v1.ClusterRoleBinding"]
    assert schema["x-kubernetes-group-version-kind"] == [
        {"group": "rbac.authorization.k8s.io", "kind": "ClusterRoleBinding", "version": "v1"}
    ]
    assert {"apiVersion", "kind", "metadata", "roleRef", "subjects"} == set(schema["properties"])


def test_every_reference_resolves_among_the_builtin_schemas() -> None:
    schemas = builtin_schemas()
    for name, schema in generated_schemas().items():
        for target in _REF.findall(json.dumps(schema)):
            assert target in schemas, (name, target)


def test_kubectls_strategic_merge_and_list_types_are_upstreams() -> None:
    schemas = generated_schemas()
    pod_spec = schemas["io.k8s.api.core.v1.PodSpec"]["properties"]
    assert pod_spec["containers"]["x-kubernetes-patch-merge-key"] == "name"
    assert pod_spec["containers"]["x-kubernetes-list-map-keys"] == ["name"]
    assert pod_spec["volumes"]["x-kubernetes-patch-strategy"] == "merge,retainKeys"
    assert pod_spec["tolerations"]["x-kubernetes-list-type"] == "atomic"
    ports = schemas["io.k8s.api.core.v1.Container"]["properties"]["ports"]
    assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    assert ports["items"] == {
        "allOf": [{"$ref": "#/components/schemas/io.k8s.api.core.v1.ContainerPort"}],
        "default": {},
    }
    service_ports = schemas["io.k8s.api.core.v1.ServiceSpec"]["properties"]["ports"]
    assert service_ports["x-kubernetes-list-map-keys"] == ["port", "protocol"]
    assert schemas["io.k8s.api.rbac.v1.RoleRef"]["x-kubernetes-map-type"] == "atomic"
    resources_ = schemas["io.k8s.api.core.v1.ResourceRequirements"]["properties"]["limits"]
    assert resources_["additionalProperties"] == {
        "$ref": "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity"
    }
    # An embedded struct's fields are the parent's (Volume inlines VolumeSource).
    assert {"name", "configMap", "emptyDir", "secret"} <= set(
        schemas["io.k8s.api.core.v1.Volume"]["properties"]
    )
    replicas = schemas["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["replicas"]
    assert replicas["format"] == "int32" and "Defaults to 1." in replicas["description"]
    crd = schemas[definition_name("apiextensions/v1.CustomResourceValidation")]
    assert crd["properties"]["openAPIV3Schema"]["x-kubernetes-preserve-unknown-fields"] is True


def test_the_servers_own_merge_keys_agree_with_what_kubectl_is_told() -> None:
    """Where the server's strategic merge keys a list by field name, upstream's key is among them."""
    told: dict[str, set[str]] = {}
    for schema in generated_schemas().values():
        for field, prop in schema.get("properties", {}).items():
            if "x-kubernetes-patch-merge-key" in prop:
                told.setdefault(field, set()).add(prop["x-kubernetes-patch-merge-key"])
    shared = set(told) & set(MERGE_KEYS)
    assert {"containers", "env", "ports", "volumes", "volumeMounts", "conditions"} <= shared
    for field in shared:
        assert told[field] <= set(MERGE_KEYS[field]), field


def _has_commit(repo: str, commit: str) -> bool:
    found = subprocess.run(["git", "-C", repo, "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True)
    return found.returncode == 0


def test_regenerating_at_the_pinned_commits_gives_both_files() -> None:
    tables = _schema_tables()
    pinned = zip(_CHECKOUTS, (tables["commit"], tables["apiextensions_commit"]), strict=True)
    if not all(repo and Path(repo).is_dir() and _has_commit(repo, commit) for repo, commit in pinned):
        pytest.skip("no checkout of k8s.io/api and k8s.io/apiextensions-apiserver at the pinned commits")
    tool = _ROOT / "local" / "tools" / "gen_protobuf_tables.py"
    done = subprocess.run([sys.executable, str(tool), "--check", *_CHECKOUTS], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_json_file_ships_as_package_data() -> None:
    pyproject = _ROOT / "local" / "pyproject.toml"
    package_data = tomllib.loads(pyproject.read_text("utf-8"))["tool"]["setuptools"]["package-data"]
    assert "registry/schematables.json" in package_data["rayqueue_local"]
