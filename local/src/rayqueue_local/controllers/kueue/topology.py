"""Topology-aware scheduling (TAS), enough for a pod set that must (or would like to) run in one rack.

A ``Topology`` lists levels, each a node label (e.g. block, rack, hostname); a ResourceFlavor with
``spec.topologyName`` is a TAS flavor, whose nodes are the v1 Nodes carrying its ``nodeLabels`` and every
level label. A pod set asks for a level with the annotation ``kueue.x-k8s.io/podset-required-topology``
or ``kueue.x-k8s.io/podset-preferred-topology`` on its pod template (the Workload carries it as
``podSets[].topologyRequest``). Each node fits as many pods as its free ``status.allocatable`` allows
(minus the pods that admitted Workloads' ``topologyAssignment`` put on it); a domain fits the sum of its
nodes. A *required* pod set is admitted only when one domain at its level fits all its pods; otherwise
it stays pending with Kueue's words, ``topology "default" allows to fit only 3 out of 4 pod(s)`` (or
``doesn't allow to fit any of 4 pod(s)``). A *preferred* pod set tries its level, then the levels above,
and finally spreads over the top level's domains. A pod set in a TAS flavor without a request may go
anywhere (upstream's implicit "unconstrained" mode). The admission records the nodes chosen in
``podSetAssignments[].topologyAssignment`` (lowest level only, as Kueue does for hostname levels).

Sources: Kueue v0.19.2 ``apis/kueue/v1beta2/topology_types.go`` (annotations, ``TopologyAssignment``),
``pkg/cache/scheduler/tas_flavor_snapshot.go`` (``findLevelWithFitDomains``, ``notFitMessage``),
``pkg/scheduler/flavorassigner/tas_flavorassigner.go`` (flavor messages) and
https://kueue.sigs.k8s.io/docs/concepts/topology_aware_scheduling/. Not emulated: pod-slice and
multi-layer constraints, leader/worker groups, best-fit versus least-free-capacity choice among fitting
domains (the fitting domain with the least room wins here, as upstream's default BestFit), node taints,
the pods of Workloads outside TAS flavors, and preemption to make room in a domain.

Example:
    >>> topo = {"metadata": {"name": "default"}, "spec": {"levels": [
    ...     {"nodeLabel": RACK_LABEL}, {"nodeLabel": HOSTNAME_LABEL}]}}
    >>> def node(name, rack):
    ...     return {"metadata": {"name": name, "labels": {RACK_LABEL: rack, HOSTNAME_LABEL: name}},
    ...             "status": {"allocatable": {"nvidia.com/gpu": "2"}}}
    >>> flavor = {"metadata": {"name": "tas"}, "spec": {"topologyName": "default"}}
    >>> nodes = [node("n1", "r1"), node("n2", "r1"), node("n3", "r2")]
    >>> index = TopologyIndex.build([topo], [flavor], nodes, [])
    >>> index.place("tas", {"nvidia.com/gpu": 1}, 4, TopologyRequest(RACK_LABEL, True))[0] is not None
    True
    >>> index.place("tas", {"nvidia.com/gpu": 1}, 5, TopologyRequest(RACK_LABEL, True))[1]
    'topology "default" allows to fit only 4 out of 5 pod(s)'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rayqueue_local.controllers.kueue.amounts import to_amount

__all__ = [
    "BLOCK_LABEL",
    "HOSTNAME_LABEL",
    "PREFERRED_ANNOTATION",
    "RACK_LABEL",
    "REQUIRED_ANNOTATION",
    "TopologyIndex",
    "TopologyRequest",
    "flavor_problem",
    "not_fit_message",
    "placed_pods",
    "topology_request",
]

REQUIRED_ANNOTATION = "kueue.x-k8s.io/podset-required-topology"
"""Pod-template annotation: the pod set must run within one domain of this level."""

PREFERRED_ANNOTATION = "kueue.x-k8s.io/podset-preferred-topology"
"""Pod-template annotation: the pod set would like to run within one domain of this level."""

BLOCK_LABEL = "cloud.provider.com/topology-block"
"""The block level's node label in Kueue's TAS documentation (and in the local scenarios)."""

RACK_LABEL = "cloud.provider.com/topology-rack"
"""The rack level's node label in Kueue's TAS documentation (and in the local scenarios)."""

HOSTNAME_LABEL = "kubernetes.io/hostname"
"""The node level's label."""


@dataclass(frozen=True)
class TopologyRequest:
    """A pod set's topology request: the level's node label and whether it is required.
    ``level=None``: no request (unconstrained).

    Example:
        >>> TopologyRequest(RACK_LABEL, True).required
        True
    """

    level: str | None
    required: bool = False


