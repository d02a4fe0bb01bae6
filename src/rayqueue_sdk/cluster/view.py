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

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rayqueue_sdk.cluster.cluster import get_cluster
from rayqueue_sdk.cluster.observe import observe_many, summarize
from rayqueue_sdk.display.environment import is_notebook
from rayqueue_sdk.display.widgets import ClusterBrowser, show_widget
from rayqueue_sdk.kube.client import ClientSource, default_namespace, get_client

if TYPE_CHECKING:  # pragma: no cover
    from kubernetes.client import ApiClient

    from rayqueue_sdk.cluster.status import ClusterStatus

__all__ = ["view_clusters"]


def view_clusters(
    namespace: str | None = None, client: ApiClient | ClientSource | None = None
) -> ClusterBrowser:
    """A notebook browser of the namespace's clusters with refresh, down, deactivate and resume buttons.

    ``namespace`` defaults to the credentials' one. The table comes from one listing (a constant number of
    API calls); a button acts through :func:`~rayqueue_sdk.cluster.cluster.get_cluster`. Shown at once in
    a notebook; returned either way (its widgets can be inspected and clicked).

    Example:
        >>> from rayqueue_sdk import view_clusters
        >>> # view_clusters("ds-team")
    """
    ns = namespace or default_namespace(get_client(client))

    def load() -> Sequence[tuple[ClusterStatus, int]]:
        return [(st, summarize(obj, st).gpus) for st, obj in observe_many(get_client(client), ns)]

    def act(action: str, name: str) -> None:
        getattr(get_cluster(name, ns, client=client), action)()

    browser = ClusterBrowser(ns, load, act)
    if is_notebook():
        show_widget(browser.widget)
    return browser
