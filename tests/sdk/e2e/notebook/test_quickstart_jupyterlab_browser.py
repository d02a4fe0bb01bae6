"""The quickstart in a real browser: JupyterLab (from PyPI) served on a free port with a token, Debian's
Chromium driven by Playwright (``executable_path``: no browser download), the notebook run cell by cell
as a person would (Shift+Enter).

What it checks on the page: the workspace cluster's card says ready with its workers, the cluster that
does not fit says queued at position 0 with Kueue's reason, the browser's Deactivate/Resume are disabled
with a tooltip naming the missing verb and resource (the quickstart's user may not patch Workloads),
Down asks to confirm and, confirmed, the cluster leaves the table; JupyterLab's save keeps each card's
``text/html`` next to the widget. Screenshots go to the artefact directory and two of them to
``docs/images/`` (for the README and the docs).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from notebook_helpers import (
    QUICKSTART,
    ROOT,
    WIDGET_VIEW,
    displays,
    kernel_env,
    plain,
    ray_client_server_logs,
)

pytestmark = pytest.mark.ray

INSTALL_HINT = (
    "Debian's Chromium is missing: scripts/test.sh installs it "
    "(apt-get install -y chromium; the Playwright package drives it, no browser download)"
)
# One cell's limit, under pytest's 600 s for the whole test, so that a stuck cell fails with this test's own
# message and screenshot (a cell takes seconds; the quickstart's longest, the cluster's wait, about a minute).
CELL_TIMEOUT_MS = 300_000
# The README's and the docs' screenshots are refreshed only when asked (RAYQUEUE_UPDATE_SCREENSHOTS=1),
# so that a test run never dirties the checkout; otherwise they go with the other artefacts.
DOCS_IMAGES = ROOT / "docs" / "images"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def jupyterlab(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """JupyterLab serving a copy of the quickstart from ``tmp_path/work`` on a free port with a token;
    yields the notebook's URL and the copy's path. Its settings and runtime files stay under tmp_path."""
    work = tmp_path / "work"
    work.mkdir()
    notebook = work / QUICKSTART.name
    shutil.copy(QUICKSTART, notebook)
    settings = tmp_path / "lab-settings"
    tracker = settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    # every cell in the page, not virtualised; and the notebook's kernel started without asking (the box
    # "Always start the preferred kernel" ticked): under load JupyterLab once showed its "Select Kernel"
    # dialog over a kernel it had already started, and the dialog took the Shift+Enter of every cell
    tracker.write_text(json.dumps({"windowingMode": "none", "autoStartDefaultKernel": True}))
    notifications = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notifications.parent.mkdir(parents=True)
    notifications.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    token = secrets.token_hex(16)
    port = free_port()
    env = {
        **kernel_env(),
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "lab-workspaces"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
    }
    log = (tmp_path / "jupyterlab.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", f"--port={port}"]
        + ["--ServerApp.ip=127.0.0.1", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}"]
        + [f"--ServerApp.root_dir={work}"],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            assert server.poll() is None, (tmp_path / "jupyterlab.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "JupyterLab did not start"
            time.sleep(0.25)
        yield f"{base}/lab/tree/{notebook.name}?token={token}", notebook
    finally:
        server.send_signal(signal.SIGINT)  # Jupyter's own shutdown: it stops the kernels it started
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=30)
        log.close()


def launch_chromium(playwright: Any) -> Any:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.fail(INSTALL_HINT)
    return playwright.chromium.launch(
        executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-dev-shm-usage"]
    )


def test_quickstart_in_jupyterlab_in_chromium(jupyterlab: tuple[str, Path], artefacts: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, notebook = jupyterlab
    ids = [c["id"] for c in json.loads(notebook.read_text())["cells"]]
    kinds = [c["cell_type"] for c in json.loads(notebook.read_text())["cells"]]
    shots = artefacts / "browser"
    shots.mkdir(exist_ok=True)
    docs_images = DOCS_IMAGES if os.environ.get("RAYQUEUE_UPDATE_SCREENSHOTS") == "1" else shots
    docs_images.mkdir(parents=True, exist_ok=True)

    with sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(120_000)
        expect.set_options(timeout=120_000)  # JupyterLab's first load on a busy machine
        page.goto(url)
        try:
            cells = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell")
            expect(cells).to_have_count(len(ids))
            expect(
                page.locator(".jp-NotebookPanel-toolbar .jp-Notebook-ExecutionIndicator")
            ).to_have_attribute("data-status", "idle", timeout=120_000)

            def cell(cell_id: str) -> Any:
                return cells.nth(ids.index(cell_id))

            def run_until(last_id: str) -> None:
                """Shift+Enter on each cell up to ``last_id``, waiting for every code cell to finish."""
                start = run_until.next  # type: ignore[attr-defined]
                for i in range(start, ids.index(last_id) + 1):
                    target = cells.nth(i)
                    target.locator(".jp-InputPrompt, .jp-InputArea-prompt").first.click()
                    started = time.time()
                    page.keyboard.press("Shift+Enter")
                    if kinds[i] == "code":
                        prompt = target.locator(".jp-InputArea-prompt").first
                        expect(prompt).to_have_text(re.compile(r"\[\d+\]"), timeout=CELL_TIMEOUT_MS)
                        # The cell has finished: a traceback now is its error. Say it at once, with what the
                        # head's Ray client server logged, rather than wait for it to go away.
                        failed = target.locator(
                            ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
                        ).filter(has_text="Traceback")
                        if failed.count():
                            raise AssertionError(
                                f"{ids[i]} raised:\n{failed.first.inner_text()[-4000:]}\n"
                                f"Ray client server logs:\n{ray_client_server_logs(started)}"
                            )
                run_until.next = ids.index(last_id) + 1  # type: ignore[attr-defined]

            run_until.next = 0  # type: ignore[attr-defined]

            # the workspace cluster: apply() shows the card, wait_ready() brings it to ready
            run_until("cell-06")
            card = cell("cell-06").locator(".rayqueue-card")
            expect(card).to_contain_text("default/my-workspace-cluster")
            expect(card).to_contain_text("ready")
            expect(card).to_contain_text("2/2")
            card.screenshot(path=str(shots / "1-workspace-card-ready.png"))
            card.screenshot(path=str(docs_images / "notebook-cluster-card.png"))

            # the cluster that does not fit: queued, its position and Kueue's reason on its card
            run_until("cell-18")
            big = cell("cell-18").locator(".rayqueue-card")
            expect(big).to_contain_text("default/big-experiment")
            expect(big).to_contain_text("queued (Pending)")
            expect(big.get_by_role("row", name="position 0", exact=True)).to_have_count(1)
            expect(big).to_contain_text("insufficient")
            cell("cell-18").screenshot(path=str(shots / "2-big-experiment-queued.png"))

            # the browser: the user's buttons, then Down with its confirmation
            run_until("cell-09")
            view = cell("cell-09")
            expect(view.locator(".rayqueue-clusters")).to_contain_text("big-experiment")
            expect(view.locator(".jp-OutputArea-output")).to_have_count(1)  # displayed once
            for name in ("Deactivate", "Resume"):
                button = view.get_by_role("button", name=name)
                expect(button).to_be_disabled()
                expect(button).to_have_attribute(
                    "title", re.compile("may not patch workloads.kueue.x-k8s.io")
                )
            view.locator("select").select_option("big-experiment")
            view.locator("button").filter(has_text=re.compile(r"^\s*Down\s*$")).click()
            expect(view).to_contain_text("Delete RayCluster default/big-experiment")
            view.screenshot(path=str(shots / "3-browser-confirm-down.png"))
            view.screenshot(path=str(docs_images / "notebook-cluster-browser.png"))
            view.get_by_role("button", name="Confirm down").click()
            expect(view).to_contain_text("down: default/big-experiment done")
            expect(view.locator(".rayqueue-clusters")).not_to_contain_text("big-experiment")
            expect(view.locator(".rayqueue-clusters")).to_contain_text("my-workspace-cluster")
            view.screenshot(path=str(shots / "4-browser-after-down.png"))

            # Ray tasks, the job, the clean-up
            run_until("cell-13")
            expect(cell("cell-11")).to_contain_text("[14, 77, 194] 2.0")
            expect(cell("cell-13")).to_contain_text("SUCCEEDED")
            run_until("cell-15")
            expect(cell("cell-15").locator(".jp-OutputArea-output").last).to_have_text("[]")
            expect(view.locator(".rayqueue-clusters")).not_to_contain_text("my-workspace-cluster")
            expect(card).to_contain_text("deleted")
            page.screenshot(path=str(shots / "5-page-at-the-end.png"), full_page=True)

            # JupyterLab's save keeps each card's HTML next to the widget
            before = notebook.stat().st_mtime_ns
            page.keyboard.press("Control+s")
            deadline = time.monotonic() + 60
            while notebook.stat().st_mtime_ns == before:
                assert time.monotonic() < deadline, "JupyterLab did not save the notebook"
                time.sleep(0.2)
            run_until("cell-16")
        except BaseException:
            page.screenshot(path=str(shots / "failure.png"), full_page=True)
            raise
        browser.close()

    saved = nbformat.read(notebook, as_version=4)
    outputs = {c["id"]: displays(c.get("outputs", [])) for c in saved.cells if c.cell_type == "code"}
    (workspace_card,) = outputs["cell-06"]
    assert {WIDGET_VIEW, "text/html", "text/plain"} <= set(workspace_card["data"])
    assert plain(workspace_card).startswith("default/my-workspace-cluster: deleted")
    (big_card,) = outputs["cell-18"]
    assert "big-experiment" in big_card["data"]["text/html"]
