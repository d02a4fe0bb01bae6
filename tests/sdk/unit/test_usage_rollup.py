"""Roll-ups of a usage report, from tables (pure): every cluster in one group, totals equal to the
report's for each ``by``, busy ``None`` only where no member has metrics, CSV cells, a bad ``by`` refused."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest

from rayqueue_sdk.admission.rollup import ROLLUPS, clusters_csv, rollup
from rayqueue_sdk.admission.usage import UsageReport, UsageRow
from rayqueue_sdk.display.charts import usage_chart
from rayqueue_sdk.errors import ConfigError

T = datetime(2026, 3, 31, tzinfo=UTC)
REPORT = UsageReport(
    T - timedelta(days=30),
    T,
    (
        UsageRow("team-a", "ws", "user-queue", 40.0, 12.5, 8.0, cluster_queue="cq-dev"),
        UsageRow("team-a", "train", "user-queue", 20.0, None, 0.0, kind="RayJob", cluster_queue="cq-dev"),
        UsageRow("team-a", "loose", None, 1.5, None, 0.25),
        UsageRow("team-b", "etl", "batch", 7.0, 3.0, 1.0, cluster_queue="cq-prod"),
        UsageRow("team-c", "idle", "batch", 2.0, None, 4.0, cluster_queue="cq-prod"),
    ),
)


@pytest.mark.parametrize("by", ROLLUPS)
def test_each_rollup_adds_up_to_the_report(by: str) -> None:
    rolled = rollup(REPORT, by)
    assert sum(r.clusters for r in rolled.rows) == len(REPORT.rows)
    assert rolled.total_allocated == pytest.approx(REPORT.total_allocated) == pytest.approx(70.5)
    assert rolled.total_reclaimed == pytest.approx(REPORT.total_reclaimed) == pytest.approx(13.25)
    assert rolled.total_busy == pytest.approx(REPORT.total_busy) == pytest.approx(15.5)
    doc = rolled.to_dict()
    assert doc["totals"]["gpu_hours_allocated"] == pytest.approx(70.5)
    rows = list(csv.DictReader(io.StringIO(rolled.csv())))
    assert sum(float(r["gpu_hours_allocated"]) for r in rows) == pytest.approx(70.5)


def test_groups_and_their_parts() -> None:
    by_cq = {
        r.group: (r.clusters, r.gpu_hours_allocated, r.gpu_hours_busy)
        for r in rollup(REPORT, "cluster-queue").rows
    }
    assert by_cq == {"cq-dev": (2, 60.0, 12.5), "cq-prod": (2, 9.0, 3.0), "-": (1, 1.5, None)}
    by_queue = rollup(REPORT, "queue").rows
    assert [r.group for r in by_queue] == ["team-a/user-queue", "team-b/batch", "team-c/batch", "team-a/-"]
    assert (by_queue[1].namespace, by_queue[1].local_queue, by_queue[1].cluster_queue) == (
        "team-b",
        "batch",
        "cq-prod",
    )
    by_ns = {r.group: r.gpu_hours_reclaimed for r in rollup(REPORT, "namespace").rows}
    assert by_ns == {"team-a": 8.25, "team-b": 1.0, "team-c": 4.0}
    # a group where no cluster has metrics: busy unknown, an empty CSV cell
    (idle,) = [
        r for r in csv.DictReader(io.StringIO(rollup(REPORT, "queue").csv())) if r["group"] == "team-a/-"
    ]
    assert idle["gpu_hours_busy"] == "" and idle["local_queue"] == ""


def test_cluster_rows_as_csv() -> None:
    rows = list(csv.DictReader(io.StringIO(clusters_csv(REPORT))))
    assert [(r["name"], r["kind"], r["cluster_queue"]) for r in rows][:2] == [
        ("ws", "RayCluster", "cq-dev"),
        ("train", "RayJob", "cq-dev"),
    ]


def test_a_bad_by_names_the_field_and_the_choices() -> None:
    with pytest.raises(ConfigError) as err:
        rollup(REPORT, "team")
    assert err.value.field == "by" and "cluster-queue" in str(err.value)


def test_the_usage_chart_draws_a_rollup() -> None:
    text = usage_chart(REPORT, by="cluster-queue", draw=False).text
    assert text.startswith("GPU-hours by cluster-queue")
    assert "cq-dev  allocated ████████████████████ 60.000" in text
    assert "<th>cluster-queue</th>" in usage_chart(rollup(REPORT, "cluster-queue"), draw=False).html
