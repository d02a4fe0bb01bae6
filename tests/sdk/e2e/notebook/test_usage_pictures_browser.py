"""The usage chart, the queue timeline and the card's GPU sparkline in JupyterLab in Chromium (the
quickstart browser test's JupyterLab fixture and launcher): a small notebook draws them; the page shows the
charts as images in their ``text/html`` outputs and the card with its SVG sparkline beside the idle
countdown, and the saved notebook keeps ``text/html`` and ``text/plain``. Screenshots go to the artefact
directory, and to ``docs/images/`` only when RAYQUEUE_UPDATE_SCREENSHOTS=1 (as the quickstart test does: a
test run never dirties the checkout).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import nbformat
import pytest
import test_quickstart_jupyterlab_browser as quickstart_browser

pytestmark = pytest.mark.slow

jupyterlab = quickstart_browser.jupyterlab  # the fixture, shared (not the test: only the module is imported)

SETUP = """\
from datetime import UTC, datetime, timedelta
from rayqueue_sdk import UsageReport
from rayqueue_sdk.admission.usage import UsageRow
from rayqueue_sdk.display.charts import TimelineRow, queue_timeline, usage_chart
now = datetime(2026, 3, 2, 14, 0, tzinfo=UTC)
report = UsageReport(now - timedelta(days=7), now, (
    UsageRow("team-a", "workspace", "user-queue", 41.5, 12.3, 9.0),
    UsageRow("team-a", "nightly-train", "user-queue", 28.0, 25.1, 0.0),
    UsageRow("team-a", "notebook-gpu", "user-queue", 6.0, None, 18.0),
), sources=("prometheus", "workload-conditions"))
rows = [
    TimelineRow("workspace", now - timedelta(hours=3), now + timedelta(minutes=22), "admitted",
                note="idle policy releases 2 GPUs if it stays idle"),
    TimelineRow("nightly-train", now - timedelta(hours=1), None, "admitted"),
    TimelineRow("big-experiment", now - timedelta(minutes=12), None, "pending",
                (now + timedelta(minutes=22), now + timedelta(minutes=40))),
    TimelineRow("sweep-3", now - timedelta(minutes=4), None, "pending", (now + timedelta(minutes=40), None)),
]
"""

CARD = """\
import time
from rayqueue_sdk.admission.idle import IdleStatus
from rayqueue_sdk.cluster.status import ClusterPhase, ClusterStatus
from rayqueue_sdk.display.widgets import ClusterCard
idle = IdleStatus("reaper", "workload", 30, "gpu", idle_since=time.time() - 12 * 60 - 20)
card = ClusterCard(ClusterStatus("workspace", "team-a", ClusterPhase.READY, True, "ready", queue="user-queue",
                                 idle=idle), gpus=2)
card.set_utilisation([92, 88, 95, 90, 61, 20, 4, 0, 0, 0, 0, 0, 0, 0])
card
"""


def test_usage_pictures_in_jupyterlab(jupyterlab: tuple[str, Path], artefacts: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, quickstart = jupyterlab
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.cells = [
        nbformat.v4.new_code_cell(SETUP, id="setup"),
        nbformat.v4.new_code_cell("usage_chart(report)", id="usage"),
        nbformat.v4.new_code_cell("queue_timeline(rows, now=now)", id="timeline"),
        nbformat.v4.new_code_cell(CARD, id="card"),
    ]
    path = quickstart.parent / "usage_pictures.ipynb"
    nbformat.write(nb, path)
    url = url.replace(quickstart.name, path.name)
    shots = artefacts / "browser"
    shots.mkdir(exist_ok=True)
    docs_images = (
        quickstart_browser.DOCS_IMAGES if os.environ.get("RAYQUEUE_UPDATE_SCREENSHOTS") == "1" else shots
    )
    docs_images.mkdir(parents=True, exist_ok=True)

    with sync_playwright() as p:
        browser = quickstart_browser.launch_chromium(p)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.set_default_timeout(120_000)
        expect.set_options(timeout=120_000)
        page.goto(url)
        try:
            cells = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell")
            expect(cells).to_have_count(4)
            expect(
                page.locator(".jp-NotebookPanel-toolbar .jp-Notebook-ExecutionIndicator")
            ).to_have_attribute("data-status", "idle")
            # the kernel is connected and idle (a code cell run before that is dropped)
            expect(page.locator(".jp-StatusBar-Widget").filter(has_text="| Idle").first).to_be_visible()
            for i in range(4):
                cells.nth(i).locator(".jp-InputPrompt, .jp-InputArea-prompt").first.click()
                page.keyboard.press("Shift+Enter")
                expect(cells.nth(i).locator(".jp-InputArea-prompt").first).to_have_text(
                    re.compile(r"\[\d+\]")
                )
            for i, name, title in (
                (1, "usage-chart.png", "GPU-hours"),
                (2, "queue-timeline.png", "queue timeline"),
            ):
                output = cells.nth(i).locator(".jp-OutputArea-output")
                expect(output).to_contain_text(title)
                image = output.locator("img[src^='data:image/png;base64,']")
                expect(image).to_have_count(1)
                page.wait_for_function(
                    "img => img.complete && img.naturalWidth > 200", arg=image.element_handle()
                )
                output.screenshot(path=str(shots / name))
                output.screenshot(path=str(docs_images / name))
            # the card: the sparkline beside the idle countdown
            card = cells.nth(3).locator(".rayqueue-card")
            expect(card).to_contain_text("idle 12 of 30 min")
            expect(card.locator("svg.rayqueue-sparkline")).to_have_count(1)
            card.screenshot(path=str(shots / "cluster-card-sparkline.png"))
            card.screenshot(path=str(docs_images / "cluster-card-sparkline.png"))
            page.keyboard.press("Control+s")
            page.wait_for_timeout(500)
        finally:
            page.screenshot(
                path=str(shots / "usage-pictures-page.png")
            )  # what the page showed, for a failure
            browser.close()

    saved = json.loads(path.read_text())
    outputs = {c["id"]: c.get("outputs", []) for c in saved["cells"]}
    for cell_id in ("usage", "timeline"):
        data = outputs[cell_id][0]["data"]
        assert "data:image/png;base64," in "".join(data["text/html"])
        assert "".join(data["text/plain"]).strip()
    card_html = "".join(outputs["card"][0]["data"]["text/html"])
    assert "rayqueue-sparkline" in card_html and "0% now (reaper mode: idle 12 of 30 min)" in card_html
    assert "workspace     allocated ████" in "".join(outputs["usage"][0]["data"]["text/plain"])