def topology_request(pod_set: Mapping[str, Any]) -> TopologyRequest | None:
    """The request of a Workload pod set: ``topologyRequest`` or, failing that, its template's annotations.
    ``None`` when it asks for nothing.

    Example:
        >>> topology_request({"template": {"metadata": {"annotations": {PREFERRED_ANNOTATION: "rack"}}}})
        TopologyRequest(level='rack', required=False)
        >>> topology_request({"topologyRequest": {"required": "rack"}}), topology_request({})
        (TopologyRequest(level='rack', required=True), None)
    """
    request = pod_set.get("topologyRequest") or {}
    if request.get("required"):
        return TopologyRequest(str(request["required"]), True)
    if request.get("preferred"):
        return TopologyRequest(str(request["preferred"]), False)
    annotations = ((pod_set.get("template") or {}).get("metadata") or {}).get("annotations") or {}
    if annotations.get(REQUIRED_ANNOTATION):
        return TopologyRequest(annotations[REQUIRED_ANNOTATION], True)
    if annotations.get(PREFERRED_ANNOTATION):
        return TopologyRequest(annotations[PREFERRED_ANNOTATION], False)
    return None


def not_fit_message(topology: str, fit: int, count: int) -> str:
    """Kueue's ``notFitMessage`` for pods (slice size 1).

    Example:
        >>> not_fit_message("default", 0, 2)
        'topology "default" doesn\\'t allow to fit any of 2 pod(s)'
    """
    if fit == 0:
        return f'topology "{topology}" doesn\'t allow to fit any of {count} pod(s)'
    return f'topology "{topology}" allows to fit only {fit} out of {count} pod(s)'


@dataclass
class _Domain:
    values: tuple[str, ...]
    nodes: list[str] = field(default_factory=list)


@dataclass
class _FlavorTopology:
    topology: str
    levels: list[str]
    nodes: dict[str, dict[str, int]]  # node name -> allocatable (Kueue units)
    values: dict[str, tuple[str, ...]]  # node name -> level values, top level first


