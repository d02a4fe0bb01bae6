"""Generate ``rayqueue_local/apimachinery/prototables.json`` from checkouts of k8s.io/api and
k8s.io/apiextensions-apiserver (run by hand).

    python3 local/tools/gen_protobuf_tables.py /work/.mirror/kubernetes+api/repo \\
        /work/.mirror/kubernetes+apiextensions-apiserver/repo [OUT]

writes the tables (to OUT; by default the package's ``prototables.json``, which
:mod:`rayqueue_local.apimachinery.prototables` loads as ``GENERATED``).

Reads, at each repository's HEAD (``git show``; nothing is copied), each package's ``generated.proto``
(field numbers and wire types) and ``types.go`` (the JSON name, ``omitempty``, whether the Go field is a
pointer, and embedded structs, whose fields Go's encoding/json promotes into the parent object). The
two are joined by struct name and protobuf field number; a proto field without its Go field stops the
generator, and so does a kept message that refers to a message outside these packages and EXTERNAL.
Only the messages reachable from the root kinds below are written, not those in OPAQUE. The apimachinery
types (meta/v1, intstr, resource) are not in k8s.io/api: :mod:`rayqueue_local.apimachinery.protobuf` has
them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

PACKAGES = {  # proto package -> (directory in its repository, our short prefix)
    "k8s.io.api.core.v1": ("core/v1", "core/v1"),
    "k8s.io.api.apps.v1": ("apps/v1", "apps/v1"),
    "k8s.io.api.batch.v1": ("batch/v1", "batch/v1"),
    "k8s.io.api.rbac.v1": ("rbac/v1", "rbac/v1"),
    "k8s.io.api.networking.v1": ("networking/v1", "networking/v1"),
    "k8s.io.api.scheduling.v1alpha3": ("scheduling/v1alpha3", "scheduling/v1alpha3"),
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1": (
        "pkg/apis/apiextensions/v1",
        "apiextensions/v1",
    ),
}
#: The packages read from the k8s.io/apiextensions-apiserver checkout (the others: from k8s.io/api).
APIEXTENSIONS = {"k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1"}
EXTERNAL = {  # proto message -> our name (tables written by hand)
    "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta": "meta/v1.ObjectMeta",
    "k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector": "meta/v1.LabelSelector",
    "k8s.io.apimachinery.pkg.apis.meta.v1.Condition": "meta/v1.Condition",
    "k8s.io.apimachinery.pkg.apis.meta.v1.Time": "meta/v1.Time",
    "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime": "meta/v1.MicroTime",
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": "intstr.IntOrString",
    "k8s.io.apimachinery.pkg.api.resource.Quantity": "resource.Quantity",
}
#: Messages kept out of the tables, and what they reach: a CRD's schema is free-form JSON to the
#: server's known fields, and no kind decoded here holds one.
OPAQUE = {"apiextensions/v1.JSONSchemaProps"}
ROOTS = [
    "core/v1.Namespace",
    "core/v1.ConfigMap",
    "core/v1.Secret",
    "core/v1.ServiceAccount",
    "core/v1.Pod",
    "core/v1.Service",
    "core/v1.PodTemplate",
    "apps/v1.Deployment",
    "apps/v1.ReplicaSet",
    "apps/v1.StatefulSet",
    "apps/v1.DaemonSet",
    "batch/v1.Job",
    "batch/v1.CronJob",
    "rbac/v1.Role",
    "rbac/v1.RoleBinding",
    "rbac/v1.ClusterRole",
    "rbac/v1.ClusterRoleBinding",
    "networking/v1.Ingress",
    "core/v1.Event",
    "core/v1.Node",
    "apiextensions/v1.CustomResourceDefinition",
]
SOURCE = "https://github.com/kubernetes/api"
APIEXTENSIONS_SOURCE = "https://github.com/kubernetes/apiextensions-apiserver"
OUT = Path(__file__).parents[1] / "src/rayqueue_local/apimachinery/prototables.json"
SCALARS = {"string": "string", "int32": "int", "int64": "int", "bool": "bool", "bytes": "bytes"}


def show(repo: str, path: str) -> str:
    return subprocess.run(
        ["git", "-C", repo, "show", f"HEAD:{path}"], check=True, capture_output=True, text=True
    ).stdout


def resolve(proto_type: str, package: str) -> str:
    if proto_type in SCALARS:
        return SCALARS[proto_type]
    name = proto_type.lstrip(".")
    if name in EXTERNAL:
        return EXTERNAL[name]
    pkg, _, message = name.rpartition(".")
    if not pkg:
        return f"{PACKAGES[package][1]}.{message}"
    if pkg not in PACKAGES:
        return f"?{name}"  # fails only if a kept message refers to it
    return f"{PACKAGES[pkg][1]}.{message}"


def parse_proto(text: str, package: str) -> dict[str, dict[int, tuple[str, str]]]:
    """message -> {number: (container, type)}; container is '', '[]' or 'map'."""
    out: dict[str, dict[int, tuple[str, str]]] = {}
    for name, body in re.findall(r"^message (\w+) \{\n(.*?)^\}", text, re.M | re.S):
        fields: dict[int, tuple[str, str]] = {}
        for line in body.splitlines():
            line = line.strip()
            m = re.match(r"(optional|repeated) (\S+) (\w+) = (\d+);$", line)
            if m:
                fields[int(m[4])] = ("[]" if m[1] == "repeated" else "", resolve(m[2], package))
                continue
            m = re.match(r"map<string, (\S+)> (\w+) = (\d+);$", line)
            if m:
                fields[int(m[3])] = ("map", resolve(m[1], package))
                continue
            if line and not line.startswith("//"):
                raise SystemExit(f"unparsed proto line in {name}: {line}")
        out[f"{PACKAGES[package][1]}.{name}"] = fields
    return out


def parse_go(text: str, prefix: str) -> dict[str, dict[int, tuple[str, bool, bool, bool]]]:
    """struct -> {number: (json name, omitempty, pointer, inline)} for fields with a protobuf tag."""
    out: dict[str, dict[int, tuple[str, bool, bool, bool]]] = {}
    for name, body in re.findall(r"^type (\w+) struct \{\n(.*?)^\}", text, re.M | re.S):
        fields: dict[int, tuple[str, bool, bool, bool]] = {}
        for line in body.splitlines():
            line = line.split("//")[0] if line.strip().startswith("//") else line
            m = re.match(r"\s*(?:(\w+)\s+)?(\S+)\s+`(.*)`\s*$", line)
            if not m or "protobuf:" not in m[3]:
                continue
            go_name, go_type, tags = m[1], m[2], m[3]
            embedded = go_name is None
            number = int(re.search(r'protobuf:"\w+,(\d+),', tags)[1])  # type: ignore[index]
            json_tag = re.search(r'json:"([^"]*)"', tags)
            parts = (json_tag[1] if json_tag else "").split(",")
            json_name = parts[0]
            inline = embedded and json_name == ""
            if not json_name and not inline:
                json_name = go_name
            fields[number] = (json_name, "omitempty" in parts[1:], go_type.startswith("*"), inline)
        out[f"{prefix}.{name}"] = fields
    return out


def head(repo: str) -> str:
    return subprocess.run(
        ["git", "-C", repo, "log", "-1", "--format=%H"], check=True, capture_output=True, text=True
    ).stdout.strip()


def render(repo: str, apiextensions_repo: str) -> str:
    """The JSON text of the tables: the source commits, the root kinds and each kept message's fields."""
    proto: dict[str, dict[int, tuple[str, str]]] = {}
    go: dict[str, dict[int, tuple[str, bool, bool, bool]]] = {}
    for package, (directory, prefix) in PACKAGES.items():
        source = apiextensions_repo if package in APIEXTENSIONS else repo
        proto.update(parse_proto(show(source, f"{directory}/generated.proto"), package))
        go.update(parse_go(show(source, f"{directory}/types.go"), prefix))
    done: list[str] = []
    todo = list(ROOTS)
    while todo:
        name = todo.pop(0)
        if name in done or name in EXTERNAL.values() or name in OPAQUE:
            continue
        done.append(name)
        for _, typ in proto[name].values():
            if typ.startswith("?"):
                raise SystemExit(f"{name} refers to {typ[1:]}, which has no table")
            if "." in typ and typ not in done:
                todo.append(typ)
    messages: list[str] = []
    for name in sorted(done):
        fields: list[str] = []
        for number, (container, typ) in sorted(proto[name].items()):
            if number not in go.get(name, {}):
                raise SystemExit(f"{name} field {number}: no Go field")
            json_name, omitempty, pointer, inline = go[name][number]
            flags = ("o" if omitempty else "") + ("p" if pointer else "") + ("i" if inline else "")
            fields.append(f'      "{number}": {json.dumps([json_name, container + typ, flags])}')
        body = "{\n" + ",\n".join(fields) + "\n    }" if fields else "{}"
        messages.append(f"    {json.dumps(name)}: {body}")
    about = {
        "source": SOURCE,
        "commit": head(repo),
        "apiextensions_source": APIEXTENSIONS_SOURCE,
        "apiextensions_commit": head(apiextensions_repo),
        "roots": ROOTS,
    }
    lines = [f"  {json.dumps(key)}: {json.dumps(value)}," for key, value in about.items()]
    return "{\n" + "\n".join(lines) + '\n  "messages": {\n' + ",\n".join(messages) + "\n  }\n}\n"


def main(argv: list[str]) -> None:
    repo, apiextensions_repo = argv[0], argv[1]
    out = argv[2] if len(argv) > 2 else OUT
    with open(out, "w", encoding="utf-8") as file:
        file.write(render(repo, apiextensions_repo))


if __name__ == "__main__":
    main(sys.argv[1:])
