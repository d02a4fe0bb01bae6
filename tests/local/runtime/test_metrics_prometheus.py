"""A real Prometheus (Debian's package) scraping the exporter, queried as KEDA and the SDK query it."""

from __future__ import annotations

import time

import pytest

from rayqueue_local.runtime.metrics import GpuMetricsExporter
from rayqueue_local.runtime.processes import session_pids
from rayqueue_local.runtime.prometheus import PrometheusServer

pytestmark = pytest.mark.prometheus


def pod(name: str, cluster: str, gpus: int) -> dict:
    return {
        "metadata": {"name": name, "namespace": "demo", "uid": name, "labels": {"ray.io/cluster": cluster}},
        "spec": {"containers": [{"name": "ray-worker", "resources": {"limits": {"nvidia.com/gpu": gpus}}}]},
        "status": {"phase": "Running"},
    }


@pytest.fixture(scope="module")
def scraped():
    pods = [
        pod("first-raycluster-head-abc", "first-raycluster", 1),
        pod("first-raycluster-gpu-worker-xyz", "first-raycluster", 1),
    ]
    exporter = GpuMetricsExporter(pods=lambda: pods)
    exporter.start()
    prom = PrometheusServer([exporter.target], scrape_interval=1.0)
    prom.start()
    try:
        prom.wait_ready()
        yield exporter, prom
    finally:
        left = prom.stop()
        exporter.stop()
    assert left == []


def poll(prom: PrometheusServer, query: str, expected, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    result = prom.query(query)
    while not expected(result) and time.monotonic() < deadline:
        time.sleep(0.5)
        result = prom.query(query)
    return result


def test_series_are_relabelled_as_through_a_service_monitor(scraped):
    _, prom = scraped
    series = poll(prom, "DCGM_FI_DEV_GPU_UTIL", lambda r: len(r) == 2)
    assert len(series) == 2
    labels = series[0]["metric"]
    assert labels["exported_namespace"] == "demo" and labels["exported_pod"].startswith("first-raycluster-")
    assert labels["exported_container"] == "ray-worker"
    assert labels["namespace"] == "gpu-operator" and labels["pod"] == "nvidia-dcgm-exporter-local"


def test_the_seed_query_follows_utilisation(scraped):
    exporter, prom = scraped
    seed_query = 'sum(rate(DCGM_FI_DEV_GPU_UTIL{exported_pod=~"first-raycluster.*"}[1m]))'
    # one series (KEDA's Prometheus scaler requires it) once rate() has two samples
    assert len(poll(prom, seed_query, lambda r: len(r) == 1)) == 1

    exporter.set_utilisation("demo", "first-raycluster", 90)
    busy = poll(
        prom,
        'sum(DCGM_FI_DEV_GPU_UTIL{exported_pod=~"first-raycluster.*"})',
        lambda r: r and float(r[0]["value"][1]) == 180,
    )
    assert float(busy[0]["value"][1]) == 180
    exporter.set_utilisation("demo", "first-raycluster", 0)
    idle = poll(
        prom,
        'max(DCGM_FI_DEV_GPU_UTIL{exported_namespace="demo"})',
        lambda r: r and float(r[0]["value"][1]) == 0,
    )
    assert float(idle[0]["value"][1]) == 0


def test_a_bad_query_reports_prometheus_error(scraped):
    _, prom = scraped
    with pytest.raises(RuntimeError, match="parse error"):
        prom.query("sum(")


def test_stop_leaves_nothing():
    prom = PrometheusServer(["127.0.0.1:1"])
    prom.start()
    prom.wait_ready(scraped=False)
    sid = prom.process.sid if prom.process else -1
    data_dir = prom.dir
    assert prom.stop() == []
    assert session_pids(sid) == [] and data_dir is not None and not data_dir.exists()
