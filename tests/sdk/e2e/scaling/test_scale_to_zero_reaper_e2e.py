"""Reaper mode end to end: the agent runs as a real process (``python agent.py``, the ConfigMap's own
text) against the local control plane with real Ray heads, and scales the first of seed 000's clusters
to zero once its Ray job has ended and the idle period has passed; the second is admitted and becomes
ready with no other action; ``resume()`` queues the first again, behind the second.

Nothing here starts the agent: ``scale_to_zero(mode="reaper")`` creates its Deployment, and the plane's
kubelet runs that pod as a process (``python <configmap mount>/agent.py``, the ConfigMap's own text),
with the ServiceAccount token projected and only what the policy's Role grants (RBAC from the Role
and RoleBinding objects) — the path a real cluster takes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scaling_helpers import (
    assert_listed_as_scaled_to_zero,
    get_manifest,
    pods_of,
    seed_cluster,
    status_honest,
    wait_for,
)

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import ForbiddenError, IdleMode, ScaledToZeroError
from rayqueue_sdk.errors import NotFoundError
from rayqueue_sdk.kube.lookups import find_workload
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.manifests.scaling import IDLE_STATE_ANNOTATION

pytestmark = [pytest.mark.ray]


def agent_log(plane: LocalControlPlane, ns: str, admin: Any) -> str:
    """The reaper pod's log, read as kubectl would (``pods/{name}/log``)."""

    pods = KubeSession(admin).get_path(
        f"/api/v1/namespaces/{ns}/pods", query={"labelSelector": "app.kubernetes.io/managed-by"}
    )
    texts = []
    for pod in pods.get("items") or []:
        name = pod["metadata"]["name"]
        if name.startswith("first-raycluster-idle"):
            texts.append(KubeSession(admin).get_text(f"/api/v1/namespaces/{ns}/pods/{name}/log"))
    return "\n".join(texts)


