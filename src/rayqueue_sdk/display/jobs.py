"""The job view: a Ray job's status, the tail of its log and a Stop button (:class:`JobCard`), as a
notebook widget with ``text/plain`` and ``text/html`` in the same output, and as a rich panel for a
console (:func:`job_panel`, fits 80 columns).

Like the cluster widgets it never imports the job layer: it is handed a status (:class:`JobView`, which
:class:`~rayqueue_sdk.job.status.RayJobStatus` satisfies), the log text, and callables: ``stop()`` and
``permission(status)`` (``None`` when the user may stop the job in that state, else the server's answer naming
the missing verb and resource; :meth:`rayqueue_sdk.job.rayjob.RayJob.stop_permission` asks with a
SelfSubjectAccessReview; asked again when the job starts or stops running).
The card updates in place when the job's wait reports a change (no polling of its own). Tokens never
reach it: only names, phases, Kueue's and Ray's words and the job's own output.

Example:
    >>> from rayqueue_sdk.job.status import RayJobStatus
    >>> from rayqueue_sdk.admission.cluster import JobPhase
    >>> st = RayJobStatus("train", "ds", JobPhase.RUNNING, "running on RayCluster 'train-x2k4p'",
    ...                   cluster_name="train-x2k4p", job_id="train-abc", owns_cluster=True)
    >>> print(job_text(st, "epoch 1\\nepoch 2"))
    ds/train: running
      running on RayCluster 'train-x2k4p'
      cluster train-x2k4p, Ray job train-abc
      last log lines:
        epoch 1
        epoch 2
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from html import escape
from typing import Any, Protocol

from rayqueue_sdk.admission.eta import AdmissionEstimate
from rayqueue_sdk.admission.phases import JobPhase
from rayqueue_sdk.display.live import LiveDisplay, show_value
from rayqueue_sdk.display.text import WIDTH
from rayqueue_sdk.errors import RayQueueError

__all__ = [
    "LOG_TAIL_LINES",
    "JobCard",
    "JobView",
    "job_html",
    "job_panel",
    "job_text",
    "log_tail",
    "show_job_status",
]

#: How many log lines the job view shows.
LOG_TAIL_LINES = 12

_COLOURS = {
    "succeeded": "#1a7f37",
    "running": "#1a7f37",
    "starting": "#9a6700",
    "queued": "#0969da",
    "requeued": "#0969da",
    "failed": "#cf222e",
    "preempted": "#cf222e",
    "stopped": "#8250df",
    "deactivated": "#8250df",
}
_STYLES = {
    "succeeded": "bold green",
    "running": "green",
    "starting": "yellow",
    "queued": "cyan",
    "requeued": "cyan",
    "failed": "bold red",
    "preempted": "bold red",
    "stopped": "magenta",
    "deactivated": "magenta",
}


class JobView(Protocol):
    """A job's status as the job view reads it (read-only).

    Example:
        >>> JobView.__name__
        'JobView'
    """

    @property
    def name(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def phase(self) -> JobPhase: ...
    @property
    def explanation(self) -> str: ...
    @property
    def reason(self) -> str | None: ...
    @property
    def position(self) -> int | None: ...
    @property
    def cluster_name(self) -> str | None: ...
    @property
    def job_id(self) -> str | None: ...
    @property
    def eta(self) -> AdmissionEstimate | None: ...


def log_tail(text: str | None, lines: int = LOG_TAIL_LINES) -> list[str]:
    """The last ``lines`` non-empty-at-the-end lines of ``text``.

    Example:
        >>> log_tail("a\\nb\\nc\\n\\n", 2)
        ['b', 'c']
    """
    found = (text or "").rstrip("\n").splitlines()
    return found[-lines:] if lines > 0 else []


def _phase(status: JobView) -> str:
    value = status.phase.value
    return f"{value} ({status.reason})" if status.reason and status.reason.lower() != value else value


def _where(status: JobView) -> str | None:
    parts = []
    if status.position is not None:
        parts.append(f"position {status.position} in its LocalQueue")
    if status.eta is not None:
        parts.append(f"estimated admission {status.eta.text()}")
    if status.cluster_name:
        parts.append(f"cluster {status.cluster_name}")
    if status.job_id:
        parts.append(f"Ray job {status.job_id}")
    return ", ".join(parts) or None


def job_text(status: JobView, logs: str | None = None, lines: int = LOG_TAIL_LINES) -> str:
    """The job view as plain text (``text/plain`` of the notebook output, and its repr).

    Example:
        >>> from rayqueue_sdk.job.status import RayJobStatus
        >>> from rayqueue_sdk.admission.cluster import JobPhase
        >>> job_text(RayJobStatus("j", "ds", JobPhase.QUEUED, "queued in LocalQueue 'q' at position 1",
        ...                       position=1)).splitlines()[:2]
        ['ds/j: queued', "  queued in LocalQueue 'q' at position 1"]
    """
    out = [f"{status.namespace}/{status.name}: {_phase(status)}"]
    out += textwrap.wrap(status.explanation, WIDTH, initial_indent="  ", subsequent_indent="    ") or ["  "]
    where = _where(status)
    if where:
        out += textwrap.wrap(where, WIDTH, initial_indent="  ", subsequent_indent="    ")
    tail = log_tail(logs, lines)
    if tail:
        out.append("  last log lines:")
        out.extend(f"    {line}" for line in tail)
    return "\n".join(out)


def job_html(status: JobView, logs: str | None = None, lines: int = LOG_TAIL_LINES) -> str:
    """The job view as HTML (escaped): the phase coloured, the explanation, where it runs, the log tail.

    Example:
        >>> from rayqueue_sdk.job.status import RayJobStatus
        >>> from rayqueue_sdk.admission.cluster import JobPhase
        >>> html = job_html(RayJobStatus("j", "ds", JobPhase.FAILED, "the job failed"), "<b>boom</b>")
        >>> ">failed</span>" in html and "&lt;b&gt;boom&lt;/b&gt;" in html
        True
    """
    colour = _COLOURS.get(status.phase.value, "#57606a")
    where = _where(status)
    body = [
        f"<h4>{escape(status.namespace)}/{escape(status.name)} "
        f"<span style='color:{colour}'>{escape(_phase(status))}</span></h4>",
        f"<div>{escape(status.explanation)}</div>",
    ]
    if where:
        body.append(f"<div style='color:#57606a'>{escape(where)}</div>")
    tail = log_tail(logs, lines)
    if tail:
        text = escape("\n".join(tail))
        body.append(f"<pre style='max-height:16em;overflow:auto;margin:4px 0'>{text}</pre>")
    return "<div class='rayqueue-job'>" + "".join(body) + "</div>"


def job_panel(status: JobView, logs: str | None = None, lines: int = LOG_TAIL_LINES) -> Any:
    """The job view as a rich ``Panel`` for a console (80 columns: long lines fold).

    Example:
        >>> from rayqueue_sdk.display.console import render_text
        >>> from rayqueue_sdk.job.status import RayJobStatus
        >>> from rayqueue_sdk.admission.cluster import JobPhase
        >>> text = render_text(job_panel(RayJobStatus("j", "ds", JobPhase.SUCCEEDED, "the job succeeded"),
        ...                              "done " * 40), width=80)
        >>> "succeeded" in text and max(len(line) for line in text.splitlines()) <= 80
        True
    """
    # lazy: rich costs ~30 ms, paid only when something is shown
    from rich.console import Group
    from rich.panel import Panel
    from rich.text import Text

    parts: list[Any] = [Text(status.explanation)]
    where = _where(status)
    if where:
        parts.append(Text(where, style="dim"))
    tail = log_tail(logs, lines)
    if tail:
        parts.append(Text("\n".join(tail), style="dim", overflow="fold"))
    title = Text(f"{status.namespace}/{status.name}: ")
    title.append(_phase(status), style=_STYLES.get(status.phase.value, ""))
    return Panel(Group(*parts), title=title, title_align="left", width=80)


class JobCard:
    """A job's card in a notebook: :func:`job_html` in an ``ipywidgets.HTML`` with a Stop button and a
    message line, in a :class:`LiveDisplay` (the widget, ``text/plain`` and ``text/html`` in one output,
    updated in place by :meth:`update`).

    Stop is disabled once the job is over, and when ``permission(status)`` says the user may not stop it
    (the tooltip names the missing verb and resource); the answer is asked again when the job starts or
    stops running (a running job stops another way than a queued one). A :class:`RayQueueError` from
    ``stop()`` is shown on the card, not raised.

    Example:
        >>> from rayqueue_sdk.job.status import RayJobStatus
        >>> from rayqueue_sdk.admission.cluster import JobPhase
        >>> stopped = []
        >>> card = JobCard(RayJobStatus("j", "ds", JobPhase.RUNNING, "running"), "step 1",
        ...                stop=lambda: stopped.append(1) or True,
        ...                permission=lambda status: None)
        >>> card.stop_button.disabled, card.stop_button.tooltip
        (False, 'Stop the job')
        >>> card.stop_button.click(); stopped, card.message.value
        ([1], 'stop: asked (ds/j)')
        >>> card.update(RayJobStatus("j", "ds", JobPhase.STOPPED, "stopped by the user"))
        >>> card.stop_button.disabled, card.bundle()["text/plain"].splitlines()[0]
        (True, 'ds/j: stopped')
        >>> denied = JobCard(RayJobStatus("j", "ds", JobPhase.QUEUED, "queued"), None, stop=lambda: True,
        ...                  permission=lambda st: "may not patch workloads.kueue.x-k8s.io in namespace 'ds'")
        >>> denied.stop_button.disabled, denied.stop_button.tooltip
        (True, "Stop: you may not patch workloads.kueue.x-k8s.io in namespace 'ds'")
    """

    def __init__(
        self,
        status: JobView,
        logs: str | None = None,
        *,
        stop: Callable[[], object] | None = None,
        permission: Callable[[Any], str | None] | None = None,
    ) -> None:
        import ipywidgets as w  # lazy: ipywidgets costs ~340 ms, paid only in a notebook

        self.status = status
        self.logs = logs
        self._stop = stop
        self._permission = permission
        self.denied: str | None = None
        self.html = w.HTML(value=job_html(status, logs))
        self.stop_button = w.Button(description="Stop", icon="stop", button_style="warning")
        self.stop_button.on_click(lambda _b: self._stop_clicked())
        self.message = w.HTML()
        self.widget = w.VBox([self.html, w.HBox([self.stop_button]), self.message])
        self.live = LiveDisplay(
            self.widget,
            self._plain,
            self._html,
            key=("job", status.namespace, status.name),
            settle=lambda st: st == self.status,
        )
        self.check_permission()

    def _plain(self) -> str:
        return job_text(self.status, self.logs)

    def _html(self) -> str:
        return str(self.html.value) + (f"<div>{self.message.value}</div>" if self.message.value else "")

    def bundle(self) -> dict[str, Any]:
        """The card's MIME bundle (see :meth:`LiveDisplay.bundle`)."""
        return self.live.bundle()

    def check_permission(self) -> str | None:
        """Ask ``permission(status)`` (a failed check leaves Stop enabled: the action will say); redraw."""
        if self._permission is not None:
            try:
                self.denied = self._permission(self.status)
            except RayQueueError as err:
                self.denied = None
                why = escape(str(err))
                self.message.value = f"<span style='color:#cf222e'>permissions unknown: {why}</span>"
        self._buttons()
        return self.denied

    def _buttons(self) -> None:
        over = self.status.phase.terminal
        self.stop_button.disabled = self._stop is None or over or self.denied is not None
        if self.denied:
            self.stop_button.tooltip = f"Stop: you {self.denied}"
        elif over:
            self.stop_button.tooltip = f"the job is {self.status.phase.value}"
        else:
            self.stop_button.tooltip = "Stop the job"

    def update(self, status: JobView, logs: str | None = None) -> None:
        """Show ``status`` (and ``logs``, when given) in the widget and the saved output."""
        if status == self.status and (logs is None or logs == self.logs):
            return
        running_before = self.status.phase is JobPhase.RUNNING
        self.status = status
        if logs is not None:
            self.logs = logs
        self.html.value = job_html(self.status, self.logs)
        if (status.phase is JobPhase.RUNNING) != running_before and not status.phase.terminal:
            self.check_permission()  # a running job stops through Ray, a queued one through Kueue
        self._buttons()
        self.live.refresh()

    def _stop_clicked(self) -> None:
        if self._stop is None or self.stop_button.disabled:
            return
        where = f"{self.status.namespace}/{self.status.name}"
        try:
            changed = self._stop()
            self.message.value = f"stop: {'asked' if changed else 'nothing to stop'} ({escape(where)})"
        except RayQueueError as err:
            why = escape(str(err))
            self.message.value = f"<span style='color:#cf222e'>stop {escape(where)}: {why}</span>"
        self.live.refresh()

    def _ipython_display_(self) -> None:
        self.live.show_once()

    def __repr__(self) -> str:
        return f"JobCard({self.status.namespace}/{self.status.name}: {self.status.phase.value})"


def show_job_status(status: JobView) -> None:
    """Show a job's status as a cell's value: its card (``text/plain`` and ``text/html``, no log tail),
    unless the cell already shows the job's view with that status.

    Example:
        >>> from rayqueue_sdk.job.status import RayJobStatus
        >>> show_job_status(RayJobStatus("j", "ds", JobPhase.SUCCEEDED, "the job succeeded"))
        ds/j: succeeded
          the job succeeded
    """
    show_value(("job", status.namespace, status.name), status, job_text, job_html)
