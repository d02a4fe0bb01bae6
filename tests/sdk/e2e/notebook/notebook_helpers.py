"""Helpers for the notebook tests: a kernel's environment, a notebook executed in a real kernel
(nbclient + ipykernel) with each cell's outputs as they were when it finished, and reading outputs."""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[4]
QUICKSTART = ROOT / "demo-notebooks" / "0_quickstart.ipynb"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def kernel_env() -> dict[str, str]:
    """The test process's environment for a kernel or a Jupyter server, without a notebook parent's
    variables, a Ray address or a kubeconfig (the notebook makes its own plane and logs in with a token)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JPY_", "RAY_ADDRESS"))}
    env.pop("KUBECONFIG", None)
    return env


@dataclass
class NotebookRun:
    """A notebook executed in a kernel: the notebook as saved after the last cell, each code cell's
    outputs as they were when that cell finished (later cells may update a display in place), and the
    saved file."""

    notebook: Any
    at_end_of_cell: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    path: Path | None = None

    def cell(self, cell_id: str) -> Any:
        """The saved notebook's cell ``cell_id``."""
        return next(c for c in self.notebook.cells if c.get("id") == cell_id)


def execute_notebook(
    source: Path | Any, saved: Path, *, allow_errors: bool = False, env: dict[str, str] | None = None
) -> NotebookRun:
    """Run every cell of ``source`` (a path, or a notebook node built in memory) in a fresh ``python3``
    kernel (cwd: the notebook's folder, or demo-notebooks/) and save the executed notebook, with its widget
    state as JupyterLab would (nbclient's default), to ``saved``. ``allow_errors``: a cell that raises does
    not stop the run (its error output is kept). ``env``: variables added to the kernel's environment."""
    nb = nbformat.read(source, as_version=4) if isinstance(source, Path) else source
    folder = source.parent if isinstance(source, Path) else ROOT / "demo-notebooks"
    run = NotebookRun(nb)

    def snapshot(cell: Any, **_kwargs: Any) -> None:
        run.at_end_of_cell[cell.get("id")] = copy.deepcopy(list(cell.get("outputs", [])))

    client = NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(folder)}},
        on_cell_executed=snapshot,
        allow_errors=allow_errors,
    )
    client.execute(env={**kernel_env(), **(env or {})})
    nbformat.write(nb, saved)
    run.path = saved
    return run


def displays(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rich outputs (display_data and execute_result) of a cell, in order."""
    return [o for o in outputs if o.get("output_type") in ("display_data", "execute_result")]


def stdout(outputs: list[dict[str, Any]]) -> str:
    """What a cell printed."""
    return "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")


def plain(output: dict[str, Any]) -> str:
    """An output's ``text/plain``."""
    return str(output.get("data", {}).get("text/plain", ""))


def errors(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The error outputs of a cell (``ename``, ``evalue``, ``traceback``: the lines a frontend shows)."""
    return [o for o in outputs if o.get("output_type") == "error"]


def ray_client_server_logs(since: float, lines: int = 25) -> str:
    """The tails of the Ray client proxy's and servers' logs (``ray-client-proxy.log`` and
    ``ray_client_server*.{err,out}`` of every local head, ``/tmp/rqray-*``) written since ``since`` (epoch
    seconds): what a failing ``ray.init("ray://")`` left on the head's side. For a test's failure message;
    the heads' directories go when they stop."""
    tails = []
    heads = Path("/tmp").glob("rqray-*")
    for log in sorted(
        p for h in heads for p in (h / "ray-client-proxy.log", *h.glob("session_2*/logs/ray_client_server*"))
    ):
        try:
            if log.stat().st_mtime < since:
                continue
            text = log.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            continue
        tails.append(f"--- {log}\n" + "\n".join(text))
    return "\n".join(tails) or "(no Ray client server logs written since the cell started)"
