"""The usage report against the local plane and its real Prometheus (the scale-to-zero session plane).

A 2-GPU cluster is admitted; the plane's kube-state-metrics-style exporter publishes its pods' GPU requests
and the DCGM-style one their utilisation (pinned at 50 %), both scraped by the real ``prometheus`` binary.
``usage_report`` reads allocated GPU-hours from the pod requests and busy ones from DCGM; after a
scale-to-zero (``Workload.spec.active=false``) the reclaimed hours grow from the Workload's conditions;
Kueue's ClusterQueue usage metric gives the queue's GPU-hours; the CLI prints the same as JSON; a
``since`` beyond Prometheus' retention (2 h here) is said in the notes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from scaling_helpers import seed_cluster, wait_for

from rayqueue_local.apimachinery.time import parse_rfc3339
from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import usage_report
from rayqueue_sdk.cli.main import main
from rayqueue_sdk.kube.kinds import RAYCLUSTERS
from rayqueue_sdk.kube.lookups import find_workload, set_workload_active
from rayqueue_sdk.kube.session import KubeSession

pytestmark = pytest.mark.prometheus

#: Kueue's accumulated time is whole seconds (int32), so one admission may count up to 1 s short.
_TRUNCATION_S = 1.0


def _samples(cp: LocalControlPlane, promql: str) -> float:
    result = cp.prometheus.query(promql)
    return float(result[0]["value"][1]) if result else 0.0


def test_usage_report_from_prometheus_and_workload_conditions(
    idle_plane: LocalControlPlane, idle_ns: str, idle_admin: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    ns, cp = idle_ns, idle_plane
    assert cp.prometheus is not None, "the session plane runs a real Prometheus"
    cluster = seed_cluster("usage-ws", ns, idle_admin)
    cluster.apply()
    cp.gpu_metrics.set_utilisation(ns, "usage-ws", 50)
    try:
        # ten scrapes of both exporters for the cluster's pods
        wait_for(
            lambda: (
                _samples(
                    cp,
                    f'sum(count_over_time(kube_pod_container_resource_requests{{namespace="{ns}",'
                    'resource="nvidia_com_gpu"}[5m]))',
                ),
                _samples(cp, f'sum(count_over_time(DCGM_FI_DEV_GPU_UTIL{{exported_namespace="{ns}"}}[5m]))'),
            ),
            lambda counts: min(counts) >= 20,
            timeout=120,
        )
        report = usage_report(ns, since="15m", prometheus=cp.prometheus.url, client=idle_admin)
        row = next(r for r in report.rows if r.name == "usage-ws")
        assert row.queue == "user-queue"
        assert "prometheus:kube-state-metrics" in row.sources and "prometheus:dcgm" in row.sources
        assert row.gpu_hours_allocated > 0
        assert row.gpu_hours_busy is not None and 0 < row.gpu_hours_busy < row.gpu_hours_allocated
        assert row.gpu_hours_reclaimed == 0
        # Kueue's own metrics: the ClusterQueue behind user-queue held the cluster's 2 GPUs meanwhile
        ((cq, cq_hours),) = report.cluster_queues
        assert cq == f"cq-{ns}" and cq_hours > 0
        # the card's sparkline reads the same DCGM series
        assert 50.0 in cluster.gpu_utilisation(5, prometheus=cp.prometheus.url)

        # scale to zero: Kueue evicts (Deactivated); the reclaimed hours count from then
        uid = KubeSession(idle_admin).get(RAYCLUSTERS, name="usage-ws", namespace=ns)["metadata"]["uid"]
        set_workload_active(KubeSession(idle_admin), owner_uid=uid, active=False, namespace=ns)
        wait_for(
            lambda: find_workload(KubeSession(idle_admin), owner_uid=uid, namespace=ns),
            lambda wl: any(
                c["type"] == "Evicted" and c["status"] == "True" for c in wl["status"].get("conditions", [])
            ),
            timeout=60,
        )
        later = wait_for(
            lambda: usage_report(ns, since="15m", prometheus=cp.prometheus.url, client=idle_admin),
            lambda r: next(x for x in r.rows if x.name == "usage-ws").gpu_hours_reclaimed > 0,
            timeout=30,
        )
        assert (
            next(x for x in later.rows if x.name == "usage-ws").gpu_hours_allocated >= row.gpu_hours_allocated
        )

        # the CLI, for pipelines
        capsys.readouterr()
        code = main(
            [
                "usage",
                "-n",
                ns,
                "--since",
                "15m",
                "--json",
                "--prometheus",
                cp.prometheus.url,
                "--kubeconfig",
                str(cp.kubeconfig_path),
            ]
        )
        doc = json.loads(capsys.readouterr().out)
        assert code == 0
        (cli_row,) = [r for r in doc["rows"] if r["name"] == "usage-ws"]
        assert cli_row["gpu_hours_allocated"] > 0 and cli_row["gpu_hours_busy"] > 0
        assert cli_row["gpu_hours_reclaimed"] > 0 and doc["sources"][0] == "prometheus"

        # older than Prometheus keeps: said, not silently short
        old = usage_report(ns, since="1d", prometheus=cp.prometheus.url, client=idle_admin)
        assert any("older than what Prometheus keeps" in n for n in old.notes)
        assert not any("older than" in n for n in report.notes)
    finally:
        cp.gpu_metrics.clear_utilisation(ns)
        cluster.down()


def _condition(wl: dict[str, Any], ctype: str) -> dict[str, Any]:
    return next((c for c in wl["status"].get("conditions", []) if c["type"] == ctype), {})


def test_without_prometheus_a_cluster_scaled_to_zero_keeps_the_gpu_hours_it_held(
    idle_plane: LocalControlPlane, idle_ns: str, idle_admin: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The 2-GPU cluster runs, is scaled to zero (``spec.active=false``), and Kueue releases it: the report
    read from the Workload alone (no Prometheus) counts the 2 GPUs from the admission to the release,
    which the plane's Kueue records as ``accumulatedPastExecutionTimeSeconds`` (before, this was 0.0)."""
    monkeypatch.delenv("RAYQUEUE_PROMETHEUS_URL", raising=False)
    ns = idle_ns
    session = KubeSession(idle_admin)
    cluster = seed_cluster("held-ws", ns, idle_admin)
    cluster.apply()
    try:
        cluster.wait_ready(timeout=300)  # it ran: its Ray head and worker are up on the 2 GPUs
        uid = session.get(RAYCLUSTERS, name="held-ws", namespace=ns)["metadata"]["uid"]
        running = wait_for(
            lambda: find_workload(session, owner_uid=uid, namespace=ns),
            lambda wl: bool(wl) and _condition(wl, "Admitted").get("status") == "True",
            timeout=120,
        )
        admitted_at = parse_rfc3339(_condition(running, "Admitted")["lastTransitionTime"]) or 0.0
        set_workload_active(session, owner_uid=uid, active=False, namespace=ns)
        released = wait_for(
            lambda: find_workload(session, owner_uid=uid, namespace=ns),
            lambda wl: _condition(wl, "Admitted").get("status") == "False",
            timeout=120,
        )
        released_at = parse_rfc3339(_condition(released, "Admitted")["lastTransitionTime"]) or 0.0
        held_s = int(released_at - admitted_at)
        assert held_s >= 1, "the cluster held its GPUs while Ray started"
        assert released["status"]["accumulatedPastExecutionTimeSeconds"] == held_s
        assert _condition(released, "Evicted")["reason"] == "Deactivated"

        report = usage_report(ns, since="1h", client=idle_admin)
        assert report.sources == ("workload-conditions",)
        (row,) = [r for r in report.rows if r.name == "held-ws"]
        assert row.gpu_hours_allocated == pytest.approx(2 * held_s / 3600)
        assert (
            0 <= 2 * (released_at - admitted_at) / 3600 - row.gpu_hours_allocated <= 2 * _TRUNCATION_S / 3600
        )
        assert row.gpu_hours_reclaimed > 0 and row.cluster_queue == f"cq-{ns}"
        assert not any("does not record" in n for n in report.notes)
    finally:
        cluster.down()