def test_reaper_scales_the_idle_cluster_to_zero_and_the_next_one_runs(
    idle_plane: LocalControlPlane,
    restricted_ns: str,
    idle_admin: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """In a namespace that enforces Pod Security "restricted": the reaper's pod and the Ray pods pass it."""
    ns = restricted_ns
    first, second = (
        seed_cluster("first-raycluster", ns, idle_admin, pod_security="restricted"),
        seed_cluster("second-raycluster", ns, idle_admin, pod_security="restricted"),
    )
    first.apply()
    first.wait_ready(timeout=300)
    second.apply()
    wait_for(lambda: second.status().phase.value, lambda p: p == "queued")

    # the dry run reads GPU use as the reaper does (Ray's node view: nothing holds a GPU) and says so
    dry = first.scale_to_zero(idle_minutes=0.1, mode="reaper", dry_run=True)
    assert "GPU idle (Ray's node view at http" in dry, dry
    # a job keeps the cluster busy (submitted first: the agent starts within seconds of the policy)
    job_id = first.job_client.submit_job(entrypoint='python -c "import time; time.sleep(8)"')
    report = first.scale_to_zero(idle_minutes=0.1, mode="reaper", idle_signal="jobs", polling_seconds=1)
    assert "reaper mode" in report and "Deployment/first-raycluster-idle" in report
    dep = get_manifest(
        idle_admin,
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "first-raycluster-idle", "namespace": ns},
        },
    )
    assert (
        dep["metadata"]["ownerReferences"][0]["uid"] == first.to_dict().get("metadata", {}).get("uid")
        or dep["metadata"]["ownerReferences"][0]["name"] == "first-raycluster"
    )
    assert "reaper mode" in (first.status().idle_scale_to_zero or "")

    try:
        uid = first.status().workload  # the Workload's name
        assert uid
        rc_uid = get_manifest(
            idle_admin,
            {
                "apiVersion": "ray.io/v1",
                "kind": "RayCluster",
                "metadata": {"name": "first-raycluster", "namespace": ns},
            },
        )["metadata"]["uid"]

        def workload() -> dict:
            found = find_workload(KubeSession(idle_admin), owner_uid=rc_uid, namespace=ns)
            assert found is not None
            return found

        wait_for(workload, lambda w: w["spec"].get("active") is False, timeout=300)

        # "scaled to zero" is said once the pods are gone, not when the Workload is deactivated
        # (the job had ended before: a running job keeps the cluster alive)
        def state() -> dict:
            return dict(json.loads(workload()["metadata"]["annotations"][IDLE_STATE_ANNOTATION]))

        said = wait_for(state, lambda s: s["decision"].startswith("scaled to zero after"), timeout=120)
        assert said["decision"].endswith("pods gone, quota released") and said["scaledAt"]
        assert pods_of(idle_admin, ns, "first-raycluster") == []
        evicted = wait_for(
            workload,
            lambda w: any(
                c["type"] == "Evicted" and c["status"] == "True" for c in w["status"].get("conditions", [])
            ),
        )
        cond = {c["type"]: c for c in evicted["status"]["conditions"]}["Evicted"]
        assert cond["reason"] == "Deactivated"
        assert cond["message"] == "The workload is deactivated"

        # the second is admitted and becomes ready without any other action
        assert second.wait_ready(timeout=300).ready

        st = status_honest(first, idle_admin)
        assert st.scaled_to_zero and "scaled to zero" in (st.idle_scale_to_zero or "")
        assert_listed_as_scaled_to_zero(
            idle_plane, ns, idle_admin, capsys, "first-raycluster", IdleMode.REAPER
        )
        with pytest.raises(ScaledToZeroError, match=r"call cluster\.resume\(\)"):
            first.wait_ready(timeout=5)

        # editing the cluster (apply() with other pod sets) does not re-activate it (kueue#6719):
        # Kueue updates the Workload in place and keeps spec.active=false; only resume() asks for it
        before = workload()
        seed_cluster("first-raycluster", ns, idle_admin, pod_security="restricted", worker_memory=4).apply()
        edited = wait_for(
            workload,
            lambda w: (
                w["spec"]["podSets"][1]["template"]["spec"]["containers"][0]["resources"]["requests"][
                    "memory"
                ]
                == "4G"
            ),
        )
        assert edited["metadata"]["uid"] == before["metadata"]["uid"] and edited["spec"]["active"] is False
        assert status_honest(first, idle_admin).scaled_to_zero

        # resume: queued again, behind the second, and no longer "scaled to zero"
        first.resume()
        resumed = wait_for(lambda: first.status(), lambda s: s.phase.value == "queued")
        assert not resumed.scaled_to_zero
        assert workload()["spec"]["active"] is True
    finally:
        print(agent_log(idle_plane, ns, idle_admin)[-3000:])

    assert "JobStatus" not in str(job_id)
    removed = first.scale_to_zero(None)
    assert "Deployment/first-raycluster-idle" in removed and "ConfigMap/first-raycluster-idle" in removed
    with pytest.raises(NotFoundError):
        get_manifest(
            idle_admin,
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "first-raycluster-idle", "namespace": ns},
            },
        )
    assert first.status().idle_scale_to_zero is None
    second.down()
    first.down()


def test_a_user_who_may_not_create_a_deployment_leaves_nothing_half_made(
    idle_plane: LocalControlPlane, idle_ns: str, idle_admin: Any
) -> None:
    """The plane's data scientist may create ServiceAccounts, Roles and ConfigMaps but not Deployments:
    the 403 names the verb and the resource, and what was made before it is deleted."""
    ns = idle_ns
    idle_plane.apply(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "LocalQueue",
            "metadata": {"name": "nowhere", "namespace": ns},
            "spec": {"clusterQueue": "no-such-cluster-queue"},
        }
    )
    token = idle_plane.add_user(f"u-{ns}"[:60], [ns])
    from rayqueue_sdk.kube.client import build_api_client

    user = build_api_client(idle_plane.server, token=token, ca_cert_path=str(idle_plane.ca_cert_path))
    cluster = seed_cluster("ws", ns, user, queue="nowhere")  # stays queued: no Ray head starts
    cluster.apply()
    with pytest.raises(ForbiddenError) as info:
        cluster.scale_to_zero(idle_minutes=30, mode="reaper")
    assert info.value.verb == "create" and info.value.resource == "deployments.apps"
    for kind, api_version in (
        ("ServiceAccount", "v1"),
        ("Role", "rbac.authorization.k8s.io/v1"),
        ("RoleBinding", "rbac.authorization.k8s.io/v1"),
        ("ConfigMap", "v1"),
    ):
        with pytest.raises(NotFoundError):
            get_manifest(
                idle_admin,
                {"apiVersion": api_version, "kind": kind, "metadata": {"name": "ws-idle", "namespace": ns}},
            )
    assert cluster.status().idle_scale_to_zero is None
    cluster.down()
