"""ipywidgets for notebooks: a cluster browser (:class:`ClusterBrowser`) and a per-cluster status card.

The browser shows a table of the namespace's clusters (name, queue, phase with Kueue's reason, position,
workers, GPUs, dashboard link), a cluster picker and buttons: refresh, down, deactivate and resume. It is
handed two callables: ``load()`` (one listing: every cluster's status with its GPU count) and
``act(action, name)``; :func:`rayqueue_sdk.cluster.view.view_clusters` wires them to the cluster layer, so
this module never imports it. ``ipywidgets`` is imported when a widget is built. Tokens are never put in a
widget: only names, Kueue's words and addresses.

Example:
    >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
    >>> html = clusters_html([ClusterStatus("ws", "ds", ClusterPhase.QUEUED, False, "queued", queue="q",
    ...                                     position=0, reason="Pending")], {"ws": 2})
    >>> ">queued (Pending)</td>" in html and "<td>0</td>" in html
    True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from rayqueue_sdk.display.console import phase_text, workers_text
from rayqueue_sdk.errors import RayQueueError

if TYPE_CHECKING:  # pragma: no cover
    from rayqueue_sdk.cluster.observe import ClusterDetails
    from rayqueue_sdk.cluster.status import ClusterStatus

__all__ = [
    "ClusterActor",
    "ClusterBrowser",
    "ClusterLoader",
    "cluster_widget",
    "clusters_html",
    "show_widget",
    "status_html",
]

#: What a browser reads: every cluster of the namespace with its GPU count, in one listing.
ClusterLoader = Callable[[], Sequence[tuple["ClusterStatus", int]]]
#: What a button does: ``act(action, name)``, ``action`` one of ``"down"``, ``"deactivate"``, ``"resume"``.
ClusterActor = Callable[[str, str], object]

_COLOURS = {
    "ready": "#1a7f37",
    "starting": "#9a6700",
    "admitted": "#9a6700",
    "queued": "#0969da",
    "preempted": "#cf222e",
    "failed": "#cf222e",
    "deactivated": "#8250df",
}


def _e(value: object) -> str:
    return escape("-" if value is None else str(value))


def _link(url: str | None) -> str:
    if not url:
        return "-"
    return f'<a href="{_e(url)}" target="_blank" rel="noopener">{_e(url)}</a>'


def clusters_html(statuses: Sequence[ClusterStatus], gpus: dict[str, int] | None = None) -> str:
    """An HTML table of clusters (escaped; the phase coloured, the dashboard a link).

    Example:
        >>> clusters_html([]).count("<tr>")
        1
    """
    head = "".join(
        f"<th>{h}</th>" for h in ("name", "queue", "phase", "position", "workers", "GPUs", "dashboard")
    )
    rows = [f"<tr>{head}</tr>"]
    for st in statuses:
        colour = _COLOURS.get(st.phase.value, "#57606a")
        cells = [
            f"<td>{_e(st.name)}</td>",
            f"<td>{_e(st.queue)}</td>",
            f'<td style="color:{colour}" title="{_e(st.explanation)}">{_e(phase_text(st))}</td>',
            f"<td>{_e(st.position)}</td>",
            f"<td>{_e(workers_text(st))}</td>",
            f"<td>{_e((gpus or {}).get(st.name))}</td>",
            f"<td>{_link(st.dashboard_url)}</td>",
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return '<table class="rayqueue-clusters">' + "".join(rows) + "</table>"


def status_html(status: ClusterStatus, gpus: int | None = None) -> str:
    """An HTML card for one cluster's status (escaped).

    Example:
        >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
        >>> "ready" in status_html(ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready"))
        True
    """
    colour = _COLOURS.get(status.phase.value, "#57606a")
    rows = [
        ("phase", f'<span style="color:{colour}">{_e(phase_text(status))}</span>'),
        ("explanation", _e(status.explanation)),
        ("queue", _e(status.queue)),
        ("priority", _e(status.priority_class)),
        ("position", _e(status.position)),
        ("Kueue message", _e(status.message)),
        ("workers", _e(workers_text(status))),
        ("GPUs", _e(gpus)),
        ("dashboard", _link(status.dashboard_url)),
        ("ray client", _e(status.cluster_uri)),
    ]
    body = "".join(f"<tr><th style='text-align:left'>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f"<h4>{_e(status.namespace)}/{_e(status.name)}</h4><table>{body}</table>"


def cluster_widget(details: ClusterDetails) -> Any:
    """An ``ipywidgets.HTML`` card for one cluster (what :meth:`Cluster.details` shows in a notebook).

    Example:
        >>> from rayqueue_sdk.cluster.observe import summarize
        >>> "ds/ws" in cluster_widget(summarize({"metadata": {"name": "ws", "namespace": "ds"}})).value
        True
    """
    import ipywidgets as w  # lazy: ipywidgets costs ~340 ms, paid only in a notebook

    return w.HTML(value=status_html(details.status, details.gpus))


def show_widget(widget: Any) -> None:
    """Display ``widget`` in the running notebook (IPython's ``display``).

    Example:
        >>> # show_widget(cluster_widget(cluster.details(show=False)))
    """
    from IPython.display import display  # lazy: IPython.display costs ~310 ms, paid only in a notebook

    display(widget)


class ClusterBrowser:
    """The notebook view of a namespace's clusters: a table, a picker and action buttons.

    ``load()`` lists the clusters (with their GPU counts) for the table and the picker; a button calls
    ``act(action, name)`` for the picked cluster and then reloads. A :class:`RayQueueError` from either
    is shown in ``message`` instead of raised. :func:`rayqueue_sdk.view_clusters` builds one for the cluster
    layer.

    Attributes (all ipywidgets): ``table`` (HTML), ``picker`` (Dropdown of cluster names),
    ``refresh_button``, ``down_button``, ``deactivate_button``, ``resume_button``, ``message`` (HTML),
    and ``widget`` (the VBox holding them, displayed by Jupyter).

    Example:
        >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
        >>> done = []
        >>> browser = ClusterBrowser(
        ...     "ds",
        ...     load=lambda: [(ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready"), 2)],
        ...     act=lambda action, name: done.append((action, name)),
        ... )
        >>> browser.picker.value, browser.gpus
        ('ws', {'ws': 2})
        >>> browser.down_button.click(); done, browser.message.value
        ([('down', 'ws')], 'down: ds/ws done')
    """

    def __init__(self, namespace: str, load: ClusterLoader, act: ClusterActor) -> None:
        import ipywidgets as w  # lazy: ipywidgets costs ~340 ms, paid only in a notebook

        self.namespace = namespace
        self._load = load
        self._act_on = act
        self.statuses: list[ClusterStatus] = []
        self.gpus: dict[str, int] = {}
        self.table = w.HTML()
        self.picker = w.Dropdown(description="cluster", options=[])
        self.refresh_button = w.Button(description="Refresh", icon="refresh")
        self.down_button = w.Button(description="Down", icon="trash", button_style="danger")
        self.deactivate_button = w.Button(description="Deactivate", icon="pause")
        self.resume_button = w.Button(description="Resume", icon="play")
        self.message = w.HTML()
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.down_button.on_click(lambda _b: self._act("down"))
        self.deactivate_button.on_click(lambda _b: self._act("deactivate"))
        self.resume_button.on_click(lambda _b: self._act("resume"))
        buttons = w.HBox([self.refresh_button, self.down_button, self.deactivate_button, self.resume_button])
        self.widget = w.VBox([self.table, w.HBox([self.picker]), buttons, self.message])
        self.refresh()

    def refresh(self) -> list[ClusterStatus]:
        """Re-read the clusters (one ``load()``) and redraw; returns the statuses."""
        try:
            found = sorted(self._load(), key=lambda pair: pair[0].name)
        except RayQueueError as err:
            self.message.value = f"<span style='color:#cf222e'>{_e(err)}</span>"
            return self.statuses
        self.statuses = [st for st, _ in found]
        self.gpus = {st.name: gpus for st, gpus in found}
        self.table.value = clusters_html(self.statuses, self.gpus)
        names = [st.name for st in self.statuses]
        current = self.picker.value
        self.picker.options = names
        self.picker.value = current if current in names else (names[0] if names else None)
        for button in (self.down_button, self.deactivate_button, self.resume_button):
            button.disabled = not names
        return self.statuses

    def _act(self, action: str) -> None:
        name = self.picker.value
        if not name:
            return
        try:
            self._act_on(action, name)
            self.message.value = f"{_e(action)}: {_e(self.namespace)}/{_e(name)} done"
        except RayQueueError as err:
            self.message.value = f"<span style='color:#cf222e'>{_e(action)} {_e(name)}: {_e(err)}</span>"
        self.refresh()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def __repr__(self) -> str:
        return f"ClusterBrowser(namespace={self.namespace!r}, clusters={[s.name for s in self.statuses]!r})"
