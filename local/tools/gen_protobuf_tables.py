"""Generate ``rayqueue_local/apimachinery/prototables.json`` and ``rayqueue_local/registry/schematables.json``
from checkouts of k8s.io/api and k8s.io/apiextensions-apiserver (run by hand).

    python3 local/tools/gen_protobuf_tables.py API_CHECKOUT APIEXTENSIONS_CHECKOUT [OUT [SCHEMAS_OUT]]

(git clones of k8s.io/api and k8s.io/apiextensions-apiserver)

writes the protobuf tables (to OUT; by default the package's ``prototables.json``, which
:mod:`rayqueue_local.apimachinery.prototables` loads as ``GENERATED``) and, for the same messages, what
their OpenAPI schemas need (to SCHEMAS_OUT; by default ``schematables.json``, which
:mod:`rayqueue_local.registry.coreschemas` renders). With ``--check`` first, it writes nothing: it
regenerates both at the commits ``prototables.json`` records and fails if either file differs.

Reads, at each repository's HEAD (``git show``; nothing is copied), each package's ``generated.proto``
(field numbers and wire types) and ``types.go`` (the JSON name, ``omitempty``, whether the Go field is a
pointer, and embedded structs, whose fields Go's encoding/json promotes into the parent object). The
two are joined by struct name and protobuf field number; a proto field without its Go field stops the
generator, and so does a kept message that refers to a message outside these packages and EXTERNAL.
Only the messages reachable from the root kinds below are written, not those in OPAQUE. The apimachinery
types (meta/v1, intstr, resource) are not in k8s.io/api: :mod:`rayqueue_local.apimachinery.protobuf` has
them (and :mod:`rayqueue_local.registry.metaschemas` their schemas). For the schemas, types.go also gives
each struct's and field's doc comment (the whole comment, as upstream's description; its lines are
joined by spaces, its paragraphs by a blank line), the ``patchStrategy``/``patchMergeKey`` struct tags, the
``+listType``/``+listMapKey``/``+mapType``/``+structType`` markers, and whether a field is required as
openapi-gen decides it (``+required``, or neither ``+optional`` nor ``omitempty``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

PACKAGES = {  # proto package -> (directory in its repository, our short prefix)
    "k8s.io.api.core.v1": ("core/v1", "core/v1"),
    "k8s.io.api.apps.v1": ("apps/v1", "apps/v1"),
    "k8s.io.api.batch.v1": ("batch/v1", "batch/v1"),
    "k8s.io.api.rbac.v1": ("rbac/v1", "rbac/v1"),
    "k8s.io.api.networking.v1": ("networking/v1", "networking/v1"),
    "k8s.io.api.scheduling.v1alpha3": ("scheduling/v1alpha3", "scheduling/v1alpha3"),
    "k8s.io.api.autoscaling.v1": ("autoscaling/v1", "autoscaling/v1"),
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1": (
        "pkg/apis/apiextensions/v1",
        "apiextensions/v1",
    ),
}
#: The packages read from the k8s.io/apiextensions-apiserver checkout (the others: from k8s.io/api).
APIEXTENSIONS = {"k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1"}
GROUPS = {  # proto package -> its API group (for a kind's x-kubernetes-group-version-kind)
    "k8s.io.api.core.v1": "",
    "k8s.io.api.apps.v1": "apps",
    "k8s.io.api.batch.v1": "batch",
    "k8s.io.api.rbac.v1": "rbac.authorization.k8s.io",
    "k8s.io.api.networking.v1": "networking.k8s.io",
    "k8s.io.api.scheduling.v1alpha3": "scheduling.k8s.io",
    "k8s.io.api.autoscaling.v1": "autoscaling",
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1": "apiextensions.k8s.io",
}
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
#: Kinds whose schemas are served but that no table decodes: a ``/scale`` subresource's Scale.
SCHEMA_ROOTS = ["autoscaling/v1.Scale"]
SOURCE = "https://github.com/kubernetes/api"
APIEXTENSIONS_SOURCE = "https://github.com/kubernetes/apiextensions-apiserver"
OUT = Path(__file__).parents[1] / "src/rayqueue_local/apimachinery/prototables.json"
SCHEMAS_OUT = Path(__file__).parents[1] / "src/rayqueue_local/registry/schematables.json"
SCALARS = {"string": "string", "int32": "int", "int64": "int", "bool": "bool", "bytes": "bytes"}


class Checkout(NamedTuple):
    """A repository and the commit (or any revision) to read there."""

    repo: str
    rev: str = "HEAD"


def show(checkout: Checkout, path: str) -> str:
    return subprocess.run(
        ["git", "-C", checkout.repo, "show", f"{checkout.rev}:{path}"],
        check=True,
        capture_output=True,
        text=True,
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


def parse_proto(text: str, package: str) -> dict[str, dict[int, tuple[str, str, str]]]:
    """message -> {number: (container, type, proto scalar)}; container is '', '[]' or 'map'; the proto
    scalar (``int32``, ``int64``, ...) is kept for the schemas, empty for a message."""
    out: dict[str, dict[int, tuple[str, str, str]]] = {}
    for name, body in re.findall(r"^message (\w+) \{\n(.*?)^\}", text, re.M | re.S):
        fields: dict[int, tuple[str, str, str]] = {}
        for line in body.splitlines():
            line = line.strip()
            m = re.match(r"(optional|repeated) (\S+) (\w+) = (\d+);$", line)
            if m:
                scalar = m[2] if m[2] in SCALARS else ""
                fields[int(m[4])] = ("[]" if m[1] == "repeated" else "", resolve(m[2], package), scalar)
                continue
            m = re.match(r"map<string, (\S+)> (\w+) = (\d+);$", line)
            if m:
                scalar = m[1] if m[1] in SCALARS else ""
                fields[int(m[3])] = ("map", resolve(m[1], package), scalar)
                continue
            if line and not line.startswith("//"):
                raise SystemExit(f"unparsed proto line in {name}: {line}")
        out[f"{PACKAGES[package][1]}.{name}"] = fields
    return out


class GoField(NamedTuple):
    """One field of a Go struct that has a protobuf tag, as types.go declares it."""

    number: int
    json_name: str
    omitempty: bool
    pointer: bool
    inline: bool
    go_type: str
    comments: tuple[str, ...]  # its doc comment, ``//`` and one space stripped, markers included
    tags: str


class GoStruct(NamedTuple):
    comments: tuple[str, ...]  # the doc comment of the type
    fields: dict[int, GoField]
    kind: bool  # embeds metav1.TypeMeta: a kind, with apiVersion and kind


def _comment(line: str) -> str | None:
    stripped = line.strip()
    if not stripped.startswith("//"):
        return None
    text = stripped[2:]
    return text[1:] if text.startswith(" ") else text


def parse_go_structs(text: str, prefix: str) -> dict[str, GoStruct]:
    """struct -> its doc comment and its fields with a protobuf tag (each with its own doc comment)."""
    out: dict[str, GoStruct] = {}
    lines = text.splitlines()
    pending: list[str] = []  # the comment block just read (reset by a blank line or code)
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        empty = re.match(r"^type (\w+) struct ?\{\}$", line)
        if empty:
            out[f"{prefix}.{empty[1]}"], pending = GoStruct(tuple(pending), {}, False), []
            continue
        m = re.match(r"^type (\w+) struct \{$", line)
        if not m:
            comment = _comment(line) if not line.startswith((" ", "\t")) else None
            pending = [*pending, comment] if comment is not None else []
            continue
        type_comments, pending = tuple(pending), []
        fields: dict[int, GoField] = {}
        kind = False
        field_comments: list[str] = []
        while i < len(lines) and lines[i] != "}":
            line = lines[i]
            i += 1
            comment = _comment(line)
            if comment is not None:
                field_comments.append(comment)
                continue
            if "metav1.TypeMeta" in line:
                kind = True
            fm = re.match(r"\s*(?:(\w+)\s+)?(\S+)\s+`(.*)`\s*$", line)
            if not fm or "protobuf:" not in fm[3]:
                field_comments = []
                continue
            go_name, go_type, tags = fm[1], fm[2], fm[3]
            embedded = go_name is None
            number = int(re.search(r'protobuf:"\w+,(\d+),', tags)[1])  # type: ignore[index]
            json_tag = re.search(r'json:"([^"]*)"', tags)
            parts = (json_tag[1] if json_tag else "").split(",")
            json_name = parts[0]
            inline = embedded and json_name == ""
            if not json_name and not inline:
                json_name = go_name
            fields[number] = GoField(
                number,
                json_name,
                "omitempty" in parts[1:],
                go_type.startswith("*"),
                inline,
                go_type,
                tuple(field_comments),
                tags,
            )
            field_comments = []
        out[f"{prefix}.{m[1]}"] = GoStruct(type_comments, fields, kind)
    return out


def parse_go(text: str, prefix: str) -> dict[str, dict[int, tuple[str, bool, bool, bool]]]:
    """struct -> {number: (json name, omitempty, pointer, inline)} for fields with a protobuf tag."""
    return {
        name: {n: (f.json_name, f.omitempty, f.pointer, f.inline) for n, f in struct.fields.items()}
        for name, struct in parse_go_structs(text, prefix).items()
    }


def head(checkout: Checkout) -> str:
    return subprocess.run(
        ["git", "-C", checkout.repo, "log", "-1", "--format=%H", checkout.rev],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


class Parsed(NamedTuple):
    """Both sources parsed: the proto messages, the Go structs, the messages kept for the protobuf
    tables and for the schemas (each sorted), the commits read."""

    proto: dict[str, dict[int, tuple[str, str, str]]]
    go: dict[str, GoStruct]
    kept: list[str]
    schema_kept: list[str]
    commits: tuple[str, str]


def reachable(proto: dict[str, dict[int, tuple[str, str, str]]], roots: list[str]) -> list[str]:
    """The messages reachable from ``roots`` (not EXTERNAL or OPAQUE ones), sorted."""
    done: list[str] = []
    todo = list(roots)
    while todo:
        name = todo.pop(0)
        if name in done or name in EXTERNAL.values() or name in OPAQUE:
            continue
        done.append(name)
        for _, typ, _ in proto[name].values():
            if typ.startswith("?"):
                raise SystemExit(f"{name} refers to {typ[1:]}, which has no table")
            if "." in typ and typ not in done:
                todo.append(typ)
    return sorted(done)


def read(repo: Checkout, apiextensions_repo: Checkout) -> Parsed:
    """Parse both checkouts at their revisions."""
    proto: dict[str, dict[int, tuple[str, str, str]]] = {}
    go: dict[str, GoStruct] = {}
    for package, (directory, prefix) in PACKAGES.items():
        source = apiextensions_repo if package in APIEXTENSIONS else repo
        proto.update(parse_proto(show(source, f"{directory}/generated.proto"), package))
        go.update(parse_go_structs(show(source, f"{directory}/types.go"), prefix))
    kept, schema_kept = reachable(proto, ROOTS), reachable(proto, ROOTS + SCHEMA_ROOTS)
    for name in schema_kept:
        for number in proto[name]:
            if name not in go or number not in go[name].fields:
                raise SystemExit(f"{name} field {number}: no Go field")
    return Parsed(proto, go, kept, schema_kept, (head(repo), head(apiextensions_repo)))


def _about(parsed: Parsed, roots: list[str]) -> list[str]:
    about = {
        "source": SOURCE,
        "commit": parsed.commits[0],
        "apiextensions_source": APIEXTENSIONS_SOURCE,
        "apiextensions_commit": parsed.commits[1],
        "roots": roots,
    }
    return [f"  {json.dumps(key)}: {json.dumps(value)}," for key, value in about.items()]


def render(parsed: Parsed) -> str:
    """The JSON text of the tables: the source commits, the root kinds and each kept message's fields."""
    proto, go, kept = parsed.proto, parsed.go, parsed.kept
    messages: list[str] = []
    for name in kept:
        fields: list[str] = []
        for number, (container, typ, _) in sorted(proto[name].items()):
            f = go[name].fields[number]
            flags = ("o" if f.omitempty else "") + ("p" if f.pointer else "") + ("i" if f.inline else "")
            fields.append(f'      "{number}": {json.dumps([f.json_name, container + typ, flags])}')
        body = "{\n" + ",\n".join(fields) + "\n    }" if fields else "{}"
        messages.append(f"    {json.dumps(name)}: {body}")
    lines = _about(parsed, ROOTS)
    return "{\n" + "\n".join(lines) + '\n  "messages": {\n' + ",\n".join(messages) + "\n  }\n}\n"


