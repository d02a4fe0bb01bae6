"""KEDA mode end to end (seed 000 in the SDK's words): Kueue serves ``workloads/scale``, KEDA's
ScaledObject queries a real Prometheus scraping the DCGM-style exporter, and real Ray heads run.

The quota (2 GPUs) fits one of seed 000's clusters; the second waits. A short Ray job keeps the first's
GPUs busy; once it ends and the idle period has passed, KEDA scales the first cluster's Workload to 0
(Kueue: Evicted, reason ``Deactivated``, "The workload is deactivated"), the quota goes back, and the
second is admitted and becomes ready with no manual step. ``first.resume()`` queues it again behind the
second and recreates its ScaledObject, so the resumed cluster gets the whole period again: KEDA's
``lastActiveTime`` of the old object is old and the metric still 0, so without that the first poll would
scale the cluster straight back to zero [E pkg/scaling/executor/scale_scaledobjects.go].

Short periods keep the test short: idle period 6 s (``idle_minutes=0.1``: KEDA's ``cooldownPeriod``
2 s plus the 4 s of the 5 s query window beyond a poll), ``polling_seconds=1``, and an initial
cooldown of 20 s (the period a new or resumed ScaledObject grants before its first use; KEDA counts it
from the object's creation, since it cannot see Kueue's admission).
"""

from __future__ import annotations

import re
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
from rayqueue_sdk import IdleMode, ScaledToZeroError
from rayqueue_sdk.config.idle import PrometheusSource
from rayqueue_sdk.kube.lookups import find_workload
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.manifests.scaling import RESUMED_ANNOTATION
from rayqueue_sdk.scaling.agent import parse_time

pytestmark = [pytest.mark.ray, pytest.mark.prometheus]

INITIAL_COOLDOWN_S = 20


