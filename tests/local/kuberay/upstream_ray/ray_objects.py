"""Build the RayCluster and RayJob of one corpus case from its short description (pure).

A case describes its object by what differs from a small valid one (one head, one worker group ``wg``
of one replica, 1 CPU / 1Gi each): ``name``, ``queue`` (the ``kueue.x-k8s.io/queue-name`` label),
``metadata`` (labels, annotations), ``head`` and ``workers`` (per group: ``name``, ``replicas``, ``min``,
``max``, ``hosts``, ``suspend``, ``annotations``, ``labels`` (the group's Ray ``labels`` field),
``rayStartParams``, ``resources`` (the group's ``resources`` field), ``env``, ``restartPolicy``,
``containers: false`` for none, ``requests`` for the container), ``spec`` (merged into the RayCluster
spec) and, for a RayJob, ``job`` (merged into the RayJob spec; ``rayClusterSpec: null`` drops it).
"""

from __future__ import annotations

import copy
from typing import Any

IMAGE = "rayproject/ray:2.60.0"


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    for key, value in extra.items():
        if value is None:
            base.pop(key, None)
        elif isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
    return base


def _template(container: str, desc: dict[str, Any]) -> dict[str, Any]:
    requests = {"cpu": "1", "memory": "1Gi", **(desc.get("requests") or {})}
    box: dict[str, Any] = {
        "name": container,
        "image": IMAGE,
        "resources": {"requests": dict(requests), "limits": dict(requests)},
    }
    if desc.get("env"):
        box["env"] = [{"name": k, "value": str(v)} for k, v in desc["env"].items()]
    pod: dict[str, Any] = {"containers": [] if desc.get("containers") is False else [box]}
    if desc.get("restartPolicy"):
        pod["restartPolicy"] = desc["restartPolicy"]
    template: dict[str, Any] = {"spec": pod}
    if desc.get("annotations"):
        template["metadata"] = {"annotations": dict(desc["annotations"])}
    return template


def _group_fields(group: dict[str, Any], desc: dict[str, Any]) -> dict[str, Any]:
    if "rayStartParams" in desc:
        group["rayStartParams"] = dict(desc["rayStartParams"])
    for key in ("labels", "resources"):
        if key in desc:
            group[key] = copy.deepcopy(desc[key])
    return group


def _worker(desc: dict[str, Any]) -> dict[str, Any]:
    group: dict[str, Any] = {
        "groupName": desc.get("name", "wg"),
        "replicas": desc.get("replicas", 1),
        "rayStartParams": {},
        "template": _template("ray-worker", desc),
    }
    for key, field in (("min", "minReplicas"), ("max", "maxReplicas"), ("hosts", "numOfHosts")):
        if key in desc:
            group[field] = desc[key]
    if "min" not in desc:
        group["minReplicas"] = 0
    if "max" not in desc:
        group["maxReplicas"] = max(int(group["replicas"]), 1)
    if desc.get("suspend"):
        group["suspend"] = True
    return _group_fields(group, desc)


def cluster_spec(case: dict[str, Any]) -> dict[str, Any]:
    """The RayCluster spec (also a RayJob's ``rayClusterSpec``) of ``case``."""
    head_desc = case.get("head") or {}
    head = _group_fields({"rayStartParams": {}, "template": _template("ray-head", head_desc)}, head_desc)
    workers = case.get("workers")
    spec: dict[str, Any] = {
        "headGroupSpec": head,
        "workerGroupSpecs": [_worker(w) for w in (workers if workers is not None else [{}])],
    }
    return _merge(spec, case.get("spec") or {})


def _metadata(case: dict[str, Any], default_name: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": case.get("name", default_name)}
    extra = copy.deepcopy(case.get("metadata") or {})
    labels = extra.pop("labels", {}) or {}
    if case.get("queue"):
        labels["kueue.x-k8s.io/queue-name"] = case["queue"]
    if labels:
        meta["labels"] = labels
    return _merge(meta, extra)


def build(case: dict[str, Any]) -> dict[str, Any]:
    """The object of ``case`` (``kind`` RayCluster or RayJob), ready to create."""
    if case.get("kind", "RayCluster") == "RayCluster":
        return {
            "apiVersion": "ray.io/v1",
            "kind": "RayCluster",
            "metadata": _metadata(case, "rc"),
            "spec": cluster_spec(case),
        }
    spec: dict[str, Any] = {
        "entrypoint": "python -c 'print(1)'",
        "shutdownAfterJobFinishes": True,
        "rayClusterSpec": cluster_spec(case),
    }
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": _metadata(case, "rj"),
        "spec": _merge(spec, case.get("job") or {}),
    }
