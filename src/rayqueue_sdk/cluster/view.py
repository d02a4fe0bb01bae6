"""The notebook browser of a namespace's clusters (:func:`view_clusters`): the display layer's
:class:`~rayqueue_sdk.display.widgets.ClusterBrowser` wired to this layer's one read path and to
:class:`~rayqueue_sdk.cluster.cluster.Cluster`'s actions.

The composition lives here, above ``display/``, so that display never imports the cluster layer.

Example:
    >>> from rayqueue_sdk import view_clusters
    >>> view_clusters.__module__
    'rayqueue_sdk.cluster.view'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rayqueue_sdk.cluster.cluster import get_cluster
from rayqueue_sdk.cluster.observe import observe_many, summarize
from rayqueue_sdk.display.environment import is_notebook
from rayqueue_sdk.display.widgets import ClusterBrowser
from rayqueue_sdk.kube.access import can_i
from rayqueue_sdk.kube.kinds import RAYCLUSTERS
from rayqueue_sdk.kube.session import KubeSession, SessionLike

if TYPE_CHECKING:  # pragma: no cover
    from rayqueue_sdk.cluster.status import ClusterStatus

__all__ = ["cluster_permissions", "view_clusters"]


def cluster_permissions(session: KubeSession, *, namespace: str | None = None) -> dict[str, str | None]:
    """What the browser's buttons need, asked of the server (two ``SelfSubjectAccessReview`` objects):
    ``patch`` on Kueue Workloads (Deactivate, Resume: ``Workload.spec.active``) and ``delete`` on
    RayClusters (Down). Each action maps to ``None`` when allowed, else the answer naming the missing verb
    and resource, e.g. ``"may not patch workloads.kueue.x-k8s.io in namespace 'ds'"``.

    Example:
        >>> cluster_permissions(session)   # the doctests' identity is the plane's admin
        {'down': None, 'deactivate': None, 'resume': None}
    """
    ns = namespace or session.namespace
    workloads = session.kueue_kind("workloads")
    patch = can_i(session, "patch", workloads.plural, group=workloads.group, namespace=ns)
    delete = can_i(session, "delete", RAYCLUSTERS.plural, group=RAYCLUSTERS.group, namespace=ns)
    denied_patch = None if patch.allowed else str(patch)
    return {
        "down": None if delete.allowed else str(delete),
        "deactivate": denied_patch,
        "resume": denied_patch,
    }


def view_clusters(namespace: str | None = None, client: SessionLike = None) -> ClusterBrowser:
    """A notebook browser of the namespace's clusters with refresh, down, deactivate and resume buttons.

    ``namespace`` defaults to the credentials' one. The table comes from one listing (a constant number of
    API calls); a button acts through :func:`~rayqueue_sdk.cluster.cluster.get_cluster`, and is enabled
    only when the server says the user may use it (:func:`cluster_permissions`). Shown at once in a
    notebook (once: as a cell's last expression it is not shown again); returned either way (its widgets
    can be inspected and clicked).

    Example:
        >>> from rayqueue_sdk import view_clusters
        >>> view_clusters("doc-view", client=session)   # outside a notebook: returned, not shown
        ClusterBrowser(namespace='doc-view', clusters=[])

        In a notebook (not run here)::

            view_clusters("ds-team")
    """
    session = KubeSession.of(client, namespace=namespace)
    ns = session.namespace

    def load() -> Sequence[tuple[ClusterStatus, int]]:
        return [(st, summarize(obj, st).gpus) for st, obj in observe_many(session, namespace=ns)]

    def act(action: str, name: str) -> None:
        getattr(get_cluster(name, ns, client=session), action)()

    def permissions() -> Mapping[str, str | None]:
        return cluster_permissions(session, namespace=ns)

    browser = ClusterBrowser(ns, load, act, permissions)
    if is_notebook():
        browser.live.show()
    return browser
