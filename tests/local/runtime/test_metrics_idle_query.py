"""The SDK's default idle query against a real Prometheus scraping the emulated dcgm-exporter: busy if
either GR_ENGINE_ACTIVE or GPU_UTIL says busy, per MIG instance, and *nothing* (never 0) once the
exporter is gone, which KEDA's scaler with ``ignoreNullValues: "false"`` turns into an error."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from rayqueue_local.controllers.keda.prometheus_trigger import PrometheusTrigger, TriggerError
from rayqueue_local.runtime.metrics import GpuMetricsExporter
from rayqueue_local.runtime.prometheus import PrometheusServer
from rayqueue_sdk.config.idle import IdlePolicy, PrometheusSource
from rayqueue_sdk.manifests.scaling import keda_objects, pod_regex

pytestmark = pytest.mark.prometheus


def pod(name: str, ns: str, cluster: str, gpus: int = 1) -> dict:
    return {
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": f"{ns}-{name}",
            "labels": {"ray.io/cluster": cluster},
        },
        "spec": {"containers": [{"name": "ray-head", "resources": {"limits": {"nvidia.com/gpu": gpus}}}]},
        "status": {"phase": "Running"},
    }


LATE: list[dict] = []
TURNED: set[str] = set()  # the clusters of namespace "turns" whose work computes (a test turns them on)


@pytest.fixture(scope="module")
def exporters() -> Iterator[tuple[dict[str, GpuMetricsExporter], PrometheusServer]]:
    """Three exporters (whole GPUs; MIG 1g.5gb; GR_ENGINE_ACTIVE stuck at 0, dcgm-exporter#662) behind
    one Prometheus, each serving its own namespace's clusters (two of them, on one GPU each)."""
    exps = {
        "whole": GpuMetricsExporter(
            pods=lambda: [pod("a-head-1", "whole", "a"), pod("b-head-1", "whole", "b")]
        ),
        "mig": GpuMetricsExporter(
            pods=lambda: [pod("a-head-1", "mig", "a"), pod("b-head-1", "mig", "b")], mig_profile="1g.5gb"
        ),
        "late": GpuMetricsExporter(pods=lambda: LATE),  # pods appear when a test adds them
        "stuck": GpuMetricsExporter(
            pods=lambda: [pod("a-head-1", "stuck", "a"), pod("b-head-1", "stuck", "b")],
            gr_engine_reads_zero=True,
        ),
        "turns": GpuMetricsExporter(pods=lambda: [pod("c-head-1", "turns", "c")]),
    }
    for exp in exps.values():
        exp.set_activity_source(lambda ns, cluster: cluster == "a")  # cluster a computes, b does not
    exps["turns"].set_activity_source(lambda ns, cluster: cluster in TURNED)
    for exp in exps.values():
        exp.start()
    prom = PrometheusServer([e.target for e in exps.values()], scrape_interval=1.0)
    prom.start()
    try:
        prom.wait_ready()
        yield exps, prom
    finally:
        prom.stop()
        for exp in exps.values():
            exp.stop()


def query(prom: PrometheusServer, ns: str, cluster: str, window: str = "5s") -> str:
    pol = IdlePolicy(
        idle_minutes=1,
        mode="keda",
        prometheus={"url": prom.url, "window": window},
        initial_cooldown_minutes=0,
    )
    so = keda_objects(pol, cluster=cluster, namespace=ns, groups=[], workload="w")[-1]
    return str(so["spec"]["triggers"][0]["metadata"]["query"])


def poll(read: Callable[[], Any], ok: Callable[[Any], bool], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    value = read()
    while not ok(value) and time.monotonic() < deadline:
        time.sleep(0.5)
        value = read()
    return value


def value(result: list[dict[str, Any]]) -> float | None:
    return float(result[0]["value"][1]) if len(result) == 1 else None


@pytest.mark.parametrize("ns", ["whole", "mig", "stuck"])
def test_the_default_query_reads_the_cluster_that_computes_busy_and_the_other_idle(
    exporters, ns: str
) -> None:
    _, prom = exporters
    busy = poll(lambda: prom.query(query(prom, ns, "a")), lambda r: (value(r) or 0) > 0)
    assert 75 <= (value(busy) or 0) <= 100  # GPU_UTIL is a percentage, GR_ENGINE_ACTIVE x 100 too
    idle = poll(lambda: prom.query(query(prom, ns, "b")), lambda r: value(r) == 0.0)
    assert value(idle) == 0.0  # one series, as KEDA requires, reading 0: idle


def test_mig_instances_carry_dcgm_exporters_labels_and_no_gpu_util(exporters) -> None:
    _, prom = exporters
    gr = poll(
        lambda: prom.query('DCGM_FI_PROF_GR_ENGINE_ACTIVE{exported_namespace="mig"}'), lambda r: len(r) == 2
    )
    labels = sorted((s["metric"] for s in gr), key=lambda m: m["exported_pod"])
    assert [(m["GPU_I_PROFILE"], m["GPU_I_ID"]) for m in labels] == [("1g.5gb", "1"), ("1g.5gb", "2")]
    # two instances of one physical GPU: the parent's index and UUID, as dcgm-exporter labels them
    assert labels[0]["gpu"] == labels[1]["gpu"] == "0" and labels[0]["UUID"] == labels[1]["UUID"]
    assert prom.query('DCGM_FI_DEV_GPU_UTIL{exported_namespace="mig"}') == []  # NVIDIA/DCGM#80
    whole = prom.query('DCGM_FI_DEV_GPU_UTIL{exported_namespace="whole"}')
    assert whole and all("GPU_I_ID" not in s["metric"] for s in whole)


def test_gr_engine_reading_zero_under_load_is_caught_by_gpu_util(exporters) -> None:
    _, prom = exporters
    gr = poll(
        lambda: prom.query(
            'max(DCGM_FI_PROF_GR_ENGINE_ACTIVE{exported_namespace="stuck",exported_pod="a-head-1"})'
        ),
        lambda r: value(r) is not None,
    )
    assert value(gr) == 0.0  # dcgm-exporter#662: the profiling signal alone says idle
    busy = poll(lambda: prom.query(query(prom, "stuck", "a")), lambda r: (value(r) or 0) > 0)
    assert (value(busy) or 0) >= 80


def test_a_stopped_exporter_reads_nothing_and_kedas_scaler_fails_instead_of_reading_zero(exporters) -> None:
    exps, prom = exporters
    q = query(prom, "whole", "b", window="2s")
    assert value(poll(lambda: prom.query(q), lambda r: value(r) == 0.0)) == 0.0
    exps["whole"].stop()
    try:
        assert poll(lambda: prom.query(q), lambda r: r == []) == []  # no series: not 0
        meta = {"serverAddress": prom.url, "query": q, "threshold": "100", "ignoreNullValues": "false"}
        trigger = PrometheusTrigger.from_metadata(meta, {})

        def read() -> float | str:
            try:
                return trigger.value()
            except TriggerError as err:
                return str(err)

        # KEDA's scaler (its query time is whole seconds) fails: KEDA keeps the replicas it has
        assert "target may be lost, the result is empty" in str(poll(read, lambda v: isinstance(v, str)))
    finally:
        exps["whole"].start()
    # back on the same port: the series return
    assert value(poll(lambda: prom.query(q), lambda r: value(r) == 0.0)) == 0.0


def test_kedas_query_reads_new_series_busy_for_the_initial_cooldown_then_the_real_use(exporters) -> None:
    """A cluster admitted after waiting in the queue: its series appear idle, and KEDA's query reads
    them busy until they are as old as the initial cooldown (4 s here), then reads the real use (0)."""
    _, prom = exporters
    pol = IdlePolicy(
        idle_minutes=1,
        mode="keda",
        prometheus={"url": prom.url, "window": "2s"},
        initial_cooldown_minutes=4 / 60,
    )
    so = keda_objects(pol, cluster="b", namespace="late", groups=[], workload="w")[-1]
    q = str(so["spec"]["triggers"][0]["metadata"]["query"])
    assert prom.query(q) == []  # queued: no pods, no series, nothing (KEDA's scaler fails: busy)
    LATE.append(pod("b-head-1", "late", "b"))  # admitted: the pods run, idle
    appeared = time.time()
    assert value(poll(lambda: prom.query(q), lambda r: value(r) == 100.0)) == 100.0
    assert value(poll(lambda: prom.query(q), lambda r: value(r) == 0.0)) == 0.0
    assert time.time() - appeared >= 4 - 1  # not before the series were the initial cooldown old


def test_kedas_first_poll_after_the_work_starts_reads_it_busy(exporters) -> None:
    """Issue 34's first-poll 0. KEDA asks Prometheus for its query at the poll's time cut to the whole
    second (``time=`` in RFC 3339, no fraction): a poll made just after a cluster's first busy sample
    asks about a moment *before* that sample. A plain ``[W]`` window there holds only the idle samples
    before the work, reads 0, and a fresh ScaledObject with ``initialCooldownPeriod: 0`` deactivated the
    busy cluster at once (the fail-safe e2e test, 2 of 2 runs). KEDA's query reaches up to the poll.
    Everything is read after the fact at fixed times, from the samples Prometheus holds: no timing."""
    _, prom = exporters
    raw = 'DCGM_FI_DEV_GPU_UTIL{exported_namespace="turns"}[1m]'

    def samples() -> list[tuple[float, float]]:
        found = prom.query(raw)
        return [(float(t), float(v)) for t, v in found[0]["values"]] if found else []

    keda_q = query(prom, "turns", "c", window="3s")  # no initial cooldown, as the fail-safe test has it
    plain_q = PrometheusSource(url=prom.url, window="3s").render_query(
        pods=pod_regex("c", []), namespace="turns"
    )
    trigger = PrometheusTrigger.from_metadata(
        {"serverAddress": prom.url, "query": keda_q, "threshold": "100", "ignoreNullValues": "false"}, {}
    )

    def at(q: str, when: float) -> float | None:
        return value(prom.query(q, at=when))

    assert len(poll(samples, lambda s: len(s) >= 4)) >= 4  # the cluster runs idle: its series read 0
    TURNED.add("c")  # its work starts computing
    try:
        busy = poll(samples, lambda s: any(v > 0 for _, v in s))
        first = min(t for t, v in busy if v > 0)
        assert all(v == 0 for t, v in busy if t < first) and len([t for t, _ in busy if t < first]) >= 3
        # a poll at the first busy sample (or up to the next whole second) asks about this time:
        asked = math.floor(first)
        poll_time = datetime.fromtimestamp(first, UTC)
        assert f"&time={datetime.fromtimestamp(asked, UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}" in trigger.url(
            poll_time
        )
        if asked < first:  # (a scrape on a whole second leaves no poll in the gap: nothing to show)
            assert at(plain_q, asked) == 0.0  # the cause: the plain window ends before the busy sample
        assert trigger.value(poll_time) >= 80 and trigger.is_active(trigger.value(poll_time))
    finally:
        TURNED.discard("c")
    # and it reads idle exactly when the plain window does: at the first whole second whose window
    # no longer holds the last busy sample, both read 0 (once Prometheus has the samples after it)
    idle = poll(samples, lambda s: any(v == 0 and t > max(u for u, w in s if w > 0) + 5 for t, v in s))
    last = max(t for t, v in idle if v > 0)
    gone = math.ceil(last + 3)  # KEDA's first time whose plain window (gone - 3, gone] misses it
    assert at(plain_q, gone) == 0.0 and at(keda_q, gone) == 0.0
    assert at(plain_q, gone - 1) == at(keda_q, gone - 1) and (at(keda_q, gone - 1) or 0) >= 80
