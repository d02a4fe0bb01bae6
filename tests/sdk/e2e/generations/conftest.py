"""A control plane per Kueue API generation, for the SDK's end-to-end tests of each (issue 27, part 3).

``kueue_plane`` is module-scoped and parametrised: one plane serving ``v1beta2`` alone (Kueue 0.20,
kueue#14558), then one serving ``v1beta1`` alone (a release before 0.15), each with Kueue and KubeRay
with real local Ray heads (no KEDA, no Prometheus: reaper mode reads Ray's own view of jobs). Today's
``both`` is what every other e2e test runs against. Each test gets a namespace with two LocalQueues,
written over HTTP at the served version in that generation's own field names (``spec.cohort`` on
``v1beta1``, ``spec.cohortName`` on ``v1beta2``):

* ``team-queue`` on ClusterQueue ``cq-<ns>`` (cohort ``gen-<ns>``) with room for one small cluster;
* ``parked`` on ClusterQueue ``parked-<ns>`` with no quota: what goes there stays queued (no Ray head).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from generation_helpers import KUEUE, TEAM_QUOTA, Generation

from rayqueue_local import LocalControlPlane
from rayqueue_sdk.kube.client import set_current_client


@pytest.fixture(
    scope="module", params=["v1beta2", "v1beta1"], ids=["kueue-v1beta2-only", "kueue-v1beta1-only"]
)
def kueue_plane(request: pytest.FixtureRequest, crd_dir: Path) -> Iterator[Generation]:
    """A plane serving one Kueue API generation, its flavor and priority classes written at that version."""
    version = request.param
    cp = LocalControlPlane(
        crd_dir=crd_dir, kueue_api_versions=version, keda_enabled=False, prometheus_enabled=False
    )
    with cp:
        gen = Generation(version, cp)
        custom = gen.custom()
        av = gen.api_version
        custom.create_cluster_custom_object(
            KUEUE,
            version,
            "resourceflavors",
            {"apiVersion": av, "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}},
        )
        for name, value in (("high", 1000), ("low", 100)):
            custom.create_cluster_custom_object(
                KUEUE,
                version,
                "workloadpriorityclasses",
                {
                    "apiVersion": av,
                    "kind": "WorkloadPriorityClass",
                    "metadata": {"name": name},
                    "value": value,
                },
            )
        yield gen


@pytest.fixture
def gen_ns(kueue_plane: Generation, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace with ``team-queue`` and ``parked`` (see the module docstring)."""
    stem = re.sub(r"[^a-z0-9-]+", "-", request.node.originalname.lower()).strip("-")[:24].strip("-")
    ns = f"{stem}-{uuid.uuid4().hex[:5]}"
    gen, cp = kueue_plane, kueue_plane.plane
    cp.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    custom = gen.custom()
    v = gen.version
    custom.create_cluster_custom_object(
        KUEUE, v, "clusterqueues", gen.cluster_queue(f"cq-{ns}", TEAM_QUOTA, f"gen-{ns}")
    )
    custom.create_cluster_custom_object(
        KUEUE, v, "clusterqueues", gen.cluster_queue(f"parked-{ns}", {"cpu": 0, "memory": 0})
    )
    for lq, cq in (("team-queue", f"cq-{ns}"), ("parked", f"parked-{ns}")):
        custom.create_namespaced_custom_object(
            KUEUE,
            v,
            ns,
            "localqueues",
            {
                "apiVersion": gen.api_version,
                "kind": "LocalQueue",
                "metadata": {"name": lq, "namespace": ns},
                "spec": {"clusterQueue": cq},
            },
        )
    try:
        yield ns
    finally:
        cp.faults.clear()
        cp.store.delete("namespaces", None, ns)
        for cq in (f"cq-{ns}", f"parked-{ns}"):
            cp.store.delete(f"clusterqueues.{KUEUE}", None, cq)


@pytest.fixture
def gen_user(kueue_plane: Generation, gen_ns: str) -> Any:
    """A logged-in SDK client for a data scientist limited to ``gen_ns``."""
    from rayqueue_sdk import TokenAuthentication

    cp = kueue_plane.plane
    token = cp.add_user(f"user-{gen_ns}"[:60], [gen_ns])
    return TokenAuthentication(token=token, server=cp.server, ca_cert_path=str(cp.ca_cert_path)).api_client()


@pytest.fixture(autouse=True)
def _no_current_client(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No developer kubeconfig, no process-wide client left over."""
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    set_current_client(None)
    yield
    set_current_client(None)