def conditions(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


def test_keda_scales_the_idle_cluster_to_zero_and_resume_gets_the_whole_period(
    idle_plane: LocalControlPlane, restricted_ns: str, idle_admin: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """In a namespace that enforces Pod Security "restricted" (the Ray pods pass it; KEDA adds none)."""
    ns, prom = restricted_ns, idle_plane.prometheus
    first = seed_cluster("first-raycluster", ns, idle_admin, pod_security="restricted")
    second = seed_cluster("second-raycluster", ns, idle_admin, pod_security="restricted")
    first.apply()
    first.wait_ready(timeout=300)
    second.apply()
    wait_for(lambda: second.status().phase.value, lambda p: p == "queued")

    # a short job given a GPU computes on it (a busy loop, the stand-in for kernels: the emulated
    # dcgm-exporter reads a sleep as idle); wait until Prometheus has seen it
    job_id = first.job_client.submit_job(
        entrypoint='python -c "import time; e = time.time() + 10; '
        'any(time.time() > e for _ in iter(int, 1))"',
        entrypoint_num_gpus=1,
    )
    busy = f'max(DCGM_FI_DEV_GPU_UTIL{{exported_namespace="{ns}",exported_pod=~"first-raycluster-.*"}})'
    wait_for(lambda: prom.query(busy), lambda r: bool(r) and float(r[0]["value"][1]) > 0, timeout=60)

    # the dry run reads GPU use as the policy would (its Prometheus query) and says what it read
    plain = PrometheusSource(url=prom.url, window="5s")
    dry = first.scale_to_zero(idle_minutes=0.1, mode="keda", prometheus=plain, dry_run=True)
    assert re.search(rf"GPU (busy|idle) \(Prometheus {re.escape(prom.url)}\)", dry), dry
    source = PrometheusSource(url=prom.url, window="5s", auth="bearer")
    assert "ServiceAccount token" in first.scale_to_zero(0.1, mode="keda", prometheus=source, dry_run=True)
    report = first.scale_to_zero(
        idle_minutes=0.1,
        mode="keda",
        prometheus=source,
        polling_seconds=1,
        initial_cooldown_minutes=INITIAL_COOLDOWN_S / 60,
    )
    assert "keda mode" in report and "ScaledObject/first-raycluster-idle" in report
    so_ref = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "first-raycluster-idle", "namespace": ns},
    }
    rc_uid = (
        first.to_dict()["metadata"].get("uid")
        or get_manifest(
            idle_admin,
            {
                "apiVersion": "ray.io/v1",
                "kind": "RayCluster",
                "metadata": {"name": first.name, "namespace": ns},
            },
        )["metadata"]["uid"]
    )

    def workload() -> dict[str, Any]:
        found = find_workload(KubeSession(idle_admin), owner_uid=rc_uid, namespace=ns)
        assert found is not None
        return found

    so = get_manifest(idle_admin, so_ref)
    assert so["spec"]["scaleTargetRef"]["name"] == workload()["metadata"]["name"]
    assert so["metadata"]["ownerReferences"][0]["name"] == "first-raycluster"
    assert "exported_pod=~" in so["spec"]["triggers"][0]["metadata"]["query"]
    active = wait_for(lambda: get_manifest(idle_admin, so_ref), lambda o: "lastActiveTime" in o["status"])
    assert conditions(active)["Active"]["reason"] == "ScalerActive"
    running = first.status()
    assert "keda mode" in (running.idle_scale_to_zero or "")
    assert running.idle is not None and running.idle.mode is IdleMode.KEDA
    # KEDA's state read in the read path: while its last poll read use (Active) nothing is released and
    # no release time is promised; once it reads idle, lastActiveTime + cooldownPeriod is the release
    if running.idle.decision == "busy":
        assert running.idle.releases_at is None, running.idle
    else:
        assert running.idle.releases_at is not None, running.idle

    # the job ends, the GPUs go idle, and after the idle period KEDA gives the quota back
    evicted = wait_for(
        workload,
        lambda w: (
            w["spec"].get("active") is False and conditions(w).get("Evicted", {}).get("status") == "True"
        ),
        timeout=180,
    )
    cond = conditions(evicted)["Evicted"]
    assert (cond["reason"], cond["message"]) == ("Deactivated", "The workload is deactivated")
    info = first.job_client.get_job_info(job_id)
    assert str(info.status) in ("SUCCEEDED", "JobStatus.SUCCEEDED")  # a running job kept it alive
    assert parse_time(cond["lastTransitionTime"]) >= info.end_time / 1000 - 1

    # "scaled to zero" only once the first's pods are gone (checked at every read)
    wait_for(lambda: status_honest(first, idle_admin), lambda s: s.scaled_to_zero, timeout=120)
    assert pods_of(idle_admin, ns, "first-raycluster") == []
    # the second is admitted and becomes ready without any manual step
    assert second.wait_ready(timeout=300).ready
    st = status_honest(first, idle_admin)
    assert st.scaled_to_zero
    assert "scaled to zero at" in (st.idle_scale_to_zero or "") and "quota released" in (
        st.idle_scale_to_zero or ""
    )
    assert "scale to zero: keda mode" in repr(st) and "cluster.resume()" in repr(st)
    assert_listed_as_scaled_to_zero(idle_plane, ns, idle_admin, capsys, "first-raycluster", IdleMode.KEDA)
    with pytest.raises(ScaledToZeroError, match=r"call cluster\.resume\(\)"):
        first.wait_ready(timeout=5)
    with pytest.raises(ScaledToZeroError, match="scaled to zero"):
        first.cluster_uri()

    # resume: the ScaledObject is recreated (no lastActiveTime), and the first waits behind the second
    old_uid = get_manifest(idle_admin, so_ref)["metadata"]["uid"]
    first.resume()
    fresh = get_manifest(idle_admin, so_ref)
    assert fresh["metadata"]["uid"] != old_uid
    assert RESUMED_ANNOTATION in fresh["metadata"]["annotations"]
    assert "lastActiveTime" not in (fresh.get("status") or {})
    created = parse_time(fresh["metadata"]["creationTimestamp"])
    assert created is not None
    resumed = wait_for(lambda: first.status(), lambda s: s.phase.value == "queued")
    assert not resumed.scaled_to_zero and workload()["spec"]["active"] is True

    # the second goes; the first is admitted again, and is scaled down only after the whole period
    second.down()
    wait_for(workload, lambda w: conditions(w).get("Admitted", {}).get("status") == "True", timeout=60)
    again = wait_for(
        workload,
        lambda w: (
            w["spec"].get("active") is False and conditions(w).get("Evicted", {}).get("status") == "True"
        ),
        timeout=180,
    )
    # KEDA's clock for a fresh object: initialCooldownPeriod from its creation (times are whole seconds)
    assert parse_time(conditions(again)["Evicted"]["lastTransitionTime"]) >= created + INITIAL_COOLDOWN_S - 1
    assert first.status().scaled_to_zero

    removed = first.scale_to_zero(None)
    assert "ScaledObject/first-raycluster-idle" in removed
    assert first.status().idle_scale_to_zero is None
    first.down()
