"""ipywidgets for notebooks: a cluster browser (:class:`ClusterBrowser`), a per-cluster status card
(:class:`ClusterCard`) and the details view (:func:`details_display`).

The browser shows a table of the namespace's clusters (name, queue, phase with Kueue's reason, position,
workers, GPUs, dashboard link), a cluster picker and buttons: refresh, down (with a confirmation),
deactivate and resume, each disabled when the server says the user may not use it. It is handed
callables: ``load()`` (one listing: every cluster's status with its GPU count), ``act(action, name)`` and
``permissions()``; :func:`rayqueue_sdk.cluster.view.view_clusters` wires them to the cluster and kube
layers, so this module never imports the cluster layer. Every display is a
:class:`~rayqueue_sdk.display.live.LiveDisplay`: the widget with ``text/plain`` and ``text/html``, updated
in place. ``ipywidgets`` is imported when a widget is built. Tokens are never put in a
widget: only names, Kueue's words and addresses.

Example:
    >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
    >>> html = clusters_html([ClusterStatus("ws", "ds", ClusterPhase.QUEUED, False, "queued", queue="q",
    ...                                     position=0, reason="Pending")], {"ws": 2})
    >>> ">queued (Pending)</td>" in html and "<td>0</td>" in html
    True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from html import escape
from typing import Any

from rayqueue_sdk.display.charts import sparkline
from rayqueue_sdk.display.console import idle_cell, idle_line, phase_text, workers_text
from rayqueue_sdk.display.live import LiveDisplay
from rayqueue_sdk.display.text import clusters_text, details_text, status_text
from rayqueue_sdk.display.views import DetailsView, StatusView
from rayqueue_sdk.errors import RayQueueError

__all__ = [
    "ACTIONS",
    "ClusterActor",
    "ClusterBrowser",
    "ClusterCard",
    "ClusterLoader",
    "ClusterPermissions",
    "DownConfirmation",
    "cluster_widget",
    "clusters_html",
    "details_display",
    "details_html",
    "show_widget",
    "status_html",
]

#: What a browser reads: every cluster of the namespace with its GPU count, in one listing.
ClusterLoader = Callable[[], Sequence[tuple["StatusView", int]]]
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


def clusters_html(statuses: Sequence[StatusView], gpus: dict[str, int] | None = None) -> str:
    """An HTML table of clusters (escaped; the phase coloured, the dashboard a link).

    Example:
        >>> clusters_html([]).count("<tr>")
        1
    """
    head = "".join(
        f"<th>{h}</th>"
        for h in ("name", "queue", "phase", "position", "workers", "GPUs", "idle", "dashboard")
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
            f"<td>{_e(idle_cell(st))}</td>",
            f"<td>{_link(st.dashboard_url)}</td>",
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return '<table class="rayqueue-clusters">' + "".join(rows) + "</table>"


def status_html(status: StatusView, gpus: int | None = None, utilisation: Sequence[float] = ()) -> str:
    """An HTML card for one cluster's status (escaped); with ``utilisation`` samples (GPU %, oldest first)
    a sparkline row with the idle countdown beside it.

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
        # while queued, when it may be admitted (no empty rows once admitted: the estimate is gone then)
        *(
            [("estimated admission", _e(status.eta.window())), ("basis", _e(status.eta.basis))]
            if status.eta
            else []
        ),
        ("Kueue message", _e(status.message)),
        ("workers", _e(workers_text(status))),
        ("GPUs", _e(gpus)),
        ("dashboard", _link(status.dashboard_url)),
        ("ray client", _e(status.cluster_uri)),
    ]
    idle = idle_line(status)
    if idle:
        rows.append(("scale to zero", _e(idle)))
    if utilisation:
        rows.append(("GPU use", sparkline(utilisation, countdown=idle).html))
    body = "".join(f"<tr><th style='text-align:left'>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f"<h4>{_e(status.namespace)}/{_e(status.name)}</h4><table>{body}</table>"


def cluster_widget(details: DetailsView) -> Any:
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

    Example::

        show_widget(cluster_widget(cluster.details(show=False)))
    """
    from IPython.display import display  # lazy: IPython.display costs ~310 ms, paid only in a notebook

    display(widget)


class ClusterCard:
    """A cluster's card in a notebook: phase with Kueue's reason, explanation, queue, position, priority,
    workers and addresses (an ``ipywidgets.HTML``, :attr:`view`, in a :class:`LiveDisplay`).

    ``Cluster.apply()`` shows one; ``wait_ready()`` feeds it every status the watch produces, and
    ``status()``/``details()`` their fresh reads, so the one output follows the cluster. Before anything
    was read (``status=None``) it shows ``intro``: lines said offline (what the configuration asks for).
    A status returned at the end of the cell that shows the card settles on it (:meth:`settle`), so the
    cell keeps one box.

    Example:
        >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
        >>> card = ClusterCard(ClusterStatus("ws", "ds", ClusterPhase.QUEUED, False, "queued", position=0))
        >>> card.update(ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready"))
        >>> card.bundle()["text/plain"].splitlines()[0], "ready" in card.widget.value
        ('ds/ws: ready', True)
        >>> ClusterCard(None, intro=["ds/ws: not read from the server yet"]).bundle()["text/plain"]
        'ds/ws: not read from the server yet'
    """

    def __init__(
        self,
        status: StatusView | None,
        gpus: int | None = None,
        *,
        intro: Sequence[str] = (),
        key: tuple[str, ...] | None = None,
    ) -> None:
        import ipywidgets as w  # lazy: ipywidgets costs ~340 ms, paid only in a notebook

        self.status = status
        self.gpus = gpus
        self.intro = list(intro)
        #: GPU utilisation samples (%, oldest first) for the sparkline; empty: no metrics, no sparkline
        self.utilisation: list[float] = []
        self.view = w.HTML(value=self._card_html())
        self.widget = self._layout(w)
        if key is None and status is not None:
            key = ("cluster", status.namespace, status.name)
        self.live = LiveDisplay(self.widget, self._plain, self._html, key=key, settle=self.settle)

    def _layout(self, w: Any) -> Any:
        """The widget displayed: the card alone (:class:`~rayqueue_sdk.display.controls.ClusterControls`
        adds its buttons)."""
        del w
        return self.view

    def _card_html(self) -> str:
        if self.status is None:
            lines = "".join(f"<div>{_e(line)}</div>" for line in self.intro[1:])
            title = f"<h4>{_e(self.intro[0])}</h4>" if self.intro else ""
            return f'<div class="rayqueue-card">{title}{lines}</div>'
        return f'<div class="rayqueue-card">{status_html(self.status, self.gpus, self.utilisation)}</div>'

    def _plain(self) -> str:
        if self.status is None:
            return "\n".join(self.intro)
        text = status_text(self.status)
        if self.utilisation:
            text += "\n" + sparkline(self.utilisation, countdown=idle_line(self.status)).text
        return text

    def set_utilisation(self, values: Sequence[float]) -> None:
        """Show GPU utilisation samples (%, oldest first) as a sparkline on the card (none when empty).

        Example:
            >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
            >>> card = ClusterCard(ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready"))
            >>> card.set_utilisation([0, 100]); card.bundle()["text/plain"].splitlines()[-1]
            'GPU ▁█ 100% now'
        """
        values = [float(v) for v in values]
        if values == self.utilisation:
            return
        self.utilisation = values
        self.view.value = self._card_html()
        self.live.refresh()

    def _html(self) -> str:
        return self._card_html()

    def bundle(self) -> dict[str, Any]:
        """The card's MIME bundle (see :meth:`LiveDisplay.bundle`)."""
        return self.live.bundle()

    def update(self, status: StatusView, gpus: int | None = None) -> None:
        """Show ``status`` in the widget and in the saved output (one ``update_display``)."""
        if status == self.status and (gpus is None or gpus == self.gpus):
            return
        self.status = status
        self.gpus = self.gpus if gpus is None else gpus
        self.view.value = self._card_html()
        self.live.refresh()

    def settle(self, status: StatusView) -> bool:
        """Whether the card already shows ``status`` (then a cell need not show it again).

        Example:
            >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
            >>> st = ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready")
            >>> ClusterCard(st).settle(st), ClusterCard(None).settle(st)
            (True, False)
        """
        return self.status is not None and status == self.status

    def _ipython_display_(self) -> None:
        self.live.show_once()

    def __repr__(self) -> str:
        if self.status is None:
            return f"ClusterCard({self.intro[0] if self.intro else 'not read yet'})"
        return f"ClusterCard({self.status.namespace}/{self.status.name}: {self.status.phase.value})"


def details_html(details: DetailsView) -> str:
    """The status card followed by a table of the head and every worker group (escaped).

    Example:
        >>> from rayqueue_sdk.cluster.observe import summarize
        >>> d = summarize({"metadata": {"name": "ws", "namespace": "ds"}, "spec": {"workerGroupSpecs": [
        ...     {"groupName": "gpu", "replicas": 2, "rayStartParams": {"num-gpus": "1"}}]}})
        >>> "<td>gpu</td>" in details_html(d)
        True
    """
    head = "".join(f"<th>{h}</th>" for h in ("group", "replicas", "min..max", "CPU", "memory", "GPUs"))
    rows = [f"<tr>{head}</tr>"]
    for g in ([details.head] if details.head else []) + list(details.groups):
        bounds = f"{g.min_replicas}..{g.max_replicas}" if g.min_replicas is not None else None
        cells = (g.name, g.replicas, bounds, g.cpu, g.memory, g.gpus)
        rows.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in cells) + "</tr>")
    shape = f"<h5>shape ({_e(details.gpus)} GPUs)</h5><table>{''.join(rows)}</table>"
    return f'<div class="rayqueue-details">{status_html(details.status, details.gpus)}{shape}</div>'


def details_display(details: DetailsView) -> LiveDisplay:
    """A :class:`LiveDisplay` of ``details`` (an ``ipywidgets.HTML`` with :func:`details_html`, and
    :func:`~rayqueue_sdk.display.text.details_text`); not shown yet.

    Example:
        >>> from rayqueue_sdk.cluster.observe import summarize
        >>> shown = details_display(summarize({"metadata": {"name": "ws", "namespace": "ds"}}))
        >>> sorted(shown.bundle())
        ['application/vnd.jupyter.widget-view+json', 'text/html', 'text/plain']
    """
    import ipywidgets as w  # lazy: ipywidgets costs ~340 ms, paid only in a notebook

    html = details_html(details)
    return LiveDisplay(w.HTML(value=html), lambda: details_text(details), lambda: html)


#: What a browser asks before enabling a button: ``{action: None}`` when the user may, else the reason
#: naming the missing verb and resource (e.g. ``"may not patch workloads.kueue.x-k8s.io in namespace 'ds'"``).
ClusterPermissions = Callable[[], Mapping[str, str | None]]

#: The actions of :class:`ClusterBrowser`'s buttons.
ACTIONS = ("down", "deactivate", "resume")


class DownConfirmation:
    """The row that asks before a RayCluster is deleted (ipywidgets ``w``): a question, "Confirm down" and
    "Cancel", for the :class:`ClusterBrowser` and a card's controls.

    :meth:`ask` shows it with a question (HTML); Confirm hides it and calls ``on_confirm()``; Cancel hides
    it. Attributes: ``box`` (the HBox, hidden until asked), ``text``, ``confirm_button``, ``cancel_button``.

    Example:
        >>> import ipywidgets as w
        >>> downs = []
        >>> row = DownConfirmation(w, lambda: downs.append(1))
        >>> row.ask("Delete RayCluster <b>ds/ws</b>?"); row.box.layout.display
        'flex'
        >>> row.confirm_button.click(); downs, row.box.layout.display, row.text.value
        ([1], 'none', '')
    """

    def __init__(self, w: Any, on_confirm: Callable[[], object]) -> None:
        self.text = w.HTML()
        self.confirm_button = w.Button(description="Confirm down", icon="trash", button_style="danger")
        self.cancel_button = w.Button(description="Cancel")
        self.box = w.HBox(
            [self.text, self.confirm_button, self.cancel_button], layout=w.Layout(display="none")
        )
        self._on_confirm = on_confirm
        self.confirm_button.on_click(lambda _b: self._confirmed())
        self.cancel_button.on_click(lambda _b: self.hide())

    def ask(self, question: str) -> None:
        """Show the row with ``question`` (HTML)."""
        self.text.value = question
        self.box.layout.display = "flex"

    def hide(self) -> None:
        """Hide the row and clear its question."""
        self.box.layout.display = "none"
        self.text.value = ""

    def _confirmed(self) -> None:
        self.hide()
        self._on_confirm()


class ClusterBrowser:
    """The notebook view of a namespace's clusters: a table, a picker and action buttons.

    ``load()`` lists the clusters (with their GPU counts) for the table and the picker; a button calls
    ``act(action, name)`` for the picked cluster and then reloads. ``permissions()`` (asked when the
    browser is built and on Refresh) says which actions the user may take: a button the user may not use
    is disabled, its tooltip naming the missing verb and resource. Down asks first: its click shows a
    confirmation with "Confirm down" and "Cancel". A :class:`RayQueueError` from any callable is shown in
    ``message`` instead of raised.

    The browser is one :class:`~rayqueue_sdk.display.live.LiveDisplay`: the widget with the table as
    ``text/html`` and ``text/plain``, rewritten in place on every refresh.

    Attributes (all ipywidgets): ``table`` (HTML), ``picker`` (Dropdown of cluster names),
    ``refresh_button``, ``down_button``, ``deactivate_button``, ``resume_button``, ``confirm`` (the
    confirmation box: ``confirm_text``, ``confirm_button``, ``cancel_button``), ``message`` (HTML), and
    ``widget`` (the VBox holding them, displayed by Jupyter).

    Example:
        >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
        >>> done = []
        >>> browser = ClusterBrowser(
        ...     "ds",
        ...     load=lambda: [(ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready"), 2)],
        ...     act=lambda action, name: done.append((action, name)),
        ...     permissions=lambda: {"down": None, "deactivate": "may not patch workloads.kueue.x-k8s.io"},
        ... )
        >>> browser.picker.value, browser.gpus
        ('ws', {'ws': 2})
        >>> browser.deactivate_button.disabled, browser.deactivate_button.tooltip
        (True, 'Deactivate: you may not patch workloads.kueue.x-k8s.io')
        >>> browser.down_button.click(); done, browser.confirm.layout.display
        ([], 'flex')
        >>> browser.confirm_button.click(); done, browser.message.value
        ([('down', 'ws')], 'down: ds/ws done')
    """

    def __init__(
        self,
        namespace: str,
        load: ClusterLoader,
        act: ClusterActor,
        permissions: ClusterPermissions | None = None,
    ) -> None:
        import ipywidgets as w  # lazy: ipywidgets costs ~340 ms, paid only in a notebook

        self.namespace = namespace
        self._load = load
        self._act_on = act
        self._permissions = permissions
        #: why each action is not allowed (``None``: allowed, or not known).
        self.denied: dict[str, str | None] = dict.fromkeys(ACTIONS)
        self.statuses: list[StatusView] = []
        self.gpus: dict[str, int] = {}
        self.table = w.HTML()
        self.picker = w.Dropdown(description="cluster", options=[])
        self.refresh_button = w.Button(
            description="Refresh", icon="refresh", tooltip="Read the clusters again"
        )
        self.down_button = w.Button(description="Down", icon="trash", button_style="danger")
        self.deactivate_button = w.Button(description="Deactivate", icon="pause")
        self.resume_button = w.Button(description="Resume", icon="play")
        self._down_row = row = DownConfirmation(w, lambda: self._act("down"))
        self.confirm, self.confirm_text = row.box, row.text
        self.confirm_button, self.cancel_button = row.confirm_button, row.cancel_button
        self.message = w.HTML()
        self.refresh_button.on_click(lambda _b: self.refresh(recheck=True))
        self.down_button.on_click(lambda _b: self._ask_down())
        self.deactivate_button.on_click(lambda _b: self._act("deactivate"))
        self.resume_button.on_click(lambda _b: self._act("resume"))
        buttons = w.HBox([self.refresh_button, self.down_button, self.deactivate_button, self.resume_button])
        self.widget = w.VBox([self.table, w.HBox([self.picker]), buttons, self.confirm, self.message])
        self.live = LiveDisplay(self.widget, self._plain, self._html)
        self.refresh(recheck=True)

    def _plain(self) -> str:
        return f"Ray clusters in namespace {self.namespace!r}:\n{clusters_text(self.statuses, self.gpus)}"

    def _html(self) -> str:
        return f"<h4>Ray clusters in {_e(self.namespace)}</h4>{self.table.value}{self.message.value}"

    def check_permissions(self) -> dict[str, str | None]:
        """Ask ``permissions()`` again (a failed check leaves the buttons enabled: the action will say)."""
        if self._permissions is None:
            return self.denied
        try:
            answer = self._permissions()
        except RayQueueError as err:
            self.message.value = f"<span style='color:#cf222e'>permissions unknown: {_e(err)}</span>"
            answer = {}
        self.denied = {action: answer.get(action) for action in ACTIONS}
        return self.denied

    def refresh(self, recheck: bool = False) -> list[StatusView]:
        """Re-read the clusters (one ``load()``; ``recheck``: the permissions too) and redraw; returns
        the statuses."""
        if recheck:
            self.check_permissions()
        try:
            found = sorted(self._load(), key=lambda pair: pair[0].name)
        except RayQueueError as err:
            self.message.value = f"<span style='color:#cf222e'>{_e(err)}</span>"
            self.live.refresh()
            return self.statuses
        self.statuses = [st for st, _ in found]
        self.gpus = {st.name: gpus for st, gpus in found}
        self.table.value = clusters_html(self.statuses, self.gpus)
        names = [st.name for st in self.statuses]
        current = self.picker.value
        self.picker.options = names
        self.picker.value = current if current in names else (names[0] if names else None)
        buttons = {
            "down": self.down_button,
            "deactivate": self.deactivate_button,
            "resume": self.resume_button,
        }
        for action, button in buttons.items():
            reason = self.denied.get(action)
            button.disabled = not names or reason is not None
            button.tooltip = f"{button.description}: you {reason}" if reason else _TOOLTIPS[action]
        if not names or self.denied.get("down"):
            self._down_row.hide()
        self.live.refresh()
        return self.statuses

    def _ask_down(self) -> None:
        name = self.picker.value
        if not name or self.denied.get("down"):
            return
        self._down_row.ask(
            f"Delete RayCluster <b>{_e(self.namespace)}/{_e(name)}</b> and give its resources back?"
        )

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

    def _ipython_display_(self) -> None:
        self.live.show_once()

    def __repr__(self) -> str:
        return f"ClusterBrowser(namespace={self.namespace!r}, clusters={[s.name for s in self.statuses]!r})"


_TOOLTIPS = {
    "down": "Delete the picked RayCluster (asks to confirm)",
    "deactivate": "Give the quota back, keep the cluster (Workload spec.active=false)",
    "resume": "Requeue a deactivated cluster (Workload spec.active=true)",
}
