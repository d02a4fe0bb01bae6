"""Real kubectl against pods the local kubelet runs: ``kubectl logs`` (-f, --tail, -c, --timestamps),
and what ``kubectl exec`` / ``kubectl port-forward`` print.

The suite's shared ``cp`` runs no controllers, so this module starts one plane of its own with only
the pod controllers (no Ray: it starts in about a second) and points kubectl at it.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rayqueue_local import LocalControlPlane
from rayqueue_local.controllers.pods import pod_controllers

POD = """
apiVersion: v1
kind: Pod
metadata: {name: talker, namespace: default}
spec:
  restartPolicy: Never
  initContainers:
  - {name: setup, image: busybox, command: [sh, -c, "echo preparing"]}
  containers:
  - {name: main, image: busybox, command: [sh, -c, "for i in 1 2 3 4 5; do echo line $i; sleep 0.4; done"]}
  - {name: side, image: busybox, command: [sh, -c, "echo side car; sleep 300"]}
"""


@pytest.fixture(scope="module")
def plane() -> Iterator[LocalControlPlane]:
    cp = LocalControlPlane(
        crd_dir=os.environ.get("RAYQUEUE_CRDS_DIR") or None, controllers=lambda p: pod_controllers(p)
    )
    with cp:
        yield cp


@pytest.fixture(scope="module")
def kubectl_pods(plane: LocalControlPlane, kubectl: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The suite's kubectl (found with ``shutil.which``), pointed at this module's plane."""
    cache = tmp_path_factory.mktemp("kubectl-logs-cache")
    return dataclasses.replace(kubectl, kubeconfig=Path(plane.kubeconfig_path), cache_dir=cache)


def _running(kubectl: Any) -> Any:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        pod = kubectl.json("get", "pod", "talker")
        if (pod.get("status") or {}).get("phase") == "Running":
            return pod
        time.sleep(0.2)
    pytest.fail(f"pod talker is not running: {pod.get('status')}")


def test_kubectl_logs(kubectl_pods: Any) -> None:
    kubectl = kubectl_pods
    kubectl.run("apply", "-f", "-", stdin=POD)
    _running(kubectl)
    followed = kubectl.run("logs", "talker", "-c", "main", "-f").stdout
    assert followed == "".join(f"line {i}\n" for i in range(1, 6))
    assert kubectl.run("logs", "talker", "-c", "main", "--tail=2").stdout == "line 4\nline 5\n"
    assert kubectl.run("logs", "talker", "-c", "setup").stdout == "preparing\n"
    stamped = kubectl.run("logs", "talker", "-c", "side", "--timestamps").stdout
    stamp, _, text = stamped.partition(" ")
    assert (
        text == "side car\n" and stamp.endswith("Z") and len(stamp) == len("2026-01-02T03:04:05.123456789Z")
    )
    default = kubectl.run("logs", "talker")  # kubectl picks the first container and says so
    assert default.stdout.startswith("line 1\n")
    assert 'Defaulted container "main" out of: main, side, setup (init)' in default.stderr
    assert "container nope is not valid for pod talker" in kubectl.fails(["logs", "talker", "-c", "nope"])
    assert 'previous terminated container "main" in pod "talker" not found' in kubectl.fails(
        ["logs", "talker", "-c", "main", "--previous"]
    )


def test_kubectl_exec_and_port_forward_say_why_they_are_not_served(kubectl_pods: Any) -> None:
    kubectl = kubectl_pods
    kubectl.run("apply", "-f", "-", stdin=POD)
    _running(kubectl)
    exec_error = kubectl.fails(["exec", "talker", "-c", "side", "--", "ls"])
    assert exec_error.startswith(
        "Error from server (BadRequest): pods/exec is not served by the local control plane"
    )
    forward_error = kubectl.fails(["port-forward", "pod/talker", "18080:80"])
    assert "pods/portforward is not served by the local control plane" in forward_error
    assert "connect to them directly" in forward_error
