"""Helpers for the scale-to-zero end-to-end tests: a polling wait, seed 000's cluster in the SDK's words."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import Cluster, ClusterConfiguration, IdleMode, IdleState, list_clusters
from rayqueue_sdk.cli.main import main
from rayqueue_sdk.kube.kinds import PODS, kind_of
from rayqueue_sdk.kube.session import KubeSession


def wait_for(read: Callable[[], Any], ok: Callable[[Any], bool], timeout: float = 240.0) -> Any:
    """Poll ``read()`` until ``ok(value)``; returns the value, or fails with the last one seen."""
    deadline = time.monotonic() + timeout
    value = read()
    while not ok(value):
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting; last value: {value!r}")
        time.sleep(0.5)
        value = read()
    return value


def seed_cluster(
    name: str,
    ns: str,
    client: Any,
    queue: str = "user-queue",
    *,
    pod_security: str | None = None,
    worker_memory: int = 8,
) -> Cluster:
    """One of seed 000's 2-GPU clusters (a 1-GPU head and one 1-GPU worker), in the SDK's words;
    ``pod_security="restricted"`` for a namespace that enforces it."""
    return Cluster(
        ClusterConfiguration(
            name=name,
            namespace=ns,
            head_cpu_requests=2,
            head_cpu_limits=2,
            head_memory_requests=8,
            head_memory_limits=8,
            head_extended_resource_requests={"nvidia.com/gpu": 1},
            worker_extended_resource_requests={"nvidia.com/gpu": 1},
            num_workers=1,
            worker_cpu_requests=2,
            worker_cpu_limits=2,
            worker_memory_requests=worker_memory,
            worker_memory_limits=worker_memory,
            local_queue=queue,
            pod_security=pod_security,
        ),
        client=client,
    )


def assert_listed_as_scaled_to_zero(
    plane: LocalControlPlane,
    ns: str,
    admin: Any,
    capsys: pytest.CaptureFixture[str],
    name: str,
    mode: IdleMode,
) -> None:
    """``list_clusters()``, ``rayqueue cluster list`` (table and ``--json``) and ``rayqueue cluster
    status --json`` all show cluster ``name`` as scaled to zero by a ``mode`` policy."""
    listed = {st.name: st for st in list_clusters(ns, admin)}
    st = listed[name]
    assert st.scaled_to_zero and st.idle is not None, st
    assert st.idle.state is IdleState.SCALED_TO_ZERO and st.idle.mode is mode
    assert st.explanation.startswith("scaled to zero") and "cluster.resume()" in st.explanation
    others = [s for s in listed.values() if s.name != name]
    assert all(not s.scaled_to_zero for s in others)

    base = ["--kubeconfig", str(plane.kubeconfig_path), "--context", "rayqueue-local", "-n", ns]
    capsys.readouterr()
    assert main(["cluster", "list", "--json", *base]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    row = rows[name]
    assert row["scaled_to_zero"] is True and row["phase"] == "deactivated"
    assert (row["idle"]["mode"], row["idle"]["state"]) == (mode.value, "scaled to zero")
    assert row["idle"]["releases_at"] is None and row["idle"]["text"].startswith(
        f"{mode} mode: scaled to zero"
    )
    assert main(["cluster", "list", *base]) == 0
    assert f"{mode}: scaled to zero" in capsys.readouterr().out
    assert main(["cluster", "status", name, "--json", *base]) == 0
    assert json.loads(capsys.readouterr().out)["idle"]["state"] == "scaled to zero"


def pods_of(admin: Any, ns: str, cluster: str) -> list[str]:
    """The names of the cluster's pods (KubeRay's label ``ray.io/cluster``)."""
    found = KubeSession(admin).list(PODS, namespace=ns, label_selector=f"ray.io/cluster={cluster}")
    return [p["metadata"]["name"] for p in found]


def get_manifest(admin: Any, ref: dict[str, Any]) -> dict[str, Any]:
    """The stored object named like ``ref`` (its ``apiVersion``, ``kind`` and ``metadata`` name and
    namespace)."""
    meta = ref["metadata"]
    return KubeSession(admin).get(kind_of(ref), name=meta["name"], namespace=meta["namespace"])


def status_honest(cluster: Cluster, admin: Any) -> Any:
    """``cluster.status()``, checked: "scaled to zero" (and "quota released") is said only once the
    cluster's pods are gone (read after the status: pods do not come back without ``resume()``)."""
    st = cluster.status()
    line = st.idle_scale_to_zero or ""
    if st.scaled_to_zero or "scaled to zero" in line or "quota released" in line:
        left = pods_of(admin, cluster.namespace, cluster.name)
        assert not left, f"{line!r} while pods remain: {left}"
    return st
