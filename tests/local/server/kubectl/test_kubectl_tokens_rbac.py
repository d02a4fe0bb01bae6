"""The real kubectl: ``kubectl create token``, ``kubectl create role|rolebinding|clusterrole|
clusterrolebinding`` (protobuf bodies) and ``kubectl auth can-i`` / ``whoami`` as a ServiceAccount whose
permissions come from a RoleBinding (issue 15 items 2 and 7)."""

from __future__ import annotations

import uuid
from typing import Any


def test_create_token_and_can_i_against_a_role_binding(kubectl: Any, cp: Any, namespace: str) -> None:
    assert (
        "serviceaccount/bot created" in kubectl.run("create", "serviceaccount", "bot", "-n", namespace).stdout
    )
    token = kubectl.run("create", "token", "bot", "-n", namespace, "--duration", "20m").stdout.strip()
    assert token and "\n" not in token
    as_bot = ("--token", token, "-n", namespace)
    whoami = kubectl.run("auth", "whoami", *as_bot).stdout
    assert f"system:serviceaccount:{namespace}:bot" in whoami
    assert f"system:serviceaccounts:{namespace}" in whoami
    can_i = ("auth", "can-i", "patch", "workloads.kueue.x-k8s.io", *as_bot)
    assert kubectl.run(*can_i, check=False).stdout.strip() == "no"

    out = kubectl.run(
        "create", "role", "reaper", "-n", namespace, "--verb=get,patch", "--resource=workloads.kueue.x-k8s.io"
    ).stdout
    assert "role.rbac.authorization.k8s.io/reaper created" in out
    out = kubectl.run(
        "create",
        "rolebinding",
        "reaper",
        "-n",
        namespace,
        "--role=reaper",
        f"--serviceaccount={namespace}:bot",
    ).stdout
    assert "rolebinding.rbac.authorization.k8s.io/reaper created" in out
    assert kubectl.run(*can_i).stdout.strip() == "yes"
    assert (
        kubectl.run(
            "auth", "can-i", "delete", "workloads.kueue.x-k8s.io", *as_bot, check=False
        ).stdout.strip()
        == "no"
    )
    listed = kubectl.run("auth", "can-i", "--list", *as_bot).stdout
    assert any(
        line.split()[0] == "workloads.kueue.x-k8s.io" and "[get patch]" in line
        for line in listed.splitlines()
        if line
    )
    wide = kubectl.run("get", "rolebinding", "reaper", "-n", namespace, "-o", "wide").stdout
    assert "Role/reaper" in wide and f"{namespace}/bot" in wide
    err = kubectl.fails(["get", "workloads.kueue.x-k8s.io", *as_bot])
    assert f'User "system:serviceaccount:{namespace}:bot" cannot list resource "workloads"' in err

    # A ClusterRole bound to the service accounts of the namespace, at the cluster scope.
    role = f"cq-{uuid.uuid4().hex[:6]}"
    kubectl.run("create", "clusterrole", role, "--verb=list", "--resource=clusterqueues.kueue.x-k8s.io")
    kubectl.run(
        "create",
        "clusterrolebinding",
        role,
        f"--clusterrole={role}",
        f"--group=system:serviceaccounts:{namespace}",
    )
    try:
        assert (
            kubectl.run("auth", "can-i", "list", "clusterqueues.kueue.x-k8s.io", *as_bot).stdout.strip()
            == "yes"
        )
        assert kubectl.run("get", "clusterqueues", *as_bot).returncode == 0
    finally:
        kubectl.run("delete", "clusterrolebinding", role)
    assert (
        kubectl.run(
            "auth", "can-i", "list", "clusterqueues.kueue.x-k8s.io", *as_bot, check=False
        ).stdout.strip()
        == "no"
    )


def test_create_token_errors_in_upstreams_words(kubectl: Any, namespace: str) -> None:
    err = kubectl.fails(["create", "token", "nope", "-n", namespace])
    assert 'serviceaccounts "nope" not found' in err
    kubectl.run("create", "serviceaccount", "short", "-n", namespace)
    err = kubectl.fails(["create", "token", "short", "-n", namespace, "--duration", "1m"])
    assert "spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes" in err
    kubectl.run("delete", "serviceaccount", "short", "-n", namespace)
