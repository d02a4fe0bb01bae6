"""The quota tree: ClusterQueues and Cohorts as resource nodes, with Kueue's borrowing arithmetic.

Each node holds, per ``(flavor, resource)``, its quota (``nominalQuota``, ``borrowingLimit``,
``lendingLimit``), the *subtree quota* (a ClusterQueue: its nominal quota; a Cohort: its own
nominal quota plus what its children lend it) and the usage. A child keeps
``max(0, subtree - lendingLimit)`` for itself ("local quota"); the rest is pooled in the parent.
The formulas follow Kueue's ``pkg/cache/scheduler/resource_node.go`` [K]; this is the only place
that does the arithmetic, so the engine can never disagree with itself about what fits.

Example:
    >>> tree = build_tree(
    ...     [{"metadata": {"name": "a"}, "spec": {"cohortName": "ab", "resourceGroups": [
    ...         {"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [
    ...             {"name": "cpu", "nominalQuota": 2}]}]}]}},
    ...      {"metadata": {"name": "b"}, "spec": {"cohortName": "ab", "resourceGroups": [
    ...         {"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [
    ...             {"name": "cpu", "nominalQuota": 6}]}]}]}}], [])
    >>> a = tree.queues["a"]
    >>> available(a, ("f", "cpu")), add_usage(a, ("f", "cpu"), 5000), available(a, ("f", "cpu"))
    (8000, None, 3000)
    >>> borrowing_with(a, ("f", "cpu"), 0)
    True
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from rayqueue_local.controllers.kueue.amounts import to_amount

__all__ = [
    "FR",
    "Quota",
    "QuotaNode",
    "QuotaTree",
    "add_usage",
    "available",
    "borrowing_with",
    "build_tree",
    "find_height_of_lowest_subtree_that_fits",
    "is_within_nominal",
    "local_available",
    "path_to_root",
    "potential_available",
    "quantities_fit_in_quota",
    "remove_usage",
]

FR = tuple[str, str]
"""A ``(flavor, resource)`` pair."""


@dataclass(frozen=True)
class Quota:
    """One flavor-resource quota of a ClusterQueue or Cohort (amounts in Kueue units)."""

    nominal: int = 0
    borrowing_limit: int | None = None
    lending_limit: int | None = None


@dataclass(eq=False)
class QuotaNode:
    """A ClusterQueue (``is_cohort=False``) or Cohort in the quota tree."""

    name: str
    is_cohort: bool
    parent: QuotaNode | None = None
    quotas: dict[FR, Quota] = field(default_factory=dict)
    subtree: dict[FR, int] = field(default_factory=dict)
    usage: dict[FR, int] = field(default_factory=dict)
    child_queues: list[QuotaNode] = field(default_factory=list)
    child_cohorts: list[QuotaNode] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"QuotaNode({'cohort' if self.is_cohort else 'cq'} {self.name})"


@dataclass
class QuotaTree:
    """All nodes, by name."""

    queues: dict[str, QuotaNode]
    cohorts: dict[str, QuotaNode]


def _parse_resource_groups(groups: Iterable[dict[str, Any]] | None) -> dict[FR, Quota]:
    """Quotas per ``(flavor, resource)`` from a ``spec.resourceGroups`` list.

    Example:
        >>> _parse_resource_groups([{"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [
        ...     {"name": "cpu", "nominalQuota": "1", "borrowingLimit": "500m"}]}]}])
        {('f', 'cpu'): Quota(nominal=1000, borrowing_limit=500, lending_limit=None)}
    """
    quotas: dict[FR, Quota] = {}
    for group in groups or ():
        for flavor in group.get("flavors") or ():
            for res in flavor.get("resources") or ():
                name = res["name"]
                borrowing = res.get("borrowingLimit")
                lending = res.get("lendingLimit")
                quotas[(flavor["name"], name)] = Quota(
                    nominal=to_amount(name, res.get("nominalQuota", 0)),
                    borrowing_limit=None if borrowing is None else to_amount(name, borrowing),
                    lending_limit=None if lending is None else to_amount(name, lending),
                )
    return quotas


def _cohort_name_of(cq: dict[str, Any]) -> str:
    """The cohort of a ClusterQueue (``spec.cohortName``; v1beta1's ``spec.cohort`` accepted)."""
    spec = cq.get("spec") or {}
    return str(spec.get("cohortName") or spec.get("cohort") or "")


def build_tree(cluster_queues: Iterable[dict[str, Any]], cohorts: Iterable[dict[str, Any]]) -> QuotaTree:
    """Build the tree from ClusterQueue and Cohort objects (``spec.parentName`` makes hierarchies).

    Cohorts named only by a ClusterQueue's ``cohortName`` exist implicitly with no quota of their own.
    A ``parentName`` that would close a cycle is ignored.
    """
    cohort_nodes: dict[str, QuotaNode] = {}
    parents: dict[str, str] = {}
    for obj in cohorts:
        name = obj["metadata"]["name"]
        spec = obj.get("spec") or {}
        node = QuotaNode(name, True, quotas=_parse_resource_groups(spec.get("resourceGroups")))
        cohort_nodes[name] = node
        if spec.get("parentName"):
            parents[name] = spec["parentName"]

    def cohort(name: str) -> QuotaNode:
        if name not in cohort_nodes:
            cohort_nodes[name] = QuotaNode(name, True)
        return cohort_nodes[name]

    for name, parent_name in sorted(parents.items()):
        seen, cursor = {name}, parent_name
        while cursor in parents and cursor not in seen:
            seen.add(cursor)
            cursor = parents[cursor]
        if cursor in seen:  # cycle: Kueue marks the cohort inactive; here it stays a root
            continue
        child, parent = cohort(name), cohort(parent_name)
        child.parent = parent
        parent.child_cohorts.append(child)

    queues: dict[str, QuotaNode] = {}
    for obj in cluster_queues:
        name = obj["metadata"]["name"]
        node = QuotaNode(
            name, False, quotas=_parse_resource_groups((obj.get("spec") or {}).get("resourceGroups"))
        )
        queues[name] = node
        if _cohort_name_of(obj):
            parent = cohort(_cohort_name_of(obj))
            node.parent = parent
            parent.child_queues.append(node)

    for node in cohort_nodes.values():
        if node.parent is None:
            _update_subtree(node)
    for node in queues.values():
        if node.parent is None:
            node.subtree = {fr: q.nominal for fr, q in node.quotas.items()}
    return QuotaTree(queues, cohort_nodes)


def _update_subtree(cohort: QuotaNode) -> None:
    cohort.subtree = {fr: q.nominal for fr, q in cohort.quotas.items()}
    for child in cohort.child_cohorts:
        _update_subtree(child)
        _accumulate(cohort, child)
    for queue in cohort.child_queues:
        queue.subtree = {fr: q.nominal for fr, q in queue.quotas.items()}
        _accumulate(cohort, queue)


def _accumulate(parent: QuotaNode, child: QuotaNode) -> None:
    for fr, quota in child.subtree.items():
        parent.subtree[fr] = parent.subtree.get(fr, 0) + quota - _local_quota(child, fr)


def path_to_root(node: QuotaNode) -> Iterator[QuotaNode]:
    """The ancestors of ``node``, nearest first."""
    cursor = node.parent
    while cursor is not None:
        yield cursor
        cursor = cursor.parent


def _root_of(node: QuotaNode) -> QuotaNode:
    """The root of ``node``'s tree (``node`` itself when it has no parent)."""
    while node.parent is not None:
        node = node.parent
    return node


def _local_quota(node: QuotaNode, fr: FR) -> int:
    """The part of the node's quota it keeps from its parent (``subtree - lendingLimit``)."""
    quota = node.quotas.get(fr)
    if quota is None or quota.lending_limit is None:
        return 0
    return max(0, node.subtree.get(fr, 0) - quota.lending_limit)


def local_available(node: QuotaNode, fr: FR) -> int:
    """Unused local (not lent) quota."""
    return max(0, _local_quota(node, fr) - node.usage.get(fr, 0))


def _available(node: QuotaNode, fr: FR) -> int:
    if node.parent is None:
        return node.subtree.get(fr, 0) - node.usage.get(fr, 0)
    parent_available = _available(node.parent, fr)
    quota = node.quotas.get(fr)
    if quota is not None and quota.borrowing_limit is not None:
        local = _local_quota(node, fr)
        stored_in_parent = node.subtree.get(fr, 0) - local
        used_in_parent = max(0, node.usage.get(fr, 0) - local)
        parent_available = min(stored_in_parent - used_in_parent + quota.borrowing_limit, parent_available)
    return local_available(node, fr) + parent_available


def available(node: QuotaNode, fr: FR) -> int:
    """How much more of ``fr`` the node can use now, borrowing included (never negative)."""
    return max(0, _available(node, fr))


def potential_available(node: QuotaNode, fr: FR) -> int:
    """How much of ``fr`` the node could use if nothing else in its tree used any."""
    if node.parent is None:
        return node.subtree.get(fr, 0)
    avail = _local_quota(node, fr) + potential_available(node.parent, fr)
    quota = node.quotas.get(fr)
    if quota is not None and quota.borrowing_limit is not None:
        avail = min(node.subtree.get(fr, 0) + quota.borrowing_limit, avail)
    return avail


def add_usage(node: QuotaNode, fr: FR, value: int) -> None:
    """Account ``value`` of ``fr`` to ``node``; what exceeds its local quota goes up the tree."""
    cursor: QuotaNode | None = node
    while cursor is not None:
        used = cursor.usage.get(fr, 0)
        local_free = max(0, _local_quota(cursor, fr) - used) if cursor.quotas else 0
        cursor.usage[fr] = used + value
        if value <= local_free:
            return
        value -= local_free
        cursor = cursor.parent


def remove_usage(node: QuotaNode, fr: FR, value: int) -> None:
    """Undo :func:`add_usage`."""
    cursor: QuotaNode | None = node
    while cursor is not None:
        used = cursor.usage.get(fr, 0)
        stored_in_parent = used - (_local_quota(cursor, fr) if cursor.quotas else 0)
        cursor.usage[fr] = used - value
        if stored_in_parent <= 0:
            return
        value = min(value, stored_in_parent)
        cursor = cursor.parent


def borrowing_with(node: QuotaNode, fr: FR, value: int) -> bool:
    """Whether the node would use more than its own (subtree) quota with ``value`` more."""
    return node.subtree.get(fr, 0) < node.usage.get(fr, 0) + value


def is_within_nominal(node: QuotaNode, frs: Iterable[FR]) -> bool:
    """Whether the node uses no more than its (subtree) quota for every one of ``frs``."""
    return all(node.subtree.get(fr, 0) >= node.usage.get(fr, 0) for fr in frs)


def quantities_fit_in_quota(node: QuotaNode, requests: dict[FR, int]) -> tuple[bool, dict[FR, int]]:
    """Whether ``requests`` fit in the node's own quota, and what would remain for its parent."""
    fits = True
    remaining: dict[FR, int] = {}
    for fr, value in requests.items():
        if node.subtree.get(fr, 0) < node.usage.get(fr, 0) + value:
            fits = False
        remaining[fr] = max(0, value - local_available(node, fr))
    return fits, remaining


def _node_height(node: QuotaNode) -> int:
    """Height of a cohort: 1 when it only has ClusterQueues, more with nested cohorts."""
    height = min(len(node.child_queues) + len(node.child_cohorts), 1)
    for child in node.child_cohorts:
        height = max(height, _node_height(child) + 1)
    return height


def find_height_of_lowest_subtree_that_fits(cq: QuotaNode, fr: FR, value: int) -> tuple[int, bool]:
    """Kueue's borrowing level of using ``value`` of ``fr`` in ``cq`` (0: no borrowing) and whether
    the request could be met by reclaiming within some subtree below the root."""
    if not borrowing_with(cq, fr, value) or cq.parent is None:
        return 0, cq.parent is not None
    remaining = value - local_available(cq, fr)
    for node in path_to_root(cq):
        if not borrowing_with(node, fr, remaining):
            return _node_height(node), node.parent is not None
        remaining -= local_available(node, fr)
    return _node_height(_root_of(cq.parent)), False
