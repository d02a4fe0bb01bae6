"""Validate manifests against the real upstream CRD schemas (read from the ``crd_dir`` fixture, never copied).

The CRD's ``spec.versions[name=<version>].schema.openAPIV3Schema`` is checked with ``jsonschema``, made a
little stricter than jsonschema alone, to behave like an API server:

* an object schema with ``properties`` but no ``additionalProperties`` and no
  ``x-kubernetes-preserve-unknown-fields`` rejects unknown fields (the API server would *prune* them
  silently, so a misspelt field would be lost: for us that is a bug worth failing on);
* ``nullable: true`` admits ``null``;
* ``metadata`` gets the API server's own checks on names, labels and annotations.

CEL rules (``x-kubernetes-validations``) are not evaluated; the builders check the ones that matter to
them (see ``rayqueue_sdk.manifests.kueue``).
"""

from __future__ import annotations

import copy
import functools
import re
from pathlib import Path
from typing import Any

import jsonschema
import yaml

_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class SchemaError(AssertionError):
    """A manifest does not validate against its CRD."""


@functools.cache
def _crd_index(crd_dir: str) -> dict[tuple[str, str], dict[str, Any]]:
    index: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(Path(crd_dir).rglob("*.yaml")):
        with path.open(encoding="utf-8") as fh:
            for doc in yaml.load_all(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
                if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                    spec = doc["spec"]
                    index[(spec["group"], spec["names"]["kind"])] = doc
    return index


@functools.cache
def _validator(crd_dir: str, group: str, kind: str, version: str) -> jsonschema.protocols.Validator:
    crd = _crd_index(crd_dir).get((group, kind))
    if crd is None:
        raise SchemaError(f"no CRD for {group}/{kind} in {crd_dir}")
    for entry in crd["spec"]["versions"]:
        if entry["name"] == version:
            schema = _strict(copy.deepcopy(entry["schema"]["openAPIV3Schema"]))
            return jsonschema.Draft7Validator(schema)
    raise SchemaError(f"{group}/{kind} has no version {version}")


def schema_for(crd_dir: Path, api_version: str, kind: str) -> dict[str, Any]:
    """The (stricter) openAPIV3Schema used for ``api_version``/``kind``."""
    group, _, version = api_version.rpartition("/")
    return dict(_validator(str(crd_dir), group, kind, version).schema)


def validate(manifest: dict[str, Any], crd_dir: Path) -> None:
    """Raise :class:`SchemaError` listing every problem if ``manifest`` does not fit its CRD."""
    api_version = manifest.get("apiVersion", "")
    kind = manifest.get("kind", "")
    group, _, version = api_version.rpartition("/")
    validator = _validator(str(crd_dir), group, kind, version)
    problems = [
        f"{'.'.join(str(p) for p in err.absolute_path) or '<root>'}: {err.message}"
        for err in validator.iter_errors(manifest)
    ]
    problems += _metadata_problems(manifest.get("metadata", {}))
    if problems:
        name = manifest.get("metadata", {}).get("name")
        raise SchemaError(f"{kind} {name!r} does not fit {api_version}:\n  " + "\n  ".join(problems))


def _strict(schema: Any) -> Any:
    if isinstance(schema, dict):
        for key, value in list(schema.items()):
            if key in ("properties", "patternProperties"):
                schema[key] = {k: _strict(v) for k, v in value.items()}
            elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
                schema[key] = _strict(value)
            elif key in ("anyOf", "allOf", "oneOf"):
                schema[key] = [_strict(v) for v in value]
        if (
            "properties" in schema
            and "additionalProperties" not in schema
            and not schema.get("x-kubernetes-preserve-unknown-fields")
        ):
            schema["additionalProperties"] = False
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and pattern.startswith("^(?i)"):
            # Go's RE2 takes flags anywhere (AdmissionCheck's parameters.kind); Python's re only first.
            schema["pattern"] = "(?i)^" + pattern[len("^(?i)") :]
        if schema.get("nullable") is True:
            return {"anyOf": [{"type": "null"}, schema]}
    return schema


def _metadata_problems(metadata: dict[str, Any]) -> list[str]:
    problems = []
    name = metadata.get("name")
    if not isinstance(name, str) or len(name) > 253 or not _SUBDOMAIN.match(name):
        problems.append(f"metadata.name: {name!r} is not a DNS subdomain")
    namespace = metadata.get("namespace")
    if namespace is not None and (
        len(namespace) > 63 or not re.match(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", namespace)
    ):
        problems.append(f"metadata.namespace: {namespace!r} is not a DNS label")
    for field in ("labels", "annotations"):
        for key, value in (metadata.get(field) or {}).items():
            prefix, _, short = key.rpartition("/")
            if (prefix and not _SUBDOMAIN.match(prefix)) or len(short) > 63 or not _LABEL_NAME.match(short):
                problems.append(f"metadata.{field}: bad key {key!r}")
            if not isinstance(value, str):
                problems.append(f"metadata.{field}[{key!r}]: {value!r} is not a string")
            elif field == "labels" and (len(value) > 63 or not _LABEL_VALUE.match(value)):
                problems.append(f"metadata.labels[{key!r}]: {value!r} is not a label value")
    return problems
