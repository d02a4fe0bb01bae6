"""The usage report over a 30-day window against the local control plane (playing Kueue and KubeRay), and a
stand-in Prometheus that records what it is sent.

Three Workloads as Kueue leaves them: a cluster scaled to zero after 90 minutes (``Admitted=False``,
``Evicted=True/Deactivated``, ``accumulatedPastExecutionTimeSeconds``), a RayJob whose generated
RayCluster carries the queue label and the pods Prometheus sees, and a cluster in another namespace
preempted after an hour. The job is one row; the scaled-to-zero cluster keeps its 3 GPU-hours without
Prometheus; the roll-ups by namespace, LocalQueue and ClusterQueue add up to the same totals; the CLI
prints them as CSV and JSON; a Prometheus source with ``auth="bearer"`` gets the credentials' token and
one without gets none.
"""

from __future__ import annotations

import csv
import io
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from sdk_helpers import NS, OTHER_NS

from rayqueue_local.controlplane import LocalControlPlane
from rayqueue_sdk import usage_report
from rayqueue_sdk.admission.rollup import ROLLUPS, rollup
from rayqueue_sdk.admission.usage import step_for
from rayqueue_sdk.cli.main import main
from rayqueue_sdk.config.idle import PrometheusSource

UNTIL = datetime(2026, 3, 31, tzinfo=UTC)
SINCE = UNTIL - timedelta(days=30)
GPU_SAMPLES = 10  # the stand-in Prometheus' samples of the job's 2 GPUs (and of 1 busy GPU)


def stamp(days: float) -> str:
    """``days`` after the window's start, as Kubernetes writes it."""
    return (SINCE + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


def cond(type_: str, status: str, reason: str, days: float) -> dict[str, Any]:
    return {
        "type": type_,
        "status": status,
        "reason": reason,
        "message": reason,
        "lastTransitionTime": stamp(days),
    }


def gpu_workload(
    ns: str, name: str, owner_kind: str, owner: str, queue: str, status: dict[str, Any]
) -> dict[str, Any]:
    """A v1beta2 Workload of 2 GPUs owned by ``owner`` (whose uid :data:`UIDS` holds), with ``status``."""
    pod = {
        "spec": {
            "containers": [
                {
                    "name": "ray",
                    "image": "rayproject/ray:2.40.0",
                    "resources": {"requests": {"nvidia.com/gpu": "1"}},
                }
            ]
        }
    }
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": name,
            "namespace": ns,
            "ownerReferences": [
                {
                    "apiVersion": "ray.io/v1",
                    "kind": owner_kind,
                    "name": owner,
                    "uid": UIDS[owner],
                    "controller": True,
                }
            ],
        },
        "spec": {
            "queueName": queue,
            "active": True,
            "podSets": [{"name": "head", "count": 2, "template": pod}],
        },
        "status": status,
    }


def generated_cluster() -> dict[str, Any]:
    """The RayCluster KubeRay made for RayJob ``train`` (labels copied from the job)."""
    container = {"name": "ray", "image": "rayproject/ray:2.40.0"}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {
            "name": "train-x7k2p",
            "namespace": NS,
            "labels": {"kueue.x-k8s.io/queue-name": "team-q"},
            "ownerReferences": [
                {
                    "apiVersion": "ray.io/v1",
                    "kind": "RayJob",
                    "name": "train",
                    "uid": UIDS["train"],
                    "controller": True,
                }
            ],
        },
        "spec": {"headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [container]}}}},
    }


def local_queue(name: str, ns: str, cq: str) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"clusterQueue": cq},
    }


UIDS: dict[str, str] = {}


