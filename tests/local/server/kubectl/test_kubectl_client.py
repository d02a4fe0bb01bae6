"""The real kubectl against the local control plane: OpenAPI-backed commands, protobuf bodies, new groups.

Issue 15 items 1, 4 and 8: ``kubectl apply -f``/``create -f``/``edit`` without ``--validate=false``
(kubectl reads ``fieldValidation`` from ``/openapi/v3`` and leaves validation to the server),
``kubectl explain``, ``kubectl create namespace|configmap|secret`` (protobuf bodies), and
Deployments, Jobs, Nodes and CustomResourceDefinitions, with ``api-resources``.
"""

from __future__ import annotations

import base64
import json
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

RAYCLUSTER = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: {name}
  namespace: {namespace}
spec:
  rayVersion: "2.40.0"
  headGroupSpec:
    rayStartParams: {{}}
    template:
      spec:
        containers: [{{name: ray-head, image: "rayproject/ray:2.40.0"}}]
"""


def _raycluster(name: str, namespace: str) -> str:
    return RAYCLUSTER.format(name=name, namespace=namespace)


def test_apply_and_create_validate_on_the_server(
    kubectl: Any, cp: Any, namespace: str, tmp_path: Path
) -> None:
    manifest = tmp_path / "rc.yaml"
    manifest.write_text(_raycluster("applied", namespace))
    assert "raycluster.ray.io/applied created" in kubectl.run("apply", "-f", str(manifest)).stdout
    manifest.write_text(_raycluster("applied", namespace).replace('"2.40.0"', '"2.41.0"', 1))
    assert "raycluster.ray.io/applied configured" in kubectl.run("apply", "-f", str(manifest)).stdout
    assert cp.store.get("rayclusters.ray.io", namespace, "applied")["spec"]["rayVersion"] == "2.41.0"

    created = kubectl.run("create", "-f", "-", stdin=_raycluster("created", namespace)).stdout
    assert "raycluster.ray.io/created created" in created
    # The server validates (kubectl sent fieldValidation, so it skipped its own check): upstream's 422.
    bad = _raycluster("bad", namespace).replace('rayVersion: "2.40.0"', "rayVersion: 2.40\n  suspend: maybe")
    err = kubectl.fails(["create", "-f", "-"], stdin=bad)
    assert 'RayCluster "bad" is invalid' in err and "spec.suspend" in err
    assert "openapi" not in err.lower()


def test_edit_through_kube_editor(kubectl: Any, cp: Any, namespace: str, tmp_path: Path) -> None:
    kubectl.run("apply", "-f", "-", stdin=_raycluster("edited", namespace))
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/rayVersion: 2.40.0/rayVersion: 2.42.0/' \"$1\"\n")
    editor.chmod(0o755)
    out = kubectl.run(
        "edit", "raycluster", "edited", "-n", namespace, env={"KUBE_EDITOR": str(editor)}
    ).stdout
    assert "raycluster.ray.io/edited edited" in out
    assert cp.store.get("rayclusters.ray.io", namespace, "edited")["spec"]["rayVersion"] == "2.42.0"


def test_explain_reads_the_crd_schema_and_the_builtin_schemas(kubectl: Any) -> None:
    spec = kubectl.run("explain", "rayclusters.spec").stdout
    assert "GROUP:      ray.io" in spec and "KIND:       RayCluster" in spec
    assert "headGroupSpec\t<Object> -required-" in spec or "headGroupSpec\t<Object>" in spec
    head = kubectl.run("explain", "rayclusters.spec.headGroupSpec").stdout
    assert "FIELD: headGroupSpec <Object>" in head and "rayStartParams" in head
    containers = kubectl.run("explain", "pods.spec.containers").stdout
    assert "FIELD: containers <[]Container>" in containers and "image\t<string>" in containers
    replicas = kubectl.run("explain", "deployments.spec.replicas").stdout
    assert "GROUP:      apps" in replicas and "Defaults to 1" in replicas
    # Every field upstream describes, an embedded struct's included (Volume inlines VolumeSource).
    config_map = kubectl.run("explain", "pods.spec.volumes.configMap").stdout
    assert "FIELD: configMap <ConfigMapVolumeSource>" in config_map and "defaultMode\t<integer>" in config_map


def test_create_namespace_configmap_secret_serviceaccount_send_protobuf(
    kubectl: Any, cp: Any, tmp_path: Path
) -> None:
    ns = f"kubectl-create-{uuid.uuid4().hex[:6]}"
    blob = tmp_path / "blob.bin"
    blob.write_bytes(bytes(range(256)))
    try:
        assert f"namespace/{ns} created" in kubectl.run("create", "namespace", ns).stdout
        cm_args = [
            "configmap",
            "cfg",
            "-n",
            ns,
            "--from-literal=a=b",
            "--from-literal=empty=",
            f"--from-file=blob={blob}",
        ]
        kubectl.run("create", *cm_args)
        secret_args = ["secret", "generic", "creds", "-n", ns, "--from-literal=password=s3cr3t"]
        kubectl.run("create", *secret_args)
        kubectl.run("create", "serviceaccount", "robot", "-n", ns)

        # What the server stored is what kubectl meant to send (its own JSON rendering of the object).
        for kind, key, args in (("ConfigMap", "configmaps", cm_args), ("Secret", "secrets", secret_args)):
            meant = kubectl.json("create", *args, "--dry-run=client")
            stored = cp.store.get(key, ns, meant["metadata"]["name"])
            assert stored["kind"] == kind
            for field in ("data", "binaryData"):
                assert stored.get(field) == meant.get(field), field
        assert base64.b64decode(cp.store.get("configmaps", ns, "cfg")["binaryData"]["blob"]) == bytes(
            range(256)
        )
        assert cp.store.get("configmaps", ns, "cfg")["data"] == {"a": "b", "empty": ""}
        assert cp.store.get("secrets", ns, "creds")["type"] == "Opaque"  # upstream's default
        assert cp.store.get("namespaces", None, ns)["status"]["phase"] == "Active"
        assert cp.store.get("serviceaccounts", ns, "robot")["metadata"]["name"] == "robot"
        # Reads with Accept: protobuf,json are answered in JSON, which kubectl reads.
        assert kubectl.json("get", "configmap", "cfg", "-n", ns)["data"]["a"] == "b"
    finally:
        cp.store.delete("namespaces", None, ns)


def test_deployments_jobs_nodes_and_crds(kubectl: Any, cp: Any, namespace: str) -> None:
    deployment = textwrap.dedent(
        f"""\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: web, namespace: {namespace}}}
        spec:
          selector: {{matchLabels: {{app: web}}}}
          template:
            metadata: {{labels: {{app: web}}}}
            spec: {{containers: [{{name: web, image: nginx}}]}}
        ---
        apiVersion: batch/v1
        kind: Job
        metadata: {{name: once, namespace: {namespace}}}
        spec:
          template:
            spec: {{restartPolicy: Never, containers: [{{name: c, image: busybox}}]}}
        """
    )
    kubectl.run("apply", "-f", "-", stdin=deployment)
    deploy = kubectl.json("get", "deployment", "web", "-n", namespace)
    assert deploy["spec"]["replicas"] == 1 and deploy["spec"]["strategy"]["type"] == "RollingUpdate"
    assert (
        "deployment.apps/web scaled"
        in kubectl.run("scale", "deployment", "web", "--replicas=3", "-n", namespace).stdout
    )
    assert cp.store.get("deployments.apps", namespace, "web")["spec"]["replicas"] == 3
    scale = json.loads(
        kubectl.run("get", "--raw", f"/apis/apps/v1/namespaces/{namespace}/deployments/web/scale").stdout
    )
    assert scale["spec"]["replicas"] == 3 and scale["status"]["selector"] == "app=web"

    job = kubectl.json("get", "jobs", "-n", namespace)["items"]
    assert [j["metadata"]["name"] for j in job] == ["once"] and job[0]["spec"]["backoffLimit"] == 6

    nodes = kubectl.json("get", "nodes")["items"]
    assert len(nodes) == 1 and int(nodes[0]["status"]["capacity"]["cpu"]) >= 1
    assert nodes[0]["status"]["conditions"][0]["type"] == "Ready"

    crd = kubectl.json("get", "crd", "rayclusters.ray.io")
    assert crd["spec"]["names"]["kind"] == "RayCluster"
    established = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert established == {"NamesAccepted": "True", "Established": "True"}
    names = kubectl.run("get", "crd", "-o", "name").stdout.split()
    assert "customresourcedefinition.apiextensions.k8s.io/workloads.kueue.x-k8s.io" in names


def test_a_users_own_crd_is_served_then_removed(kubectl: Any, cp: Any, namespace: str) -> None:
    group = f"{namespace}.example.com"
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "description": "What the widget should be.",
                                    "properties": {"size": {"type": "integer", "description": "How big."}},
                                }
                            },
                        }
                    },
                }
            ],
        },
    }
    kubectl.run("apply", "-f", "-", stdin=json.dumps(crd))
    widget = {
        "apiVersion": f"{group}/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": namespace},
    }
    kubectl.run("apply", "-f", "-", stdin=json.dumps({**widget, "spec": {"size": 3}}))
    assert kubectl.json("get", f"widgets.{group}", "w", "-n", namespace)["spec"] == {"size": 3}
    bad = {**widget, "metadata": {"name": "bad", "namespace": namespace}, "spec": {"size": "big"}}
    assert "spec.size in body must be of type integer" in kubectl.fails(
        ["create", "-f", "-"], json.dumps(bad)
    )
    assert "How big." in kubectl.run("explain", f"widgets.{group}.spec").stdout
    api_resources = kubectl.run("api-resources", "--api-group", group).stdout
    assert "widgets" in api_resources and "Widget" in api_resources

    kubectl.run("delete", "crd", f"widgets.{group}")
    assert f"widgets.{group}" not in cp.registry
    assert cp.store.count(f"widgets.{group}") == 0
    assert f"apis/{group}/v1" not in json.loads(kubectl.run("get", "--raw", "/openapi/v3").stdout)["paths"]


def test_a_crd_that_breaks_upstreams_rules_is_refused(kubectl: Any) -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.wrong.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Galactic",
            "names": {"plural": "gadgets", "kind": "Gadget"},
            "versions": [{"name": "v1", "served": True, "storage": False}],
        },
    }
    err = kubectl.fails(["create", "-f", "-"], json.dumps(crd))
    assert 'The CustomResourceDefinition "things.wrong.example.com" is invalid' in err
    assert (
        'metadata.name: Invalid value: "things.wrong.example.com": must be spec.names.plural+"."+spec.group'
        in err
    )
    assert 'spec.scope: Unsupported value: "Galactic"' in err
    assert "must have exactly one version marked as storage version" in err


@pytest.mark.parametrize(
    ("resource", "version", "namespaced", "kind"),
    [
        ("deployments", "apps/v1", "true", "Deployment"),
        ("jobs", "batch/v1", "true", "Job"),
        ("nodes", "v1", "false", "Node"),
        ("customresourcedefinitions", "apiextensions.k8s.io/v1", "false", "CustomResourceDefinition"),
        ("rayclusters", "ray.io/v1", "true", "RayCluster"),
    ],
)
def test_api_resources_lists_the_groups(
    kubectl: Any, resource: str, version: str, namespaced: str, kind: str
) -> None:
    rows = [line.split() for line in kubectl.run("api-resources").stdout.splitlines()[1:]]
    row = next(r for r in rows if r[0] == resource)
    assert row[-3:] == [version, namespaced, kind]


def test_apply_deletes_list_elements_by_upstreams_merge_keys(kubectl: Any, cp: Any, namespace: str) -> None:
    """kubectl computes apply's strategic patch from the served schema (every PodSpec field described):
    an element dropped from a list merged by key (hostAliases by ip, imagePullSecrets by name) is sent
    as a deletion, not as a shorter list the server would merge into the stored one."""
    deployment = textwrap.dedent(
        f"""\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: keyed, namespace: {namespace}}}
        spec:
          selector: {{matchLabels: {{app: keyed}}}}
          template:
            metadata: {{labels: {{app: keyed}}}}
            spec:
              hostAliases: [{{ip: 10.0.0.1, hostnames: [one]}}, {{ip: 10.0.0.2, hostnames: [two]}}]
              imagePullSecrets: [{{name: first}}, {{name: second}}]
              containers: [{{name: web, image: nginx}}]
        """
    )
    kubectl.run("apply", "-f", "-", stdin=deployment)
    trimmed = deployment.replace(", {ip: 10.0.0.2, hostnames: [two]}", "").replace(", {name: second}", "")
    applied = kubectl.run("apply", "-f", "-", stdin=trimmed)
    # With a field missing from the schema kubectl warns and falls back to the Go types compiled into it.
    assert "error calculating patch from openapi" not in applied.stderr
    spec = cp.store.get("deployments.apps", namespace, "keyed")["spec"]["template"]["spec"]
    assert spec["hostAliases"] == [{"ip": "10.0.0.1", "hostnames": ["one"]}]
    assert spec["imagePullSecrets"] == [{"name": "first"}]
