"""codeflare-sdk's cluster listings, ``list_all_clusters`` and ``list_all_queued``, over
:func:`~rayqueue_sdk.cluster.observe.list_clusters` (one read for the whole namespace, however many clusters).

They return :class:`~rayqueue_sdk.cluster.status.ClusterStatus` objects (phase, Kueue's reason, queue
position, workers, addresses) rather than codeflare-sdk's ``RayCluster`` records, and
``print_to_console=True`` (the default, as there) prints one line per cluster.

In the examples ``api`` is an ``ApiClient`` of a running cluster (the doctests give them a local control
plane's); without ``api_client`` the current login is used, as in codeflare-sdk.

Example:
    >>> list_all_queued("an-empty-namespace", api_client=api)   # what an empty namespace prints
    No queued resources found
    []
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rayqueue_sdk.admission.cluster import ClusterPhase
from rayqueue_sdk.cluster.observe import list_clusters
from rayqueue_sdk.cluster.status import ClusterStatus

if TYPE_CHECKING:  # pragma: no cover
    from rayqueue_sdk.kube.session import SessionLike

__all__ = ["list_all_clusters", "list_all_queued"]

#: The phases codeflare-sdk's ``list_all_queued`` stands for: waiting for Kueue, or admitted and not up yet.
_QUEUED = frozenset({ClusterPhase.QUEUED, ClusterPhase.ADMITTED, ClusterPhase.STARTING})


def _shown(statuses: list[ClusterStatus], print_to_console: bool, empty: str) -> list[ClusterStatus]:
    if print_to_console:
        print("\n".join(str(st) for st in statuses) or empty)  # the caller asked for console output
    return statuses


def list_all_clusters(
    namespace: str | None = None,
    print_to_console: bool = True,
    api_client: SessionLike = None,
) -> list[ClusterStatus]:
    """Every RayCluster of ``namespace`` (default: the credentials' one) with its phase (codeflare-sdk's name
    for :func:`~rayqueue_sdk.cluster.observe.list_clusters`).

    Example:
        >>> from rayqueue_sdk.kube.kinds import RAYCLUSTERS
        >>> head = {"rayStartParams": {}, "template": {"spec": {"containers": [
        ...     {"name": "ray-head", "image": "rayproject/ray:2.52.0"}]}}}
        >>> _ = session.create(RAYCLUSTERS, {"apiVersion": "ray.io/v1", "kind": "RayCluster",
        ...     "metadata": {"name": "doc-listed", "namespace": "default"}, "spec": {"headGroupSpec": head}})
        >>> [st.name for st in list_all_clusters("default", False, api) if st.name == "doc-listed"]
        ['doc-listed']
        >>> list_all_clusters("an-empty-namespace", api_client=api)
        No resources found
        []
    """
    return _shown(list_clusters(namespace, api_client), print_to_console, "No resources found")


def list_all_queued(
    namespace: str | None = None,
    print_to_console: bool = True,
    api_client: SessionLike = None,
) -> list[ClusterStatus]:
    """The RayClusters of ``namespace`` that are not up yet: queued in Kueue, admitted or starting.

    Example:
        >>> [(st.name, st.position) for st in list_all_queued("an-empty-namespace", False, api)]
        []
    """
    queued = [st for st in list_clusters(namespace, api_client) if st.phase in _QUEUED]
    return _shown(queued, print_to_console, "No queued resources found")
