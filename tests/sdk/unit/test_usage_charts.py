"""The pictures: the usage chart, the queue timeline and the card's sparkline, each with text/plain and
text/html forms that survive saving a notebook, drawn by matplotlib when installed and still there (HTML
tables, text) when it is not (matplotlib hidden in a subprocess)."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta

from rayqueue_sdk.admission.usage import UsageReport, UsageRow
from rayqueue_sdk.cluster.status import ClusterPhase, ClusterStatus
from rayqueue_sdk.display.charts import TimelineRow, queue_timeline, sparkline, usage_chart
from rayqueue_sdk.display.widgets import ClusterCard

T = datetime(2026, 3, 1, 14, 0, tzinfo=UTC)
REPORT = UsageReport(
    T - timedelta(days=7),
    T,
    (
        UsageRow("team-a", "ws", "user-queue", 40.0, 12.5, 8.0),
        UsageRow("team-a", "batch", "user-queue", 20.0, None, 0.0),
    ),
    sources=("prometheus", "workload-conditions"),
)
ROWS = [
    TimelineRow("first", T - timedelta(hours=1), T + timedelta(minutes=30), "admitted"),
    TimelineRow("ws", T - timedelta(hours=2), None, "admitted"),
    TimelineRow(
        "second",
        T - timedelta(minutes=5),
        None,
        "pending",
        (T + timedelta(minutes=30), T + timedelta(hours=1)),
    ),
    TimelineRow("third", T - timedelta(minutes=2), None, "pending"),
]


def _png_in(html: str) -> bytes:
    match = re.search(r'src="data:image/png;base64,([^"]+)"', html)
    assert match, html[:200]
    return base64.b64decode(match.group(1))


def test_usage_chart_is_a_png_with_a_text_form() -> None:
    bundle = usage_chart(REPORT)._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert _png_in(bundle["text/html"]).startswith(b"\x89PNG")
    text = bundle["text/plain"]
    assert "ws      allocated ████████████████████ 40.000" in text
    assert "busy      no metrics" in text  # batch has no DCGM series: said, not drawn as 0


def test_queue_timeline_draws_admitted_and_pending_rows() -> None:
    picture = queue_timeline(ROWS, now=T)
    assert _png_in(picture.html).startswith(b"\x89PNG")
    assert picture.text.splitlines() == [
        "queue timeline (UTC, now 14:00)",
        "first      admitted 13:00 -> releases 14:30",
        "ws         admitted 12:00 -> release not bounded",
        "second     pending since 13:55, admission window 14:30 - 15:00",
        "third      pending since 13:58, no estimate",
    ]


def test_sparkline_on_the_card_only_when_metrics_exist() -> None:
    st = ClusterStatus("ws", "team-a", ClusterPhase.READY, True, "ready")
    card = ClusterCard(st)
    assert "<svg" not in card.bundle()["text/html"]
    card.set_utilisation([0, 0, 50, 100])
    bundle = card.bundle()
    assert "rayqueue-sparkline" in bundle["text/html"] and "100% now" in bundle["text/html"]
    assert bundle["text/plain"].splitlines()[-1] == "GPU ▁▁▅█ 100% now"
    assert sparkline([]).text == "GPU utilisation: no metrics"


_WITHOUT_MATPLOTLIB = """
import json, sys
sys.modules["matplotlib"] = None  # hides the package: `import matplotlib` raises ImportError
from datetime import UTC, datetime, timedelta
from rayqueue_sdk.admission.usage import UsageReport, UsageRow
from rayqueue_sdk.display.charts import TimelineRow, matplotlib_available, queue_timeline
from rayqueue_sdk.display.charts import sparkline, usage_chart
t = datetime(2026, 3, 1, 14, tzinfo=UTC)
r = UsageReport(t - timedelta(days=1), t, (UsageRow("ds", "ws", "q", 4.0, 1.0, 2.0),))
rows = [TimelineRow("first", t - timedelta(hours=1), t + timedelta(minutes=30), "admitted")]
print(json.dumps({"available": matplotlib_available(), "usage": usage_chart(r)._repr_mimebundle_(),
                  "timeline": queue_timeline(rows, now=t)._repr_mimebundle_(),
                  "spark": sparkline([1, 99])._repr_mimebundle_()}))
"""


def test_without_matplotlib_every_picture_keeps_its_html_and_text() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _WITHOUT_MATPLOTLIB], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    doc = json.loads(out)
    assert doc["available"] is False
    usage = doc["usage"]
    assert "<img" not in usage["text/html"] and "rayqueue-usage" in usage["text/html"]
    assert "ws      allocated ████████████████████ 4.000" in usage["text/plain"]
    timeline = doc["timeline"]
    assert (
        "<img" not in timeline["text/html"] and "admitted 13:00 -&gt; releases 14:30" in timeline["text/html"]
    )
    assert "<svg" in doc["spark"]["text/html"]