def description(comments: tuple[str, ...]) -> str:
    """A Go doc comment as openapi-gen makes it a description: each paragraph's lines joined by spaces,
    paragraphs by a blank line; marker lines (``+...``) and one-line TODOs dropped, nothing after a
    ``---`` line."""
    paragraphs: list[list[str]] = [[]]
    for line in comments:
        text = line.strip()
        if text == "---":
            break
        if text.startswith(("+", "TODO")):
            continue
        if not text:
            if paragraphs[-1]:
                paragraphs.append([])
            continue
        paragraphs[-1].append(text)
    return "\n\n".join(" ".join(lines) for lines in paragraphs if lines)


def markers(comments: tuple[str, ...]) -> dict[str, list[str]]:
    """The ``+name=value`` markers of a doc comment: name -> values (a marker without a value: [""])."""
    out: dict[str, list[str]] = {}
    for line in comments:
        m = re.match(r"\s*\+([\w:.-]+)(?:=(.*))?$", line)
        if m:
            out.setdefault(m[1], []).append((m[2] or "").strip())
    return out


def required(f: GoField, marks: dict[str, list[str]]) -> bool:
    """Whether openapi-gen lists the field as required: ``+required``, or neither ``+optional`` nor
    ``omitempty`` (an embedded struct's fields are judged in their own struct)."""
    if f.inline:
        return False
    if "required" in marks or "k8s:required" in marks:
        return True
    return not ("optional" in marks or "k8s:optional" in marks or f.omitempty)


