"""Every demo notebook that runs a job stops on a failed job: after each submission, a cell raises
``JobFailedError`` (the job client only reports a status) or calls ``RayJob.wait()`` (which raises it).
A notebook run top to bottom (by a user, by CI, by nbclient) then fails where the job failed instead of
printing FAILED and carrying on (issue 24). The kernel tests run the notebooks and see them succeed.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from notebook_helpers import ROOT

NOTEBOOKS = sorted((ROOT / "demo-notebooks").glob("*.ipynb"))
SUBMITS = re.compile(r"\.submit_job\(|\.submit\(\)")
CHECKS = re.compile(r"raise JobFailedError\(|\.wait\(")


def test_the_demo_notebooks_are_found() -> None:
    assert len(NOTEBOOKS) >= 6 and any(SUBMITS.search(c) for c in _code("0_quickstart"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_job_a_notebook_runs_is_checked_by_a_cell_that_raises(path: Path) -> None:
    cells = _code(path.stem)
    unchecked = [
        cell.splitlines()[0]
        for i, cell in enumerate(cells)
        if SUBMITS.search(cell) and not any(CHECKS.search(later) for later in cells[i:])
    ]
    assert unchecked == [], (
        f"{path.name}: a job's result is never checked after the cell starting {unchecked}"
    )


def _code(stem: str) -> list[str]:
    nb = nbformat.read(ROOT / "demo-notebooks" / f"{stem}.ipynb", as_version=4)
    return [c.source for c in nb.cells if c.cell_type == "code"]
