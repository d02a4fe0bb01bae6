"""``/apis`` in the aggregator's order, and the known fields of the newer built-in kinds (Deployment,
Job, Node, CustomResourceDefinition, ClusterRole, ClusterRoleBinding) under ``fieldValidation=Strict``."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from kubernetes import client

from rayqueue_local.registry.discoverydocs import GROUP_PRIORITIES


def test_apis_lists_groups_by_aggregator_priority(api_client: Any) -> None:
    names = [g.name for g in client.ApisApi(api_client).get_api_versions().groups]
    builtin = [n for n in names if n in GROUP_PRIORITIES]
    custom = [n for n in names if n not in GROUP_PRIORITIES]
    # built-in groups first, highest groupPriorityMinimum first (apps 17800 ... apiextensions 16700)
    assert builtin == sorted(builtin, key=lambda n: -GROUP_PRIORITIES[n])
    assert names[: len(builtin)] == builtin
    assert builtin[:4] == ["apps", "authentication.k8s.io", "authorization.k8s.io", "batch"]
    assert builtin.index("rbac.authorization.k8s.io") < builtin.index("apiextensions.k8s.io")
    # CRD groups (priority 1000) by APIService name: v1.ray.io < v1alpha1.keda.sh < v1beta1.kueue.x-k8s.io
    assert custom.index("ray.io") < custom.index("keda.sh") < custom.index("kueue.x-k8s.io")


@pytest.mark.parametrize(
    ("path", "body", "unknown"),
    [
        (
            "/apis/apps/v1/namespaces/{ns}/deployments",
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "d"},
                "spec": {
                    "selector": {"matchLabels": {"a": "b"}},
                    "replica": 2,
                    "template": {
                        "metadata": {"labels": {"a": "b"}},
                        "spec": {"containers": [{"name": "c", "image": "x"}]},
                    },
                },
            },
            "spec.replica",
        ),
        (
            "/apis/batch/v1/namespaces/{ns}/jobs",
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "j"},
                "spec": {
                    "template": {
                        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "imag": "x"}]}
                    }
                },
            },
            "spec.template.spec.containers[0].imag",
        ),
        (
            "/api/v1/nodes",
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": "n-{suffix}"},
                "spec": {"unschedulabe": True},
            },
            "spec.unschedulabe",
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": "cr-{suffix}"},
                "rules": [{"apiGroups": [""], "resources": ["pods"], "verb": ["get"]}],
            },
            "rules[0].verb",
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "crb-{suffix}"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "nam": "x"},
            },
            "roleRef.nam",
        ),
        (
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": "things.example.com"},
                "spec": {"group": "example.com", "scop": "Namespaced"},
            },
            "spec.scop",
        ),
    ],
)
def test_strict_knows_the_fields_of_the_newer_kinds(
    raw: Any, namespace: str, path: str, body: dict[str, Any], unknown: str
) -> None:
    suffix = uuid.uuid4().hex[:6]
    text = json.dumps(body).replace("{suffix}", suffix)
    status, answer, _ = raw.request("POST", path.format(ns=namespace) + "?fieldValidation=Strict", text)
    assert status == 400, answer
    assert answer["message"].endswith(f'strict decoding error: unknown field "{unknown}"'), answer["message"]
