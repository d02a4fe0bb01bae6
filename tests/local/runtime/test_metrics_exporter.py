"""The DCGM-style exporter: series per emulated GPU, labels as dcgm-exporter, values follow activity."""

from __future__ import annotations

import re
import urllib.request

import pytest

from rayqueue_local.runtime.metrics import GpuMetricsExporter


def pod(name: str, cluster: str | None, gpus: int, *, ns: str = "demo", phase: str = "Running") -> dict:
    labels = {"ray.io/cluster": cluster} if cluster else {}
    return {
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}", "labels": labels},
        "spec": {
            "containers": [
                {"name": "ray-head", "resources": {"limits": {"nvidia.com/gpu": str(gpus)} if gpus else {}}}
            ]
        },
        "status": {"phase": phase},
    }


SERIES = re.compile(r"^(\w+)\{(.*)\} (\S+)$")


def parse(text: str) -> list[tuple[str, dict[str, str], float]]:
    out = []
    for line in text.splitlines():
        m = SERIES.match(line)
        if m:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
            out.append((m.group(1), labels, float(m.group(3))))
    return out


def util(exp: GpuMetricsExporter) -> dict[str, list[float]]:
    values: dict[str, list[float]] = {}
    for metric, labels, value in parse(exp.render()):
        if metric == "DCGM_FI_DEV_GPU_UTIL":
            values.setdefault(labels["pod"], []).append(value)
    return values


def test_one_series_per_gpu_of_running_gpu_pods_only():
    pods = [
        pod("a-head-1", "a", 1),
        pod("a-wg-worker-1", "a", 2),
        pod("b-head-1", "b", 0),
        pod("c-head-1", "c", 1, phase="Pending"),
    ]
    exp = GpuMetricsExporter(pods=lambda: pods)
    series = [s for s in parse(exp.render()) if s[0] == "DCGM_FI_DEV_GPU_UTIL"]
    assert sorted(s[1]["pod"] for s in series) == ["a-head-1", "a-wg-worker-1", "a-wg-worker-1"]
    first = series[0][1]
    assert set(first) == {
        "gpu",
        "UUID",
        "pci_bus_id",
        "device",
        "modelName",
        "Hostname",
        "container",
        "namespace",
        "pod",
    }
    assert first["UUID"].startswith("GPU-") and first["namespace"] == "demo"
    assert len({s[1]["gpu"] for s in series}) == 3 and len({s[1]["UUID"] for s in series}) == 3
    names = {s[0] for s in parse(exp.render())}
    for metric in (
        "DCGM_FI_DEV_FB_USED",
        "DCGM_FI_DEV_FB_FREE",
        "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
    ):
        assert metric in names


def test_gpu_indices_are_stable_while_a_pod_lives():
    pods = [pod("a-head-1", "a", 1), pod("b-head-1", "b", 1)]
    exp = GpuMetricsExporter(pods=lambda: pods)
    before = {d.pod: d.index for d in exp.devices()}
    pods.pop(0)
    pods.append(pod("c-head-1", "c", 1))
    after = {d.pod: d.index for d in exp.devices()}
    assert after["b-head-1"] == before["b-head-1"]
    assert after["c-head-1"] == before["a-head-1"]  # the freed device is reused


def test_utilisation_follows_activity_and_overrides():
    busy = {("demo", "a")}
    exp = GpuMetricsExporter(pods=lambda: [pod("a-head-1", "a", 2), pod("b-head-1", "b", 1)])
    exp.set_activity_source(lambda ns, cluster: (ns, cluster) in busy)
    values = util(exp)
    assert all(80 <= v <= 100 for v in values["a-head-1"]) and values["b-head-1"] == [0.0]

    busy.clear()
    assert util(exp)["a-head-1"] == [0.0, 0.0]

    exp.set_utilisation("demo", "b", 55)
    assert util(exp)["b-head-1"] == [55.0]
    exp.clear_utilisation("demo", "b")
    assert util(exp)["b-head-1"] == [0.0]
    with pytest.raises(ValueError):
        exp.set_utilisation("demo", "b", 101)


def test_memory_and_power_are_consistent_with_utilisation():
    exp = GpuMetricsExporter(pods=lambda: [pod("a-head-1", "a", 1)])
    exp.set_utilisation("demo", "a", 100)
    busy = {m: v for m, _, v in parse(exp.render())}
    exp.set_utilisation("demo", "a", 0)
    idle = {m: v for m, _, v in parse(exp.render())}
    assert busy["DCGM_FI_DEV_FB_USED"] + busy["DCGM_FI_DEV_FB_FREE"] == idle["DCGM_FI_DEV_FB_FREE"]
    assert idle["DCGM_FI_DEV_FB_USED"] == 0 and busy["DCGM_FI_DEV_FB_USED"] > 0
    assert busy["DCGM_FI_DEV_POWER_USAGE"] > idle["DCGM_FI_DEV_POWER_USAGE"]
    assert busy["DCGM_FI_PROF_GR_ENGINE_ACTIVE"] > 0.9 and idle["DCGM_FI_PROF_GR_ENGINE_ACTIVE"] == 0


def test_served_over_http_and_scraped_label_style():
    exp = GpuMetricsExporter(pods=lambda: [pod("a-head-1", "a", 1)], label_style="scraped")
    exp.start()
    try:
        with urllib.request.urlopen(exp.url + "/metrics", timeout=5) as resp:
            assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            text = resp.read().decode()
    finally:
        exp.stop()
    assert "# TYPE DCGM_FI_DEV_GPU_UTIL gauge" in text
    assert 'exported_pod="a-head-1"' in text and 'exported_namespace="demo"' in text
