"""kubectl's protobuf bodies for Deployments, Jobs, CronJobs, RBAC, Services and Ingresses (issue 15 item 4).

kubectl 1.32's ``create deployment|job|cronjob|role|rolebinding|clusterrole|clusterrolebinding|service|
ingress`` send ``application/vnd.kubernetes.protobuf`` and never fall back to JSON. Three checks, all
with the real kubectl against the suite's plane:

- the very bytes kubectl sends (its ``-v=9`` log dumps them in hex) decode to the JSON kubectl itself
  writes for the same command with ``--dry-run=client -o json``;
- the objects the server stored read back (``kubectl get -o json``) with what was asked;
- the same object sent once as protobuf (``kubectl create deployment``) and once as JSON (``kubectl
  create -f`` of its dry-run JSON) is stored alike.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import pytest

from rayqueue_local.apimachinery.protobuf import MAGIC, decode

# (command words, flags, command after "--"): the namespace goes before "--".
COMMANDS: dict[str, tuple[list[str], list[str]]] = {
    "deployment": (
        ["create", "deployment", "web", "--image=nginx:1.27", "--replicas=2", "--port=8080"],
        ["sleep", "600"],
    ),
    "job": (["create", "job", "once", "--image=python:3.12"], ["python", "-c", "print(42)"]),
    "cronjob": (["create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *"], ["date"]),
    "role": (["create", "role", "reader", "--verb=get,list", "--resource=pods,deployments.apps"], []),
    "rolebinding": (
        ["create", "rolebinding", "rv", "--role=reader", "--serviceaccount=team:robot", "--group=devs"],
        [],
    ),
    "clusterrole": (["create", "clusterrole", "viewer-{ns}", "--verb=get", "--non-resource-url=/logs"], []),
    "clusterrolebinding": (
        ["create", "clusterrolebinding", "viewers-{ns}", "--clusterrole=viewer-{ns}", "--user=bob"],
        [],
    ),
    "service-clusterip": (["create", "service", "clusterip", "api", "--tcp=80:8080", "--tcp=81:metrics"], []),
    "service-externalname": (["create", "service", "externalname", "ext", "--external-name=example.com"], []),
    "ingress": (["create", "ingress", "ing", "--rule=foo.example/bar=api:80", "--annotation=a=b"], []),
}


def _argv(label: str, namespace: str, *extra: str) -> list[str]:
    words, after = COMMANDS[label]
    words = [w.format(ns=namespace) for w in words]
    return [*words, *extra, "-n", namespace, *(["--", *after] if after else [])]


def _request_body(stderr: str) -> bytes:
    """The protobuf body of kubectl's request, from its ``-v=9`` log (client-go dumps binary bodies
    in hex, ``encoding/hex.Dump`` style: offset, 16 bytes, ASCII column)."""
    blocks = re.findall(r'"Request Body" body=<\n((?:\t[0-9a-f]{8}  .*\n)+)', stderr)
    assert len(blocks) == 1, f"expected one binary request body in kubectl's log, found {len(blocks)}"
    assert "[truncated" not in blocks[0]
    data = bytearray()
    for line in blocks[0].splitlines():
        data += bytes.fromhex(line[11:60].replace(" ", ""))
    assert data.startswith(MAGIC)
    return bytes(data)


@pytest.mark.parametrize("label", list(COMMANDS))
def test_kubectls_protobuf_body_decodes_to_kubectls_own_json(
    kubectl: Any, namespace: str, label: str
) -> None:
    meant = json.loads(kubectl.run(*_argv(label, namespace, "--dry-run=client", "-o", "json")).stdout)
    proc = kubectl.run("-v=9", *_argv(label, namespace), check=False)
    assert "Content-Type: application/vnd.kubernetes.protobuf" in proc.stderr
    assert decode(_request_body(proc.stderr)) == meant
    # Never a 415/400 for the body (clusterroles and cronjobs may not be served by this plane: 404).
    assert "unknown format" not in proc.stderr and "BadRequest" not in proc.stderr
    if proc.returncode != 0:
        assert "the server could not find the requested resource" in proc.stderr, proc.stderr[-2000:]
        assert label in ("cronjob", "clusterrole", "clusterrolebinding")
    kubectl.run("delete", "--ignore-not-found", *_target(label, namespace), check=False)


def _target(label: str, namespace: str) -> list[str]:
    words = COMMANDS[label][0]
    resource = "service" if label.startswith("service") else words[1]
    name = words[4] if label.startswith("service") else words[2]
    return [resource, name.format(ns=namespace), "-n", namespace]


def test_created_objects_read_back_with_what_was_asked(kubectl: Any, namespace: str) -> None:
    for label in ("deployment", "job", "role", "rolebinding", "service-clusterip", "service-externalname"):
        kubectl.run(*_argv(label, namespace))
    kubectl.run(*_argv("ingress", namespace))

    deploy = kubectl.json("get", "deployment", "web", "-n", namespace)
    assert deploy["spec"]["replicas"] == 2
    (container,) = deploy["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "nginx:1.27" and container["command"] == ["sleep", "600"]
    assert [p["containerPort"] for p in container["ports"]] == [8080]

    job = kubectl.json("get", "job", "once", "-n", namespace)
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "python:3.12" and container["command"] == ["python", "-c", "print(42)"]
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"

    role = kubectl.json("get", "role", "reader", "-n", namespace)
    assert role["rules"] == [
        {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]},
        {"verbs": ["get", "list"], "apiGroups": ["apps"], "resources": ["deployments"]},
    ]
    binding = kubectl.json("get", "rolebinding", "rv", "-n", namespace)
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"}
    assert binding["subjects"] == [
        {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "devs"},
        {"kind": "ServiceAccount", "name": "robot", "namespace": "team"},
    ]

    service = kubectl.json("get", "service", "api", "-n", namespace)
    assert service["spec"]["type"] == "ClusterIP" and service["spec"]["selector"] == {"app": "api"}
    assert [(p["name"], p["port"], p["targetPort"]) for p in service["spec"]["ports"]] == [
        ("80-8080", 80, 8080),
        ("81-metrics", 81, "metrics"),
    ]
    ext = kubectl.json("get", "service", "ext", "-n", namespace)
    assert ext["spec"]["type"] == "ExternalName" and ext["spec"]["externalName"] == "example.com"

    ingress = kubectl.json("get", "ingress", "ing", "-n", namespace)
    assert ingress["metadata"]["annotations"] == {"a": "b"}
    (rule,) = ingress["spec"]["rules"]
    assert rule["host"] == "foo.example"
    assert rule["http"]["paths"][0]["backend"] == {"service": {"name": "api", "port": {"number": 80}}}

    # kubectl run sends its Pod as JSON: it works as well.
    kubectl.run("run", "hello", "--image=python:3.12", "--restart=Never", "-n", namespace, "--", "sleep", "5")
    pod = kubectl.json("get", "pod", "hello", "-n", namespace)
    assert pod["spec"]["containers"][0]["image"] == "python:3.12"
    assert pod["spec"]["containers"][0]["args"] == ["sleep", "5"]


def _comparable(obj: dict[str, Any]) -> dict[str, Any]:
    return {"spec": obj.get("spec"), "rules": obj.get("rules"), "labels": obj["metadata"].get("labels")}


def test_one_object_sent_as_protobuf_and_as_json_is_stored_alike(kubectl: Any, namespace: str) -> None:
    suffix = uuid.uuid4().hex[:4]
    for resource, words in (
        ("deployment", ["deployment", "web", "--image=nginx", "--replicas=3", "--port=80"]),
        ("role", ["role", f"r{suffix}", "--verb=get,watch", "--resource=configmaps", "--resource-name=a"]),
    ):
        kubectl.run("create", *words, "-n", namespace)  # protobuf
        as_json = json.loads(
            kubectl.run("create", *words, "-n", namespace, "--dry-run=client", "-o", "json").stdout
        )
        as_json["metadata"]["name"] = f"{words[1]}-json"
        kubectl.run("create", "-f", "-", "-n", namespace, stdin=json.dumps(as_json))  # JSON
        via_protobuf = kubectl.json("get", resource, words[1], "-n", namespace)
        via_json = kubectl.json("get", resource, f"{words[1]}-json", "-n", namespace)
        assert _comparable(via_protobuf) == _comparable(via_json)
        assert via_protobuf["metadata"]["creationTimestamp"]  # set by the server, not left null
