"""The cluster browser's buttons ask the server what the user may do (SelfSubjectAccessReview): a data
scientist's token may delete RayClusters but not patch Kueue Workloads, so Deactivate and Resume are
disabled with a tooltip naming the verb and resource; the admin gets every button. The answers agree with
``kubectl auth can-i`` against the same server. Down deletes only after its confirmation."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import Cluster, ClusterConfiguration, ClusterPhase, TokenAuthentication, list_clusters
from rayqueue_sdk.cluster.view import cluster_permissions, view_clusters
from rayqueue_sdk.kube.access import can_i
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.manifests import kueue as k


@pytest.fixture
def team(widget_plane: LocalControlPlane, request: pytest.FixtureRequest) -> Iterator[str]:
    """A namespace with LocalQueue ``parked`` on a ClusterQueue without quota (its clusters stay queued)
    and two clusters in it."""
    stem = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower()).strip("-")[:30].strip("-")
    ns = f"{stem}-{uuid.uuid4().hex[:5]}"
    widget_plane.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    zero = {"cpu": 0, "memory": 0, "nvidia.com/gpu": 0}
    widget_plane.apply(
        [
            k.resource_flavor("default-flavor"),
            k.cluster_queue(
                f"parked-{ns}",
                namespace_selector={"matchLabels": {"kubernetes.io/metadata.name": ns}},
                resource_groups=[k.resource_group(k.flavor_quotas("default-flavor", zero))],
            ),
            k.local_queue("parked", ns, f"parked-{ns}"),
        ]
    )
    config = {"namespace": ns, "local_queue": "parked", "num_workers": 1}
    widget_plane.apply([Cluster(ClusterConfiguration(name=n, **config)).to_dict() for n in ("alpha", "beta")])
    try:
        yield ns
    finally:
        widget_plane.store.delete("namespaces", None, ns)


def queued_by_kueue(api: Any, ns: str) -> None:
    """Wait until Kueue has made both clusters' Workloads and queued them (polled; no timing asserted)."""
    deadline = time.monotonic() + 120
    while sum(s.position is not None for s in list_clusters(ns, api)) < 2:
        assert time.monotonic() < deadline, "Kueue did not queue the clusters"
        time.sleep(0.1)


def user_client(plane: LocalControlPlane, ns: str) -> tuple[str, Any]:
    token = plane.add_user(f"ds-{ns}"[:60], [ns])
    auth = TokenAuthentication(token=token, server=plane.server, ca_cert_path=str(plane.ca_cert_path))
    return token, auth.api_client()


def kubectl_can_i(plane: LocalControlPlane, context: str, ns: str, verb: str, resource: str) -> bool:
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl is missing: scripts/test.sh installs Debian's kubernetes-client"
    done = subprocess.run(
        [kubectl, "--kubeconfig", str(plane.kubeconfig_path), "--context", context]
        + ["auth", "can-i", verb, resource, "-n", ns],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.strip() in ("yes", "no"), done.stdout + done.stderr
    return done.stdout.strip() == "yes"


def test_a_data_scientist_gets_down_but_not_deactivate(widget_plane: LocalControlPlane, team: str) -> None:
    token, api = user_client(widget_plane, team)
    denied = cluster_permissions(KubeSession(api), namespace=team)
    assert denied["down"] is None
    assert (
        denied["deactivate"]
        == denied["resume"]
        == (f"may not patch workloads.kueue.x-k8s.io in namespace '{team}'")
    )
    context = f"rayqueue-local-ds-{team}"[:75]
    assert kubectl_can_i(widget_plane, context, team, "delete", "rayclusters.ray.io") is True
    assert kubectl_can_i(widget_plane, context, team, "patch", "workloads.kueue.x-k8s.io") is False
    assert (
        can_i(KubeSession(api), "delete", "rayclusters", group="ray.io", namespace="kube-system").allowed
        is False
    )

    browser = view_clusters(team, client=api)
    assert list(browser.picker.options) == ["alpha", "beta"]
    for button in (browser.deactivate_button, browser.resume_button):
        assert button.disabled is True
        assert "may not patch workloads.kueue.x-k8s.io" in button.tooltip
    assert browser.down_button.disabled is False and "may not" not in browser.down_button.tooltip

    browser.picker.value = "beta"
    browser.down_button.click()  # a first click only asks
    assert browser.confirm.layout.display == "flex" and f"{team}/beta" in browser.confirm_text.value
    assert [c.name for c in list_clusters(team, api)] == ["alpha", "beta"]
    browser.cancel_button.click()
    assert browser.confirm.layout.display == "none"
    assert [c.name for c in list_clusters(team, api)] == ["alpha", "beta"]
    browser.down_button.click()
    browser.confirm_button.click()
    assert [c.name for c in list_clusters(team, api)] == ["alpha"]
    assert list(browser.picker.options) == ["alpha"] and "down: " in browser.message.value
    shown = browser.live.bundle()
    assert "beta" not in shown["text/plain"] and "alpha" in shown["text/html"]
    assert token not in shown["text/plain"] + shown["text/html"]


def test_the_admin_gets_every_button(widget_plane: LocalControlPlane, team: str) -> None:
    admin = widget_plane.api_client()
    assert cluster_permissions(KubeSession(admin), namespace=team) == {
        "down": None,
        "deactivate": None,
        "resume": None,
    }
    assert kubectl_can_i(widget_plane, "rayqueue-local", team, "patch", "workloads.kueue.x-k8s.io") is True
    browser = view_clusters(team, client=admin)
    assert not any(
        b.disabled for b in (browser.down_button, browser.deactivate_button, browser.resume_button)
    )
    browser.picker.value = "alpha"
    browser.deactivate_button.click()
    # the table is read again after the click; Kueue may take a moment to write the eviction it reads
    # (up to a minute: on 2 busy cores a full CI run once needed more than the 10 s this allowed)
    for _ in range(600):
        if {s.name: s.phase for s in browser.statuses}["alpha"] is ClusterPhase.DEACTIVATED:
            break
        time.sleep(0.1)
        browser.refresh()
    assert {s.name: s.phase for s in browser.statuses}["alpha"] is ClusterPhase.DEACTIVATED
    assert (
        "alpha" in browser.live.bundle()["text/plain"]
        and "deactivated" in browser.live.bundle()["text/plain"]
    )