def owner(kind: str, name: str, ns: str) -> dict[str, Any]:
    """A RayCluster or RayJob for the Workloads to belong to (the plane collects orphans)."""
    container = {"name": "ray", "image": "rayproject/ray:2.40.0"}
    cluster = {"headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [container]}}}}
    spec = cluster if kind == "RayCluster" else {"entrypoint": "python train.py", "rayClusterSpec": cluster}
    return {
        "apiVersion": "ray.io/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
    }


@pytest.fixture(scope="module", autouse=True)
def history(plane: LocalControlPlane) -> None:
    for stored in plane.apply(
        [owner("RayCluster", "ws", NS), owner("RayJob", "train", NS), owner("RayCluster", "etl", OTHER_NS)]
    ):
        UIDS[stored["metadata"]["name"]] = stored["metadata"]["uid"]
    plane.apply(
        [
            local_queue("team-q", NS, "cq-dev"),
            local_queue("batch", OTHER_NS, "cq-prod"),
            # held 2 GPUs for 90 min until day 10, then scaled to zero (released, as Kueue leaves it)
            gpu_workload(
                NS,
                "raycluster-ws-1a2b3",
                "RayCluster",
                "ws",
                "team-q",
                {
                    "accumulatedPastExecutionTimeSeconds": 5400,
                    "schedulingStats": {
                        "evictions": [{"reason": "Deactivated", "underlyingCause": "", "count": 1}]
                    },
                    "conditions": [
                        cond("QuotaReserved", "False", "Pending", 10),
                        cond("Admitted", "False", "NoReservation", 10),
                        cond("Evicted", "True", "Deactivated", 10),
                        cond("Requeued", "False", "Deactivated", 10),
                    ],
                },
            ),
            # a RayJob admitted on day 29 (2 GPUs) whose generated RayCluster Prometheus sees
            gpu_workload(
                NS,
                "rayjob-train-4d5e6",
                "RayJob",
                "train",
                "team-q",
                {
                    "admission": {
                        "clusterQueue": "cq-dev",
                        "podSetAssignments": [
                            {"name": "head", "count": 2, "resourceUsage": {"nvidia.com/gpu": "2"}}
                        ],
                    },
                    "conditions": [
                        cond("QuotaReserved", "True", "QuotaReserved", 29),
                        cond("Admitted", "True", "Admitted", 29),
                    ],
                },
            ),
            generated_cluster(),
            # preempted on day 20 after 1 h
            gpu_workload(
                OTHER_NS,
                "raycluster-etl-7f8a9",
                "RayCluster",
                "etl",
                "batch",
                {
                    "accumulatedPastExecutionTimeSeconds": 3600,
                    "conditions": [
                        cond("Admitted", "False", "NoReservation", 20),
                        cond("Evicted", "True", "Preempted", 20),
                        cond("Requeued", "True", "Preempted", 20),
                    ],
                },
            ),
        ]
    )


class _Prometheus(BaseHTTPRequestHandler):
    """Answers as Prometheus would for the job's pods; records each request's Authorization header."""

    seen: list[tuple[str, str | None]] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        url = urlparse(self.path)
        query = (parse_qs(url.query).get("query") or [""])[0]
        self.seen.append((url.path, self.headers.get("Authorization")))
        data: Any = {"result": []}
        if url.path == "/api/v1/status/runtimeinfo":
            data = {"storageRetention": "90d"}
        elif url.path == "/api/v1/query":
            data = {"result": [{"metric": {}, "value": [0, "1"]}]}  # kube-state-metrics is there
        elif f'namespace="{NS}"' in query and "kube_pod_container_resource_requests" in query:
            points = [[SINCE.timestamp() + i, "2"] for i in range(GPU_SAMPLES)]
            data = {"result": [{"metric": {"namespace": NS, "owner_name": "train-x7k2p"}, "values": points}]}
        elif f'exported_namespace="{NS}"' in query and "DCGM" in query:
            points = [[SINCE.timestamp() + i, "1"] for i in range(GPU_SAMPLES)]
            pod = {"exported_namespace": NS, "exported_pod": "train-x7k2p-head-9qz8w"}
            data = {"result": [{"metric": pod, "values": points}]}
        body = json.dumps({"status": "success", "data": data}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def prometheus() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Prometheus)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Prometheus.seen = []
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(autouse=True)
def _no_prometheus_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAYQUEUE_PROMETHEUS_URL", raising=False)
    monkeypatch.delenv("RAYQUEUE_PROMETHEUS_TOKEN", raising=False)


def test_without_prometheus_every_admission_counts_and_the_rollups_add_up(admin: Any) -> None:
    report = usage_report(since="30d", until=UNTIL, client=admin, all_namespaces=True)
    rows = {(r.namespace, r.name): r for r in report.rows}
    assert set(rows) == {(NS, "ws"), (NS, "train"), (OTHER_NS, "etl")}  # the job is one row
    ws, train, etl = rows[(NS, "ws")], rows[(NS, "train")], rows[(OTHER_NS, "etl")]
    assert ws.gpu_hours_allocated == pytest.approx(2 * 1.5)  # 90 min before the scale-to-zero
    assert ws.gpu_hours_reclaimed == pytest.approx(2 * 20 * 24)  # day 10 to day 30
    assert train.kind == "RayJob" and train.gpu_hours_allocated == pytest.approx(2 * 24)
    assert etl.gpu_hours_allocated == pytest.approx(2 * 1.0) and etl.gpu_hours_reclaimed == 0
    assert [r.cluster_queue for r in (ws, train, etl)] == ["cq-dev", "cq-dev", "cq-prod"]
    assert not any("does not record" in n for n in report.notes)

    total = report.total_allocated
    assert total == pytest.approx(3 + 48 + 2)
    for by in ROLLUPS:
        rolled = rollup(report, by)
        assert sum(r.clusters for r in rolled.rows) == len(report.rows)
        assert rolled.total_allocated == pytest.approx(total)
        assert rolled.total_reclaimed == pytest.approx(report.total_reclaimed)
    by_cq = {r.group: r.gpu_hours_allocated for r in rollup(report, "cluster-queue").rows}
    assert by_cq == pytest.approx({"cq-dev": 51.0, "cq-prod": 2.0})
    by_queue = {r.group: r.gpu_hours_allocated for r in rollup(report, "queue").rows}
    assert by_queue == pytest.approx({f"{NS}/team-q": 51.0, f"{OTHER_NS}/batch": 2.0})


def _cli(plane: LocalControlPlane, capsys: pytest.CaptureFixture[str], *options: str) -> str:
    capsys.readouterr()
    code = main(
        [
            "usage",
            "-A",
            "--since",
            "30d",
            "--until",
            UNTIL.isoformat(),
            "--kubeconfig",
            str(plane.kubeconfig_path),
        ]
        + list(options)
    )
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def test_cli_csv_and_json_for_a_30_day_window(
    plane: LocalControlPlane, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = list(csv.DictReader(io.StringIO(_cli(plane, capsys, "--by", "queue", "--csv"))))
    assert {(r["group"], float(r["gpu_hours_allocated"]), r["gpu_hours_busy"]) for r in rows} == {
        (f"{NS}/team-q", 51.0, ""),
        (f"{OTHER_NS}/batch", 2.0, ""),
    }
    assert {r["cluster_queue"] for r in rows} == {"cq-dev", "cq-prod"}
    per_cluster = list(csv.DictReader(io.StringIO(_cli(plane, capsys, "--csv"))))
    assert sum(float(r["gpu_hours_allocated"]) for r in per_cluster) == pytest.approx(53.0)
    doc = json.loads(_cli(plane, capsys, "--by", "namespace", "--json"))
    assert (
        doc["by"] == "namespace" and doc["since"] == SINCE.isoformat() and doc["until"] == UNTIL.isoformat()
    )
    assert {r["group"]: r["gpu_hours_allocated"] for r in doc["rows"]} == {NS: 51.0, OTHER_NS: 2.0}
    assert doc["totals"]["gpu_hours_allocated"] == pytest.approx(53.0)


def test_prometheus_rows_fold_the_generated_cluster_and_get_the_token_asked_for(
    admin: Any, plane: LocalControlPlane, prometheus: str
) -> None:
    source = PrometheusSource(url=prometheus, auth="bearer")
    report = usage_report(NS, since="30d", until=UNTIL, prometheus=source, client=admin)
    assert [r.name for r in report.rows] == ["train", "ws"]  # not train-x7k2p beside train
    train = report.rows[0]
    step = step_for(SINCE, UNTIL)
    assert train.gpu_hours_allocated == pytest.approx(GPU_SAMPLES * 2 * step / 3600)
    assert train.gpu_hours_busy == pytest.approx(GPU_SAMPLES * 1 * step / 3600)
    assert _Prometheus.seen and {auth for _, auth in _Prometheus.seen} == {f"Bearer {plane.token}"}

    _Prometheus.seen = []
    usage_report(NS, since="30d", until=UNTIL, prometheus=prometheus, client=admin)  # auth "none"
    assert _Prometheus.seen and {auth for _, auth in _Prometheus.seen} == {None}
