"""The run file of ``rayqueue local up``: where a running control plane records its pid, URL and context.

``$RAYQUEUE_HOME/local.json`` (default ``~/.rayqueue``) is written by ``local up`` once it serves and
removed on the way out; ``local down`` and ``local status`` read it. A file left by a process that
died is treated as absent (and removed). Stdlib only, so the ``rayqueue`` command stays fast.

Example:
    >>> import os, tempfile
    >>> os.environ["RAYQUEUE_HOME"] = tempfile.mkdtemp()
    >>> read_run_file() is None
    True
    >>> describe({"controllers": ["kueue"], "options": {}})
    'Controllers: kueue'
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["alive", "describe", "rayqueue_home", "read_run_file", "run_file"]


def rayqueue_home() -> Path:
    """``$RAYQUEUE_HOME`` or ``~/.rayqueue``.

    Example:
        >>> rayqueue_home().is_absolute()
        True
    """
    return Path(os.environ.get("RAYQUEUE_HOME") or Path.home() / ".rayqueue").expanduser()


def run_file() -> Path:
    """Where a running ``rayqueue local up`` records its pid, URL and kubeconfig context.

    Example:
        >>> run_file().name
        'local.json'
    """
    return rayqueue_home() / "local.json"


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, exited but not yet reaped by its parent, does not).

    Example:
        >>> alive(os.getpid())
        True
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no procfs: trust kill()
    return stat.rpartition(")")[2].split()[0] != "Z"


def read_run_file() -> dict[str, Any] | None:
    """The running control plane's record, or ``None`` (no file, unreadable, or its process is gone)."""
    path = run_file()
    try:
        data: dict[str, Any] = json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return None
    if not alive(int(data.get("pid", 0))):
        path.unlink(missing_ok=True)  # a stale file from a process that died
        return None
    return data


def describe(running: dict[str, Any]) -> str:
    """One line naming the running controllers (and Prometheus' URL).

    Example:
        >>> describe({"controllers": ["kueue", "kuberay-raycluster"], "options": {"ray_enabled": True}})
        'Controllers: kueue, kuberay-raycluster; Ray heads: real, one per running RayCluster'
    """
    names = running.get("controllers")
    if names is None:
        return "Controllers: unknown"
    line = "Controllers: " + (", ".join(names) if names else "none")
    if "kuberay-raycluster" in names:
        ray = (running.get("options") or {}).get("ray_enabled")
        line += "; Ray heads: " + ("real, one per running RayCluster" if ray else "simulated")
    if running.get("prometheus"):
        line += f"; Prometheus at {running['prometheus']}"
    return line
