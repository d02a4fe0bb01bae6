"""Kueue's topology checks of a RayCluster's or RayJob's pod templates (its webhooks, TAS on by default).

Three rules of Kueue v0.19.2 pkg/controller/jobframework/tas_validation.go, as
pkg/controller/jobs/raycluster/common.go ValidateTopologyRequest applies them to the head and every
worker group: at most one of the required, preferred and unconstrained topology annotations per pod
template; ``kueue.x-k8s.io/podset-slice-size`` not above the pod set's count; pod sets that share a
``kueue.x-k8s.io/podset-group-name`` come in exactly twos, one of the two has one pod, and both ask
the same required (or preferred) topology.

Example:
    >>> job = {"kind": "RayCluster", "spec": {"headGroupSpec": {"template": {"metadata": {"annotations": {
    ...     "kueue.x-k8s.io/podset-required-topology": "rack",
    ...     "kueue.x-k8s.io/podset-preferred-topology": "rack"}}}}}}
    >>> topology_errors(job)[0][:68]
    'spec.headGroupSpec.template.metadata.annotations: Invalid value: mus'
"""

from __future__ import annotations

from typing import Any

from rayqueue_local.controllers.kueue.workloads import job_pod_sets

__all__ = ["topology_errors"]

_REQUIRED = "kueue.x-k8s.io/podset-required-topology"
_PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
_UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
_SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"
_GROUP = "kueue.x-k8s.io/podset-group-name"


def _annotations(template: Any) -> dict[str, str]:
    return ((template or {}).get("metadata") or {}).get("annotations") or {}


def _templates(job: dict[str, Any]) -> tuple[str, list[tuple[str, str, dict[str, str]]]]:
    """``(spec path, [(pod set name, annotations path, annotations)])`` for the head and the groups."""
    spec = job.get("spec") or {}
    path = "spec"
    if job.get("kind") == "RayJob":
        spec, path = spec.get("rayClusterSpec") or {}, "spec.rayClusterSpec"
    out = [
        (
            "head",
            f"{path}.headGroupSpec.template.metadata.annotations",
            _annotations((spec.get("headGroupSpec") or {}).get("template")),
        )
    ]
    for i, group in enumerate(spec.get("workerGroupSpecs") or ()):
        out.append(
            (
                str(group.get("groupName", "")).lower(),
                f"{path}.workerGroupSpecs[{i}].template.metadata.annotations",
                _annotations(group.get("template")),
            )
        )
    return path, out


def _invalid(path: str, value: str | None, detail: str) -> str:
    shown = "" if value is None else f'"{value}": '
    return f"{path}: Invalid value: {shown}{detail}"


def _request(annotations: dict[str, str]) -> tuple[str, str] | None:
    for key, kind in ((_REQUIRED, "required"), (_PREFERRED, "preferred")):
        if key in annotations:
            return kind, annotations[key]
    return None


def topology_errors(job: dict[str, Any]) -> list[str]:
    """The field errors of Kueue's topology rules for a managed RayCluster or RayJob (empty when valid)."""
    _, templates = _templates(job)
    counts = {ps["name"]: int(ps["count"]) for ps in job_pod_sets(job)}
    errors: list[str] = []
    for name, path, notes in templates:
        if sum(key in notes for key in (_REQUIRED, _PREFERRED, _UNCONSTRAINED)) > 1:
            keys = ", ".join(f'"{k}"' for k in (_REQUIRED, _PREFERRED, _UNCONSTRAINED))
            errors.append(
                _invalid(path, None, f"must not contain more than one topology annotation: [{keys}]")
            )
        if _SLICE_SIZE in notes and name in counts:
            raw = notes[_SLICE_SIZE]
            if not raw.lstrip("-").isdigit():
                errors.append(_invalid(f"{path}[{_SLICE_SIZE}]", raw, "must be a numeric value"))
            elif int(raw) > counts[name]:
                detail = f"must not be greater than pod set count {counts[name]}"
                errors.append(_invalid(f"{path}[{_SLICE_SIZE}]", raw, detail))
    groups: dict[str, list[tuple[str, str, dict[str, str]]]] = {}
    for entry in templates:
        if entry[2].get(_GROUP):
            groups.setdefault(entry[2][_GROUP], []).append(entry)
    for group, members in groups.items():
        if len(members) != 2:
            for _, path, _ in members:
                detail = f"can only define groups of exactly 2 pod sets, got: {len(members)} pod set(s)"
                errors.append(_invalid(f"{path}[{_GROUP}]", group, detail))
            continue
        (n1, p1, a1), (n2, p2, a2) = members
        c1, c2 = counts.get(n1, 1), counts.get(n2, 1)
        if c1 != 1 and c2 != 1:
            detail = (
                "can only define groups where at least one pod set has only 1 replica, got: "
                f"{c1} replica(s) and {c2} replica(s) in the group"
            )
            errors += [_invalid(f"{p1}[{_GROUP}]", group, detail), _invalid(f"{p2}[{_GROUP}]", group, detail)]
        r1, r2 = _request(a1), _request(a2)
        if r1 is None or r1 != r2:
            template = (
                f"must specify '{_REQUIRED}' or '{_PREFERRED}' topology consistent with '{{}}' in group "
                f"'{group}'"
            )
            errors += [_invalid(p1, None, template.format(p2)), _invalid(p2, None, template.format(p1))]
    return errors
