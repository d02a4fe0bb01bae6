"""Write and merge kubeconfig entries for the local control plane (files are created ``0600``).

Example:
    >>> import tempfile, pathlib, yaml
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "config"
    >>> merge_context(path, "local", server="https://127.0.0.1:6443", ca_path="/tmp/ca.crt",
    ...               user="local-admin", token="t", namespace="default")
    >>> yaml.safe_load(path.read_text())["current-context"]
    'local'
    >>> remove_context(path, "local"); yaml.safe_load(path.read_text())["contexts"]
    []
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

__all__ = ["default_kubeconfig_path", "merge_context", "remove_context"]


def default_kubeconfig_path() -> Path:
    """The first path of ``$KUBECONFIG``, else ``~/.kube/config`` (where kubectl looks)."""
    env = os.environ.get("KUBECONFIG")
    if env:
        return Path(env.split(os.pathsep)[0]).expanduser()
    return Path.home() / ".kube" / "config"


def _load(path: Path) -> dict[str, Any]:
    if path.is_file():
        data = yaml.safe_load(path.read_text()) or {}
        if isinstance(data, dict):
            return data
    return {}


def _save(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        yaml.safe_dump(data, fh, sort_keys=False)
    os.replace(tmp, path)


def _upsert(
    entries: list[dict[str, Any]], name: str, key: str, value: dict[str, Any]
) -> list[dict[str, Any]]:
    return [e for e in entries if e.get("name") != name] + [{"name": name, key: value}]


def merge_context(
    path: Path,
    context: str,
    *,
    server: str,
    ca_path: str | Path,
    user: str,
    token: str,
    namespace: str = "default",
    cluster: str | None = None,
    make_current: bool = True,
) -> None:
    """Add or replace a cluster, user and context in the kubeconfig at ``path`` (other entries kept)."""
    data = _load(path)
    data.setdefault("apiVersion", "v1")
    data.setdefault("kind", "Config")
    data.setdefault("preferences", {})
    cluster = cluster or context
    data["clusters"] = _upsert(
        data.get("clusters") or [],
        cluster,
        "cluster",
        {"server": server, "certificate-authority": str(ca_path)},
    )
    data["users"] = _upsert(data.get("users") or [], user, "user", {"token": token})
    data["contexts"] = _upsert(
        data.get("contexts") or [],
        context,
        "context",
        {"cluster": cluster, "user": user, "namespace": namespace},
    )
    if make_current or not data.get("current-context"):
        data["current-context"] = context
    _save(path, data)


def remove_context(path: Path, context: str) -> None:
    """Remove ``context`` and the cluster and user it names (if no other context uses them)."""
    data = _load(path)
    if not data:
        return
    contexts = data.get("contexts") or []
    gone = next((c.get("context", {}) for c in contexts if c.get("name") == context), None)
    data["contexts"] = [c for c in contexts if c.get("name") != context]
    if gone is not None:
        used_clusters = {c.get("context", {}).get("cluster") for c in data["contexts"]}
        used_users = {c.get("context", {}).get("user") for c in data["contexts"]}
        data["clusters"] = [
            c
            for c in data.get("clusters") or []
            if c.get("name") != gone.get("cluster") or c.get("name") in used_clusters
        ]
        data["users"] = [
            u
            for u in data.get("users") or []
            if u.get("name") != gone.get("user") or u.get("name") in used_users
        ]
    if data.get("current-context") == context:
        data["current-context"] = data["contexts"][0]["name"] if data["contexts"] else ""
    _save(path, data)