def _extensions(f: GoField, marks: dict[str, list[str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    strategy = re.search(r'patchStrategy:"([^"]*)"', f.tags)
    merge_key = re.search(r'patchMergeKey:"([^"]*)"', f.tags)
    if strategy:
        out["patchStrategy"] = strategy[1]
    if merge_key:
        out["patchMergeKey"] = merge_key[1]
    if "listType" in marks:
        out["listType"] = marks["listType"][0]
    if "listMapKey" in marks:
        out["listMapKeys"] = marks["listMapKey"]
    for marker in ("mapType", "structType"):
        if marker in marks:
            out["mapType"] = marks[marker][0]
    return out


def render_schemas(parsed: Parsed) -> str:
    """The JSON text of what the OpenAPI schemas of the kept messages need, field by field.

    Each message: its ``description``, ``kind`` (``[group, version, Kind]`` for a struct that embeds
    TypeMeta, else null), ``mapType`` (``+structType``), and ``fields``, in protobuf order, each
    ``[JSON name, type, flags, description, extensions]``: the type as in the protobuf tables but with
    the proto scalar (``int32``, ``int64``, ``string``, ``bool``, ``bytes``); flags ``p`` a Go pointer,
    ``i`` an embedded struct whose fields are inlined, ``r`` required; extensions ``patchStrategy``,
    ``patchMergeKey`` (struct tags), ``listType``, ``listMapKeys``, ``mapType`` (markers).
    """
    proto, go = parsed.proto, parsed.go
    messages: list[str] = []
    for name in parsed.schema_kept:
        struct = go[name]
        package = next(p for p, (_, prefix) in PACKAGES.items() if name.startswith(prefix + "."))
        group_version, kind = name.split(".", 1)
        kind_of = [GROUPS[package], group_version.split("/")[1], kind] if struct.kind else None
        type_marks = markers(struct.comments)
        header = {
            "description": description(struct.comments),
            "kind": kind_of,
            "mapType": type_marks.get("structType", [None])[0],
        }
        fields: list[str] = []
        for number, (container, typ, scalar) in sorted(proto[name].items()):
            f = struct.fields[number]
            marks = markers(f.comments)
            flags = "".join(
                flag for flag, on in (("p", f.pointer), ("i", f.inline), ("r", required(f, marks))) if on
            )
            typ = container + (scalar or typ)
            row = [f.json_name, typ, flags, description(f.comments), _extensions(f, marks)]
            fields.append(f"      {json.dumps(row)}")
        head_text = ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in header.items())
        body = ",\n".join(fields)
        messages.append(
            f'    {json.dumps(name)}: {{{head_text}, "fields": [\n{body}\n    ]}}'
            if fields
            else f'    {json.dumps(name)}: {{{head_text}, "fields": []}}'
        )
    lines = _about(parsed, ROOTS + SCHEMA_ROOTS)
    return "{\n" + "\n".join(lines) + '\n  "messages": {\n' + ",\n".join(messages) + "\n  }\n}\n"


def check(repo: str, apiextensions_repo: str) -> list[str]:
    """Regenerate both files at the commits ``prototables.json`` records; the names of those that differ
    from the files in the package (empty: both are what the pinned sources give)."""
    pinned = json.loads(OUT.read_text(encoding="utf-8"))
    parsed = read(
        Checkout(repo, pinned["commit"]), Checkout(apiextensions_repo, pinned["apiextensions_commit"])
    )
    outputs = {OUT: render(parsed), SCHEMAS_OUT: render_schemas(parsed)}
    return [path.name for path, text in outputs.items() if path.read_text(encoding="utf-8") != text]


def main(argv: list[str]) -> None:
    if argv[0] == "--check":
        stale = check(argv[1], argv[2])
        if stale:
            raise SystemExit(f"not what the pinned sources give: {', '.join(stale)}")
        return
    parsed = read(Checkout(argv[0]), Checkout(argv[1]))
    out = argv[2] if len(argv) > 2 else OUT
    schemas_out = argv[3] if len(argv) > 3 else SCHEMAS_OUT
    with open(out, "w", encoding="utf-8") as file:
        file.write(render(parsed))
    with open(schemas_out, "w", encoding="utf-8") as file:
        file.write(render_schemas(parsed))


if __name__ == "__main__":
    main(sys.argv[1:])
