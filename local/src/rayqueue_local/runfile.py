"""The run files of ``rayqueue local up``: where each running control plane records its pid, URL and context.

Each instance has a name (``--name``, default ``local``): its state lives in ``$RAYQUEUE_HOME/<name>/``
(default ``~/.rayqueue``), and ``$RAYQUEUE_HOME/<name>.json`` is written by ``local up`` once it serves
and removed on the way out; ``local down``, ``local status`` and ``local user`` read it. A file left by
a process that died is treated as absent (and removed). Stdlib only, so the ``rayqueue`` command stays
fast.

Example:
    >>> import os, tempfile
    >>> os.environ["RAYQUEUE_HOME"] = tempfile.mkdtemp()
    >>> read_run_file() is None, read_run_file("ci") is None, running_instances()
    (True, True, [])
    >>> state_dir_of("ci").name, run_file("ci").name
    ('ci', 'ci.json')
    >>> describe({"controllers": ["kueue"], "options": {}})
    'Controllers: kueue'
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_INSTANCE",
    "alive",
    "check_instance_name",
    "describe",
    "rayqueue_home",
    "read_run_file",
    "run_file",
    "running_instances",
    "state_dir_of",
]

#: The instance ``rayqueue local`` commands mean without ``--name``.
DEFAULT_INSTANCE = "local"
_INSTANCE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\Z")


def check_instance_name(name: str) -> str:
    """``name`` if it can name an instance (a DNS label: it becomes a directory, a file and a context).

    Example:
        >>> check_instance_name("ci-1")
        'ci-1'
        >>> check_instance_name("../x")
        Traceback (most recent call last):
        ...
        ValueError: instance name '../x': allowed: a DNS label (lower-case letters, digits, '-'; at most 63)
    """
    if not isinstance(name, str) or not _INSTANCE_NAME.match(name):
        raise ValueError(
            f"instance name {name!r}: allowed: a DNS label (lower-case letters, digits, '-'; at most 63)"
        )
    return name


def state_dir_of(name: str = DEFAULT_INSTANCE) -> Path:
    """The default state directory of instance ``name``: ``$RAYQUEUE_HOME/<name>``."""
    return rayqueue_home() / check_instance_name(name)


def rayqueue_home() -> Path:
    """``$RAYQUEUE_HOME`` or ``~/.rayqueue``.

    Example:
        >>> rayqueue_home().is_absolute()
        True
    """
    return Path(os.environ.get("RAYQUEUE_HOME") or Path.home() / ".rayqueue").expanduser()


def run_file(name: str = DEFAULT_INSTANCE) -> Path:
    """Where the running ``rayqueue local up --name <name>`` records its pid, URL and kubeconfig context.

    Example:
        >>> run_file().name
        'local.json'
    """
    return rayqueue_home() / f"{check_instance_name(name)}.json"


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


def read_run_file(name: str = DEFAULT_INSTANCE) -> dict[str, Any] | None:
    """Instance ``name``'s record, or ``None`` (no file, unreadable, or its process is gone)."""
    path = run_file(name)
    try:
        data: dict[str, Any] = json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return None
    if not alive(int(data.get("pid", 0))):
        path.unlink(missing_ok=True)  # a stale file from a process that died
        return None
    return data


def running_instances() -> list[str]:
    """The names of the instances running now, sorted."""
    names = []
    for path in sorted(rayqueue_home().glob("*.json")):
        if _INSTANCE_NAME.match(path.stem) and read_run_file(path.stem) is not None:
            names.append(path.stem)
    return names


def describe(running: dict[str, Any]) -> str:
    """One line naming the running controllers (and the one Kueue API version served, Prometheus' URL).

    Example:
        >>> describe({"controllers": ["kueue", "kuberay-raycluster"], "options": {"ray_enabled": True}})
        'Controllers: kueue, kuberay-raycluster; Ray heads: real, one per running RayCluster'
        >>> describe({"controllers": ["kueue"], "options": {"kueue_api_versions": "v1beta1"}})
        'Controllers: kueue; Kueue API: v1beta1 only'
    """
    names = running.get("controllers")
    if names is None:
        return "Controllers: unknown"
    line = "Controllers: " + (", ".join(names) if names else "none")
    if "kuberay-raycluster" in names:
        ray = (running.get("options") or {}).get("ray_enabled")
        line += "; Ray heads: " + ("real, one per running RayCluster" if ray else "simulated")
    kueue_api = (running.get("options") or {}).get("kueue_api_versions")
    if kueue_api and kueue_api != "both":
        line += f"; Kueue API: {kueue_api} only"
    if running.get("prometheus"):
        line += f"; Prometheus at {running['prometheus']}"
    return line
