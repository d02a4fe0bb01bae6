"""The queue view: for each LocalQueue the reader can see, usage against nominal quota and borrowing per
flavor and resource, fair sharing, admission checks, the pending workloads in admission order (priority,
owner, Kueue's reason; the reader's own marked) and, for the reader's pending workloads, who is ahead and why.

Three renderings say the same things: plain text (:func:`queues_text`, the ``text/plain`` of the notebook
output, 80 columns), HTML (:func:`queues_html`) and rich for a console (:func:`queues_renderable`, fits 80
columns). :class:`QueueView` is the notebook display: an ``ipywidgets`` box with a Refresh button, in one
:class:`~rayqueue_sdk.display.live.LiveDisplay` carrying the widget, the text and the HTML. It is handed a
``load()`` callable (:func:`rayqueue_sdk.queues.overview.view_queues` wires it to the one read), so this
module reads nothing itself.

Example:
    >>> from rayqueue_sdk.admission.overview import build_overview
    >>> ov = build_overview("ds", [{"metadata": {"name": "q", "namespace": "ds"},
    ...                             "spec": {"clusterQueue": "cq"}}], [], [])
    >>> print(queues_text(ov))
    LocalQueue ds/q -> ClusterQueue cq
      quota: ClusterQueue cq does not exist (its workloads stay pending)
      no pending workloads
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from html import escape
from typing import Any

from rayqueue_sdk.admission.overview import (
    ClusterQueueSummary,
    QueueOverview,
    QueueSummary,
    ResourceQuota,
    WorkloadEntry,
    format_amount,
)
from rayqueue_sdk.display.live import LiveDisplay
from rayqueue_sdk.errors import RayQueueError

__all__ = [
    "QueueLoader",
    "QueueView",
    "print_queues",
    "queue_header",
    "queue_text",
    "queues_html",
    "queues_renderable",
    "queues_text",
    "quota_text",
    "workload_reason",
]

#: What a :class:`QueueView` reads on every refresh: the whole overview, in one call.
QueueLoader = Callable[[], QueueOverview]

_WIDTH = 80
_MINE = "*"


def _wrap(text: str, indent: str = "  ") -> list[str]:
    return textwrap.wrap(text, _WIDTH, initial_indent=indent, subsequent_indent=indent + "  ") or [indent]


def queue_header(q: QueueSummary) -> str:
    """One line naming the LocalQueue, its ClusterQueue, cohort and strategy.

    Example:
        >>> queue_header(QueueSummary("q", "ds", "cq", default=True))
        'LocalQueue ds/q (default) -> ClusterQueue cq'
    """
    text = f"LocalQueue {q.namespace}/{q.name}{' (default)' if q.default else ''} -> ClusterQueue "
    text += q.cluster_queue_name or "-"
    cq = q.cluster_queue
    if cq is not None:
        extras = [f"cohort {cq.cohort}"] if cq.cohort else []
        if cq.strategy != "BestEffortFIFO":
            extras.append(cq.strategy)
        if cq.active is False:
            extras.append("inactive")
        if extras:
            text += f" ({', '.join(extras)})"
    return text


def quota_text(r: ResourceQuota) -> str:
    """``used/nominal`` of one flavor and resource, with what is borrowed.

    Example:
        >>> from decimal import Decimal
        >>> quota_text(ResourceQuota("f", "cpu", Decimal(4), Decimal(6), Decimal(2)))
        '6/4 (borrowed 2)'
    """
    text = f"{format_amount(r.resource, r.used)}/{format_amount(r.resource, r.nominal)}"
    if r.borrowed:
        text += f" (borrowed {format_amount(r.resource, r.borrowed)})"
    return text


def _no_quota(overview: QueueOverview, q: QueueSummary) -> str:
    if not overview.cluster_queues_readable:
        return "quota: ClusterQueue not readable"
    return f"quota: ClusterQueue {q.cluster_queue_name} does not exist (its workloads stay pending)"


def _cq_lines(overview: QueueOverview, cq: ClusterQueueSummary) -> list[str]:
    lines = []
    cohort = overview.cohort_text(cq)
    if cohort:
        lines.append(cohort)
    if cq.fair_weight is not None or cq.weighted_share is not None:
        lines.append(f"fair sharing: weight {cq.fair_weight or '1'}, weighted share {cq.weighted_share or 0}")
    if cq.admission_checks:
        lines.append(f"admission checks: {', '.join(cq.admission_checks)}")
    return lines


def workload_reason(w: WorkloadEntry) -> str:
    """Kueue's reason and message for a workload, with its admission checks' states.

    Example:
        >>> workload_reason(WorkloadEntry("w", "ds", "q", "pending", reason="Pending", message="no quota"))
        'Pending: no quota'
    """
    text = ": ".join(x for x in (w.reason, w.message) if x)
    if w.admission_checks:
        checks = ", ".join(
            f"{c.name} {c.state}" + (f" (retry {c.retry_count})" if c.retry_count else "")
            for c in w.admission_checks
        )
        text = f"{text}; checks: {checks}" if text else f"checks: {checks}"
    return text or "-"


def _priority(w: WorkloadEntry) -> str:
    return f"{w.priority} ({w.priority_class})" if w.priority_class else str(w.priority)


def queue_text(overview: QueueOverview, q: QueueSummary) -> str:
    """One queue as plain text (80 columns): header, quota lines, pending in order, the reader's answers.

    Example:
        >>> ov = QueueOverview("ds", (QueueSummary("q", "ds", "cq"),))
        >>> queue_text(ov, ov.queues[0]).splitlines()[-1]
        '  no pending workloads'
    """
    lines = _wrap(queue_header(q), "")
    cq = q.cluster_queue
    if cq is None:
        lines += _wrap(_no_quota(overview, q))
    else:
        for r in cq.quotas:
            lines += _wrap(f"{r.flavor} {r.resource}: {quota_text(r)}")
        for extra in _cq_lines(overview, cq):
            lines += _wrap(extra)
    for w in q.holding:
        state = "admitted" if w.state == "admitted" else "quota reserved"
        lines += _wrap(
            f"{state}: {w.label} priority {_priority(w)}"
            + (f" - {workload_reason(w)}" if w.admission_checks else "")
        )
    if not q.pending:
        lines.append("  no pending workloads")
    else:
        lines.append(f"  pending ({len(q.pending)}, admission order; {_MINE} yours):")
        for w in q.pending:
            mark = _MINE if w.mine else " "
            lines += _wrap(
                f"{mark}{w.position}. {w.label} [{w.owner_kind or 'Workload'}] priority {_priority(w)}"
                f" - {workload_reason(w)}",
                "   ",
            )
    if q.hidden_pending:
        lines += _wrap(f"{q.hidden_pending} more pending from namespaces you cannot read")
    for w in q.pending:
        if w.mine and w.local_queue == q.name and w.namespace == q.namespace:
            lines += _wrap(f"{w.label}: {overview.ahead_text(w)}")
            if w.eta is not None:
                lines += _wrap(f"{w.label}: estimated admission {w.eta.text()}")
    return "\n".join(lines)


def queues_text(overview: QueueOverview) -> str:
    """Every queue of the overview as plain text, then the notes.

    Example:
        >>> queues_text(QueueOverview("ds"))
        "no LocalQueues in namespace 'ds'"
    """
    if not overview.queues:
        blocks = [f"no LocalQueues in namespace {overview.namespace!r}"]
    else:
        blocks = [queue_text(overview, q) for q in overview.queues]
    notes = [line for note in overview.notes for line in _wrap(f"note: {note}", "")]
    return "\n\n".join(blocks) + ("\n" + "\n".join(notes) if notes else "")


def _e(value: object) -> str:
    return escape("-" if value is None else str(value))


def _bar(r: ResourceQuota) -> str:
    total = max(r.nominal, r.used) or 1
    used = min(100, int(100 * min(r.used, r.nominal) / total))
    borrowed = min(100 - used, int(100 * r.borrowed / total))
    return (
        '<div style="width:120px;height:8px;background:#eaeef2;display:inline-block">'
        f'<div style="width:{used}%;height:8px;background:#0969da;float:left"></div>'
        f'<div style="width:{borrowed}%;height:8px;background:#bf8700;float:left"></div></div>'
    )


def _queue_html(overview: QueueOverview, q: QueueSummary) -> str:
    parts = [f"<h4>{_e(queue_header(q))}</h4>"]
    cq = q.cluster_queue
    if cq is None:
        parts.append(f"<p>{_e(_no_quota(overview, q))}</p>")
    else:
        head = "".join(f"<th>{h}</th>" for h in ("flavor", "resource", "used/nominal", "borrowed", ""))
        rows = [f"<tr>{head}</tr>"]
        for r in cq.quotas:
            cells = (r.flavor, r.resource, quota_text(r).split(" ")[0], format_amount(r.resource, r.borrowed))
            rows.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in cells) + f"<td>{_bar(r)}</td></tr>")
        parts.append(f'<table class="rayqueue-quota">{"".join(rows)}</table>')
        parts += [f"<p>{_e(line)}</p>" for line in _cq_lines(overview, cq)]
    if q.holding:
        items = "".join(
            f"<li>{_e(w.label)} ({_e(w.state)}): {_e(workload_reason(w))}</li>" for w in q.holding
        )
        parts.append(f"<p>holding quota:</p><ul>{items}</ul>")
    if q.pending:
        cols = ("#", "workload", "owner", "priority", "Kueue's reason", "estimated admission")
        head = "".join(f"<th>{h}</th>" for h in cols)
        rows = [f"<tr>{head}</tr>"]
        for w in q.pending:
            style = ' style="background:#fff8c5;font-weight:bold" class="rayqueue-mine"' if w.mine else ""
            eta = "" if w.eta is None else w.eta.window()
            row = (w.position, w.label, w.owner, _priority(w), workload_reason(w), eta)
            rows.append(f"<tr{style}>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>")
        parts.append(f'<table class="rayqueue-pending">{"".join(rows)}</table>')
    else:
        parts.append("<p>no pending workloads</p>")
    if q.hidden_pending:
        parts.append(f"<p>{q.hidden_pending} more pending from namespaces you cannot read</p>")
    answers = [
        f"<li><b>{_e(w.label)}</b>: {_e(overview.ahead_text(w))}</li>"
        for w in q.pending
        if w.mine and w.local_queue == q.name and w.namespace == q.namespace
    ]
    if answers:
        parts.append(f'<ul class="rayqueue-ahead">{"".join(answers)}</ul>')
    return "".join(parts)


def queues_html(overview: QueueOverview) -> str:
    """The overview as HTML (escaped; the reader's pending rows highlighted).

    Example:
        >>> "no LocalQueues" in queues_html(QueueOverview("ds"))
        True
    """
    if not overview.queues:
        body = f"<p>no LocalQueues in namespace {_e(overview.namespace)}</p>"
    else:
        body = "".join(_queue_html(overview, q) for q in overview.queues)
    notes = "".join(f"<p><i>note: {_e(n)}</i></p>" for n in overview.notes)
    return f'<div class="rayqueue-queues">{body}{notes}</div>'


def queues_renderable(overview: QueueOverview) -> Any:
    """A rich renderable of the overview (a group of tables) that fits 80 columns.

    Example:
        >>> from rayqueue_sdk.display.console import render_text
        >>> "no LocalQueues" in render_text(queues_renderable(QueueOverview("ds")), width=80)
        True
    """
    # lazy: rich costs ~30 ms, paid only when something is shown
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    if not overview.queues:
        return Text(f"no LocalQueues in namespace {overview.namespace!r}")
    items: list[Any] = []
    for q in overview.queues:
        items.append(Text(queue_header(q), style="bold"))
        cq = q.cluster_queue
        if cq is None:
            items.append(Text(f"  {_no_quota(overview, q)}"))
        else:
            quota = Table(box=None, padding=(0, 1), show_edge=False)
            for column in ("flavor", "resource", "used/nominal", "borrowed"):
                quota.add_column(column, overflow="fold")
            for r in cq.quotas:
                style = "yellow" if r.borrowed else ""
                quota.add_row(
                    r.flavor,
                    r.resource,
                    Text(quota_text(r).split(" ")[0], style=style),
                    format_amount(r.resource, r.borrowed),
                )
            items.append(quota)
            items += [Text(f"  {line}") for line in _cq_lines(overview, cq)]
        for w in q.holding:
            state = "admitted" if w.state == "admitted" else "quota reserved"
            extra = f" - {workload_reason(w)}" if w.admission_checks else ""
            items.append(Text(f"  {state}: {w.label} priority {_priority(w)}{extra}"))
        if q.pending:
            table = Table(title=f"pending ({len(q.pending)})", padding=(0, 1))
            table.add_column("#", no_wrap=True)
            table.add_column("workload", overflow="fold", max_width=24)
            table.add_column("priority", overflow="fold", max_width=18)
            table.add_column("Kueue's reason", overflow="fold")
            for w in q.pending:
                style = "bold yellow" if w.mine else ""
                table.add_row(
                    f"{_MINE if w.mine else ''}{w.position}",
                    Text(w.label, style=style),
                    _priority(w),
                    workload_reason(w),
                )
            items.append(table)
        else:
            items.append(Text("  no pending workloads"))
        if q.hidden_pending:
            items.append(Text(f"  {q.hidden_pending} more pending from namespaces you cannot read"))
        for w in q.pending:
            if w.mine and w.local_queue == q.name and w.namespace == q.namespace:
                items.append(Text(f"  {w.label}: {overview.ahead_text(w)}", style="bold"))
    items += [Text(f"note: {n}", style="dim") for n in overview.notes]
    return Group(*items)


def print_queues(overview: QueueOverview, console: Any = None) -> None:
    """Print :func:`queues_renderable` to ``console`` (default: a new rich console on stdout).

    Example:
        >>> from io import StringIO
        >>> from rich.console import Console
        >>> out = Console(file=StringIO(), width=100)
        >>> print_queues(QueueOverview("ds", (QueueSummary("q", "ds", "cq"),)), console=out)
        >>> out.file.getvalue().splitlines()[0]
        'LocalQueue ds/q -> ClusterQueue cq'

        On a namespace's queues (not run here)::

            print_queues(queue_overview("ds-team"))
    """
    from rich.console import Console  # lazy: rich costs ~30 ms, paid only when something is shown

    (console or Console()).print(queues_renderable(overview))


class QueueView:
    """The notebook queue view: the overview as HTML in an ``ipywidgets`` box with a Refresh button.

    ``load()`` reads the overview (one call, a constant number of API requests); Refresh reads it again and
    rewrites the one output in place (widget, ``text/plain`` and ``text/html``). An error while loading is
    shown in ``message``, never raised from a click. ``overview`` is the last one read.

    Attributes (ipywidgets): ``html`` (HTML), ``refresh_button``, ``message`` (HTML), ``widget`` (the VBox).

    Example:
        >>> view = QueueView(lambda: QueueOverview("ds"))
        >>> view.bundle()["text/plain"]
        "no LocalQueues in namespace 'ds'"
        >>> sorted(view.bundle())
        ['application/vnd.jupyter.widget-view+json', 'text/html', 'text/plain']
    """

    def __init__(self, load: QueueLoader) -> None:
        import ipywidgets as w  # lazy: ipywidgets costs ~340 ms, paid only in a notebook

        self._load = load
        self.overview = load()
        self.html = w.HTML(value=queues_html(self.overview))
        self.refresh_button = w.Button(description="Refresh", icon="refresh", tooltip="read the queues again")
        self.message = w.HTML(value="")
        self.widget = w.VBox([self.refresh_button, self.html, self.message])
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.live = LiveDisplay(
            self.widget, lambda: queues_text(self.overview), lambda: queues_html(self.overview)
        )

    def bundle(self) -> dict[str, Any]:
        """The view's MIME bundle (widget, ``text/plain``, ``text/html``)."""
        return self.live.bundle()

    def refresh(self) -> QueueOverview:
        """Read the overview again and show it; an error is shown in ``message`` and the last one kept."""
        try:
            self.overview = self._load()
        except RayQueueError as err:
            self.message.value = f'<span style="color:#cf222e">{escape(str(err))}</span>'
            return self.overview
        self.message.value = ""
        self.html.value = queues_html(self.overview)
        self.live.refresh()
        return self.overview

    def _ipython_display_(self) -> None:
        self.live.show_once()

    def __repr__(self) -> str:
        return queues_text(self.overview)
