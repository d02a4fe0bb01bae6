"""Missing data is busy, in both modes (issue 26): a busy cluster whose GPU exporter stops is not scaled
down, and a cluster queued for longer than its initial cooldown is not deactivated.

Seed 000 in the SDK's words on the session plane: the first cluster runs a job that was given a GPU and
computes on it (the emulated dcgm-exporter reads it busy); the second waits in the queue (no pods, so no
series). Both get a policy with a 6 s idle period (the first no initial cooldown, the second 3 s), then the
exporter is stopped: its series go stale and the default query returns *nothing*.

- KEDA (``ignoreNullValues: "false"``): the scaler fails at every poll (the ScaledObject's trigger
  health counts the failures), and KEDA changes no replicas on an error without a fallback: after more
  failed polls than the idle period and the window last, both Workloads are still active.
- The reaper (the same query): each poll reads nothing, which is *unknown*, so its idle clock restarts
  at every poll (its state annotation says so) and nothing is deactivated; the queued cluster is not
  running, so its clock never starts.
- Once the exporter is back and the job stops, the reaper scales the first cluster down: the policies
  could act, they did not because the data was missing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from scaling_helpers import get_manifest, seed_cluster, wait_for

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk.config.idle import PrometheusSource
from rayqueue_sdk.kube.lookups import find_workload
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.manifests.scaling import IDLE_STATE_ANNOTATION
from rayqueue_sdk.scaling.agent import parse_time

pytestmark = [pytest.mark.ray, pytest.mark.prometheus, pytest.mark.slow]

#: a job that computes (a busy loop: the stand-in for kernels on the GPU Ray gave it)
COMPUTE = 'python -c "import time; e = time.time() + 600; any(time.time() > e for _ in iter(int, 1))"'
IDLE_S, WINDOW = 6, "3s"


@pytest.fixture
def exporter_restored(idle_plane: LocalControlPlane) -> Iterator[Any]:
    """The session plane's exporter; started again whatever the test did to it."""
    yield idle_plane.gpu_metrics
    idle_plane.gpu_metrics.start()


def _uid(client: Any, ns: str, name: str) -> str:
    ref = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": name, "namespace": ns}}
    return str(get_manifest(client, ref)["metadata"]["uid"])


def _scaled_object(client: Any, ns: str, cluster: str) -> dict[str, Any]:
    ref = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": f"{cluster}-idle", "namespace": ns},
    }
    return dict(get_manifest(client, ref))


def _failures(so: dict[str, Any]) -> int:
    health = (so.get("status") or {}).get("health") or {}
    return int((health.get("s0-prometheus") or {}).get("numberOfFailures") or 0)


def test_missing_data_is_busy_in_both_modes(
    idle_plane: LocalControlPlane, idle_ns: str, idle_admin: Any, exporter_restored: Any
) -> None:
    ns, prom, exporter = idle_ns, idle_plane.prometheus, exporter_restored
    first = seed_cluster("first-raycluster", ns, idle_admin)
    second = seed_cluster("second-raycluster", ns, idle_admin)
    first.apply()
    first.wait_ready(timeout=300)
    second.apply()
    wait_for(lambda: second.status().phase.value, lambda p: p == "queued")
    uids = {c.name: _uid(idle_admin, ns, c.name) for c in (first, second)}

    def workload(name: str) -> dict[str, Any]:
        found = find_workload(KubeSession(idle_admin), owner_uid=uids[name], namespace=ns)
        assert found is not None
        return found

    source = PrometheusSource(url=prom.url, window=WINDOW, auth="bearer")
    # a job given a GPU that computes: the default query (both series) reads the first cluster busy
    first.job_client.submit_job(entrypoint=COMPUTE, entrypoint_num_gpus=1)
    selector = f'exported_namespace="{ns}",exported_pod=~"first-raycluster-.*"'
    busy_query = f"max(max_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{selector}}}[{WINDOW}]))"
    wait_for(lambda: prom.query(busy_query), lambda r: bool(r) and float(r[0]["value"][1]) > 0, timeout=120)

    # -- KEDA mode, the exporter stopped. The busy cluster has no initial cooldown: KEDA's very first poll
    # decides, and it comes within a second of the first busy sample (KEDA asks for its query at the
    # whole second before the poll: the SDK's KEDA query reaches up to the poll, issue 34)
    for cluster, cooldown in ((first, 0.0), (second, 0.05)):
        cluster.scale_to_zero(
            idle_minutes=IDLE_S / 60,
            mode="keda",
            prometheus=source,
            polling_seconds=1,
            initial_cooldown_minutes=cooldown,
        )
    so = wait_for(
        lambda: _scaled_object(idle_admin, ns, first.name), lambda o: "lastActiveTime" in o["status"]
    )
    assert so["spec"]["triggers"][0]["metadata"]["ignoreNullValues"] == "false"
    exporter.stop()
    # more failed polls (1 s apart) than the idle period, the window and the initial cooldown last
    enough = IDLE_S + 3 + 6
    for cluster in (first, second):
        failing = wait_for(
            lambda c=cluster: _scaled_object(idle_admin, ns, c.name), lambda o: _failures(o) >= enough, 120
        )
        # every poll failed (the emulated KEDA re-checks a ScaledObject that is not Ready between
        # polls, as upstream requeues it, so the Ready condition itself flips: read the trigger health)
        assert failing["status"]["health"]["s0-prometheus"]["status"] == "Failure"
    assert workload(first.name)["spec"].get("active", True) is True
    assert workload(second.name)["spec"].get("active", True) is True
    assert second.status().phase.value == "queued"
    # never, not even at the first poll: KEDA deactivated nothing
    events = idle_plane.store.list("events", ns)
    assert [e["message"] for e in events if e["reason"] == "KEDAScaleTargetDeactivated"] == []
    assert any(e["reason"] == "KEDAScalerFailed" for e in events)  # the events are there to be read

    # -- reaper mode, the same query, the exporter still stopped
    switched = time.time()
    for cluster, cooldown in ((first, 0.0), (second, 0.05)):
        cluster.scale_to_zero(
            idle_minutes=IDLE_S / 60,
            mode="reaper",
            prometheus=PrometheusSource(url=prom.url, window=WINDOW),
            polling_seconds=1,
            initial_cooldown_minutes=cooldown,
        )

    def state(name: str) -> dict[str, Any]:
        text = (workload(name)["metadata"].get("annotations") or {}).get(IDLE_STATE_ANNOTATION)
        return dict(json.loads(text)) if text else {}

    # the agent keeps reading nothing: its clock restarts at every poll, well past the idle period
    unknown = wait_for(
        lambda: state(first.name),
        lambda s: (
            "no GPU series" in str(s.get("decision"))
            and (parse_time(s.get("idleSince")) or 0) >= switched + IDLE_S + 3 + 3
        ),
        timeout=120,
    )
    assert unknown["decision"].startswith("signal unavailable")
    assert workload(first.name)["spec"].get("active", True) is True
    assert "queued" in str(state(second.name).get("decision"))
    assert workload(second.name)["spec"].get("active", True) is True

    # -- the exporter back, the job stopped: now the reaper does scale the idle cluster down
    exporter.start()
    for job in first.job_client.list_jobs():
        if str(job.status).endswith("RUNNING"):
            first.job_client.stop_job(job.submission_id)
    wait_for(lambda: workload(first.name)["spec"].get("active", True), lambda a: a is False, timeout=120)
    for cluster in (second, first):
        cluster.down()
