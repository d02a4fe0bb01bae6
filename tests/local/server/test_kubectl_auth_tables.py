"""Issue 15 with the real kubectl: ``auth whoami``, ``auth can-i`` (and ``--list``), ``get`` with the
server's printer columns (``-o wide``, ``--show-labels``) and field validation messages.

kubectl talks to the session's plane through the kubeconfig the plane writes (``--kubeconfig``, never
``~/.kube/config``); scripts/test.sh installs Debian's ``kubernetes-client`` where the machine has no
kubectl.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

KUBECTL = shutil.which("kubectl")


def _kubectl(
    cp: Any, *args: str, context: str | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    assert KUBECTL, "kubectl is needed: scripts/test.sh installs Debian's kubernetes-client"
    command = [KUBECTL, "--kubeconfig", str(cp.kubeconfig_path), "--request-timeout", "30s"]
    if context is not None:
        command += ["--context", context]
    return subprocess.run(
        [*command, *args], capture_output=True, text=True, timeout=60, input=stdin, check=False
    )


@pytest.fixture(scope="module")
def erin(cp: Any) -> str:
    """A user limited to ``erin-ns``; returns their kubeconfig context."""
    for ns in ("erin-ns", "erin-other"):
        cp.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    cp.add_user("erin", ["erin-ns"])
    return "rayqueue-local-erin"


def test_auth_whoami(cp: Any, erin: str) -> None:
    admin = _kubectl(cp, "auth", "whoami")
    assert admin.returncode == 0, admin.stderr
    assert "Username    admin" in admin.stdout and "system:masters" in admin.stdout
    user = _kubectl(cp, "auth", "whoami", "-o", "json", context=erin)
    assert json.loads(user.stdout)["status"]["userInfo"] == {
        "username": "erin",
        "groups": ["system:authenticated"],
    }


def test_auth_can_i(cp: Any, erin: str) -> None:
    yes = _kubectl(cp, "auth", "can-i", "create", "rayclusters", "-n", "erin-ns", context=erin)
    assert (yes.returncode, yes.stdout.strip()) == (0, "yes")
    no = _kubectl(cp, "auth", "can-i", "create", "rayclusters", "-n", "erin-other", context=erin)
    assert (no.returncode, no.stdout.strip()) == (1, "no")
    admin = _kubectl(cp, "auth", "can-i", "delete", "clusterqueues")
    assert admin.stdout.strip() == "yes"


def test_auth_can_i_list(cp: Any, erin: str) -> None:
    listed = _kubectl(cp, "auth", "can-i", "--list", "-n", "erin-ns", context=erin)
    assert listed.returncode == 0, listed.stderr
    lines = {line.split()[0]: line for line in listed.stdout.splitlines()[1:] if not line.startswith(" ")}
    assert "create" in lines["rayclusters.ray.io"] and "create" not in lines["workloads.kueue.x-k8s.io"]
    assert "selfsubjectaccessreviews.authorization.k8s.io" in lines


@pytest.fixture(scope="module")
def printed_cluster(cp: Any, raycluster: Any) -> str:
    """A RayCluster with a status in ``print-ns``; returns the namespace."""
    cp.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "print-ns"}})
    body = raycluster("printed", labels={"team": "a"})
    body["metadata"]["namespace"] = "print-ns"
    obj = cp.store.create("rayclusters.ray.io", body)
    obj["status"] = {"state": "ready", "desiredWorkerReplicas": 3, "head": {"podIP": "10.1.2.3"}}
    cp.store.update_status("rayclusters.ray.io", obj)
    return "print-ns"


def _table(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()]


def test_get_rayclusters_shows_the_crd_columns(cp: Any, printed_cluster: str) -> None:
    out = _kubectl(cp, "get", "rayclusters", "-n", printed_cluster)
    assert out.returncode == 0, out.stderr
    header, row = out.stdout.splitlines()[:2]
    assert header.split()[:3] == ["NAME", "DESIRED", "WORKERS"] and "STATUS" in header and "AGE" in header
    assert "HEAD POD IP" not in header  # priority 1: only with -o wide
    assert row.split()[:3] == ["printed", "3", "ready"]


def test_get_wide_and_show_labels(cp: Any, printed_cluster: str) -> None:
    wide = _kubectl(cp, "get", "rayclusters", "-n", printed_cluster, "-o", "wide")
    assert "HEAD POD IP" in wide.stdout and "10.1.2.3" in wide.stdout
    labels = _kubectl(cp, "get", "rayclusters", "-n", printed_cluster, "--show-labels")
    header, row = labels.stdout.splitlines()[:2]
    assert header.split()[-1] == "LABELS" and row.split()[-1] == "team=a"


def test_get_kueue_and_built_in_columns(cp: Any, printed_cluster: str) -> None:
    cp.apply(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": "printed-cq"},
            "spec": {"namespaceSelector": {}, "cohortName": "team"},
        }
    )
    cqs = _table(_kubectl(cp, "get", "clusterqueues", "printed-cq").stdout)
    assert cqs[0][:3] == ["NAME", "COHORT", "PENDING"] and cqs[1][:2] == ["printed-cq", "team"]
    workloads = _kubectl(cp, "get", "workloads", "-A")
    assert workloads.returncode == 0, workloads.stderr
    cp.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": printed_cluster},
            "data": {"a": "1"},
        }
    )
    cms = _table(_kubectl(cp, "get", "configmaps", "-n", printed_cluster).stdout)
    assert cms[0] == ["NAME", "DATA", "AGE"] and cms[1][:2] == ["c", "1"]
    namespaces = _table(_kubectl(cp, "get", "namespace", printed_cluster).stdout)
    assert namespaces[0] == ["NAME", "STATUS", "AGE"] and namespaces[1][:2] == [printed_cluster, "Active"]


def test_strict_field_validation_through_kubectl(cp: Any, tmp_path: Path, raycluster: Any) -> None:
    body = raycluster("typo")
    body["spec"]["workerGroupSpecz"] = []
    manifest = tmp_path / "typo.json"
    manifest.write_text(json.dumps(body))
    path = "/apis/ray.io/v1/namespaces/default/rayclusters?fieldValidation=Strict"
    out = _kubectl(cp, "create", "--raw", path, "-f", str(manifest))
    assert out.returncode == 1
    assert 'strict decoding error: unknown field "spec.workerGroupSpecz"' in out.stderr
    assert _kubectl(cp, "create", "-f", str(manifest), "--validate=false").returncode == 0
    patched = _kubectl(cp, "patch", "raycluster", "typo", "--type", "merge", "-p", '{"spec": {"zzz": 1}}')
    assert 'Warning: unknown field "spec.zzz"' in patched.stderr