class TopologyIndex:
    """The TAS flavors, their nodes' free capacity and the domains at each level; :meth:`place` finds
    room and :meth:`commit` takes it (both in Kueue units). Built once per pass by :meth:`build`."""

    def __init__(self) -> None:
        self.flavors: dict[str, _FlavorTopology] = {}
        self.used: dict[str, dict[str, int]] = {}  # node name -> usage

    @staticmethod
    def build(
        topologies: Iterable[Mapping[str, Any]],
        flavors: Iterable[Mapping[str, Any]],
        nodes: Iterable[Mapping[str, Any]],
        placements: Iterable[tuple[str, Mapping[str, int], Mapping[str, int]]],
    ) -> TopologyIndex:
        """``placements``: ``(flavor, per-pod requests, {node value: pods})`` of the admitted Workloads."""
        index = TopologyIndex()
        levels_of = {
            t["metadata"]["name"]: [lv["nodeLabel"] for lv in (t.get("spec") or {}).get("levels") or ()]
            for t in topologies
        }
        node_list = list(nodes)
        for flavor in flavors:
            spec = flavor.get("spec") or {}
            name = spec.get("topologyName")
            if not name or name not in levels_of:
                continue
            levels = levels_of[name]
            selector = spec.get("nodeLabels") or {}
            ft = _FlavorTopology(name, levels, {}, {})
            for node in node_list:
                labels = (node.get("metadata") or {}).get("labels") or {}
                if any(labels.get(k) != v for k, v in selector.items()) or any(
                    lv not in labels for lv in levels
                ):
                    continue
                status = node.get("status") or {}
                allocatable = status.get("allocatable") or status.get("capacity") or {}
                node_name = node["metadata"]["name"]
                ft.nodes[node_name] = {r: to_amount(r, v) for r, v in allocatable.items()}
                ft.values[node_name] = tuple(labels[lv] for lv in levels)
            index.flavors[flavor["metadata"]["name"]] = ft
        for flavor_name, per_pod, pods in placements:
            index.commit(flavor_name, per_pod, pods)
        return index

    def is_tas(self, flavor: str) -> bool:
        """Whether ``flavor`` is a TAS flavor (names an existing Topology)."""
        return flavor in self.flavors

    def node_for(self, flavor: str, value: str) -> str | None:
        """The node whose lowest-level label is ``value`` (how a ``topologyAssignment`` names nodes)."""
        ft = self.flavors.get(flavor)
        if ft is None:
            return None
        for node, values in ft.values.items():
            if values[-1] == value:
                return node
        return None

    def _pods_fit(self, node: str, allocatable: Mapping[str, int], per_pod: Mapping[str, int]) -> int:
        used = self.used.get(node, {})
        fit = 1 << 30
        for res, value in per_pod.items():
            if value <= 0:
                continue
            free = allocatable.get(res, 0) - used.get(res, 0)
            fit = min(fit, max(0, free // value))
        return fit

    def place(
        self, flavor: str, per_pod: Mapping[str, int], count: int, request: TopologyRequest | None
    ) -> tuple[dict[str, int] | None, str]:
        """Where ``count`` pods with ``per_pod`` requests go: ``({node value: pods}, "")``, or
        ``(None, message)``."""
        ft = self.flavors[flavor]
        capacity = {n: self._pods_fit(n, alloc, per_pod) for n, alloc in sorted(ft.nodes.items())}
        depth = len(ft.levels)
        if request is None or request.level is None:
            level_index = 0
        elif request.level in ft.levels:
            level_index = ft.levels.index(request.level)
        else:
            return None, f'Flavor "{flavor}" does not contain the requested level'
        required = request is not None and request.required
        for idx in range(level_index, -1, -1):
            domains: dict[tuple[str, ...], list[str]] = {}
            for node, values in ft.values.items():
                domains.setdefault(values[: idx + 1], []).append(node)
            if not domains:
                return None, f"no topology domains at level: {ft.levels[idx]}"
            room = {d: sum(capacity[n] for n in nodes) for d, nodes in domains.items()}
            fitting = [d for d in sorted(domains) if room[d] >= count]
            if fitting and (request is not None and request.level is not None):
                best = min(fitting, key=lambda d: (room[d], d))
                return self._spread(domains[best], capacity, count, ft, depth), ""
            if required:
                return None, not_fit_message(ft.topology, max(room.values(), default=0), count)
        total = sum(capacity.values())
        if total < count:
            return None, not_fit_message(ft.topology, total, count)
        return self._spread(list(ft.nodes), capacity, count, ft, depth), ""

    @staticmethod
    def _spread(
        nodes: list[str], capacity: Mapping[str, int], count: int, ft: _FlavorTopology, depth: int
    ) -> dict[str, int]:
        placed: dict[str, int] = {}
        for node in sorted(nodes, key=lambda n: (-capacity[n], n)):
            if count <= 0:
                break
            take = min(count, capacity[node])
            if take:
                placed[ft.values[node][depth - 1]] = take
                count -= take
        return placed

    def commit(self, flavor: str, per_pod: Mapping[str, int], pods: Mapping[str, int]) -> None:
        """Take the room of ``pods`` (``{node value: count}``) on ``flavor``'s nodes."""
        for value, count in pods.items():
            node = self.node_for(flavor, value)
            if node is None:
                continue
            used = self.used.setdefault(node, {})
            for res, amount in per_pod.items():
                used[res] = used.get(res, 0) + amount * count

    def assignment(self, flavor: str, pods: Mapping[str, int]) -> dict[str, Any]:
        """``podSetAssignments[].topologyAssignment`` (v1beta2) for ``pods`` on ``flavor``'s lowest level."""
        values = sorted(pods)
        return {
            "levels": [self.flavors[flavor].levels[-1]],
            "slices": [
                {
                    "domainCount": len(values),
                    "podCounts": {"individual": [pods[v] for v in values]},
                    "valuesPerLevel": [{"individual": {"roots": values}}],
                }
            ],
        }


def placed_pods(topology_assignment: Mapping[str, Any] | None) -> dict[str, int]:
    """``{node value: pods}`` of a ``topologyAssignment`` written by :meth:`TopologyIndex.assignment`
    (``universal`` forms are read too).

    Example:
        >>> placed_pods({"levels": ["kubernetes.io/hostname"], "slices": [{"domainCount": 2,
        ...     "podCounts": {"universal": 1}, "valuesPerLevel": [{"individual": {"roots": ["a", "b"]}}]}]})
        {'a': 1, 'b': 1}
    """
    pods: dict[str, int] = {}
    for sl in (topology_assignment or {}).get("slices") or ():
        count = int(sl.get("domainCount") or 0)
        level = (sl.get("valuesPerLevel") or [{}])[-1]
        if level.get("universal") is not None:
            roots = [str(level["universal"])] * count
        else:
            ind = level.get("individual") or {}
            roots = [f"{ind.get('prefix', '')}{r}{ind.get('suffix', '')}" for r in ind.get("roots") or ()]
        counts = sl.get("podCounts") or {}
        per = (
            [int(counts["universal"])] * count
            if counts.get("universal")
            else list(counts.get("individual") or ())
        )
        for value, n in zip(roots, per, strict=False):
            pods[value] = pods.get(value, 0) + int(n)
    return pods


def flavor_problem(flavor: Mapping[str, Any] | None, request: TopologyRequest | None) -> str | None:
    """Why a pod set with a topology request cannot use ``flavor`` (upstream's words), or ``None``.

    Example:
        >>> flavor_problem({"metadata": {"name": "f"}, "spec": {}}, TopologyRequest("rack", True))
        'Flavor "f" does not support TopologyAwareScheduling'
    """
    if request is None or flavor is None:
        return None
    if not (flavor.get("spec") or {}).get("topologyName"):
        return f'Flavor "{flavor["metadata"]["name"]}" does not support TopologyAwareScheduling'
    return None
