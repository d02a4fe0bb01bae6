"""The one progress line of a wait (:func:`wait_progress`), wherever it runs, with no logging set up.

- In a notebook: one output (a :class:`NotebookProgress`, an ``ipywidgets.HTML`` in a
  :class:`~rayqueue_sdk.display.live.LiveDisplay`, with ``text/plain`` and ``text/html``) that each change
  rewrites in place, ending on the final state or the error in a line.
- In a terminal: rich's live status line (:func:`~rayqueue_sdk.display.console.progress_line`), then the
  final state on a line of its own.
- Elsewhere (a pipe, CI): one plain line on stderr per change.

The line only changes when the wait reports a change (phase, explanation, position): nothing polls. A
wait that shows its progress this way logs it at ``DEBUG`` (:func:`progress_log_level`), so a notebook
with logging configured gets no stderr box per change as well.

Example:
    >>> import io
    >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
    >>> out = io.StringIO()
    >>> with wait_progress(show=None, stream=out) as line:
    ...     line(ClusterStatus("ws", "ds", ClusterPhase.QUEUED, False, "queued at position 0"))
    ...     line(ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready (2/2 workers ready)"))
    >>> print(out.getvalue(), end="")
    ds/ws: queued at position 0
    ds/ws: ready (2/2 workers ready)
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from collections.abc import Callable, Iterator
from html import escape
from typing import IO, Any

from rayqueue_sdk.display.console import PHASE_STYLES, phase_text, progress_line
from rayqueue_sdk.display.environment import is_notebook, is_terminal
from rayqueue_sdk.display.live import LiveDisplay
from rayqueue_sdk.display.text import status_text
from rayqueue_sdk.display.views import StatusView
from rayqueue_sdk.display.widgets import status_html

__all__ = ["NotebookProgress", "progress_log_level", "progress_text", "wait_progress"]

_COLOURS = {"ready": "#1a7f37", "queued": "#0969da", "failed": "#cf222e", "preempted": "#cf222e"}


def progress_text(status: StatusView) -> str:
    """The progress line's words: the explanation and, while queued, the admission estimate.

    Example:
        >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
        >>> progress_text(ClusterStatus("ws", "ds", ClusterPhase.QUEUED, False, "queued"))
        'queued'
    """
    if status.eta is None:
        return status.explanation
    return f"{status.explanation} (estimated admission: {status.eta.text()})"


def _first_line(error: BaseException) -> str:
    text = str(error).split(" (see docs/", 1)[0]
    return text.splitlines()[0] if text else type(error).__name__


class NotebookProgress:
    """One notebook output that follows a wait: the phase (coloured), the explanation and the seconds
    since the wait began; :meth:`update` rewrites it in place, :meth:`finish` leaves the last word.

    Example:
        >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
        >>> line = NotebookProgress(widget=False)
        >>> st = ClusterStatus("ws", "ds", ClusterPhase.STARTING, False, "starting, 0/2 workers ready")
        >>> line.update(st, show=False)
        >>> line.text.split(" (")[0]
        'ds/ws: starting, 0/2 workers ready'
        >>> line.finish(TimeoutError("gave up"), show=False)
        >>> line.text.startswith("ds/ws: failed: gave up")
        True
    """

    def __init__(self, *, widget: bool = True) -> None:
        self.started = time.monotonic()
        self.label = ""
        self.text = "waiting ..."
        self.html = "<div class='rayqueue-progress'>waiting ...</div>"
        made: Any = None
        if widget:
            import ipywidgets as w  # lazy: ipywidgets costs ~340 ms, paid only in a notebook

            made = w.HTML(value=self.html)
        self.widget = made
        self.live = LiveDisplay(made, lambda: self.text, lambda: self.html, settle=self.settle)

    def _set(self, phase: str, words: str, colour: str) -> None:
        seconds = f"{time.monotonic() - self.started:.0f} s"
        said = words if words.startswith(phase.split(" (")[0]) else f"{phase}: {words}"
        self.text = f"{self.label}: {said} ({seconds})"
        self.html = (
            f"<div class='rayqueue-progress'><b>{escape(self.label)}</b> "
            f"<span style='color:{colour};font-weight:bold'>{escape(phase)}</span> "
            f"{escape(words)} <span style='color:#57606a'>({seconds})</span></div>"
        )
        if self.widget is not None:
            self.widget.value = self.html

    def _publish(self, show: bool) -> None:
        if not show:
            return
        if self.live.shown:
            self.live.refresh()
        else:
            self.live.show()

    def update(self, status: StatusView, *, show: bool = True) -> None:
        """Show ``status`` (the first call adds the output, later ones rewrite it)."""
        self.label = f"{status.namespace}/{status.name}"
        self.live.set_key(("cluster", status.namespace, status.name))
        self._set(phase_text(status), progress_text(status), _COLOURS.get(status.phase.value, "#9a6700"))
        self._publish(show)

    def settle(self, status: StatusView, *, show: bool = True) -> bool:
        """End the line on the status the wait returned, as the cluster's card with the seconds waited:
        the cell's one box (the returned status is not shown a second time). Always ``True``.

        Example:
            >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
            >>> line = NotebookProgress(widget=False)
            >>> line.settle(ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready"), show=False)
            True
            >>> line.text.splitlines()[0], "rayqueue-card" in line.html
            ('ds/ws: ready', True)
        """
        seconds = f"{time.monotonic() - self.started:.0f} s"
        self.text = f"{status_text(status)}\n  waited {seconds}"
        self.html = (
            f"<div class='rayqueue-progress rayqueue-card'>{status_html(status)}"
            f"<div style='color:#57606a'>waited {seconds}</div></div>"
        )
        if self.widget is not None:
            self.widget.value = self.html
        self._publish(show)
        return True

    def finish(self, error: BaseException | None, *, show: bool = True) -> None:
        """End the line: the error's first line when the wait failed, else leave the last state."""
        if error is None:
            return
        self._set("failed", _first_line(error), _COLOURS["failed"])
        self._publish(show)


def progress_log_level(show: bool | None) -> int:
    """The level a wait logs its changes at: ``DEBUG`` when :func:`wait_progress` shows them (any
    ``show`` but ``False``), ``INFO`` otherwise.

    Example:
        >>> progress_log_level(None) == logging.DEBUG, progress_log_level(False) == logging.INFO
        (True, True)
    """
    return logging.INFO if show is False else logging.DEBUG


@contextlib.contextmanager
def wait_progress(
    show: bool | None = None, *, stream: IO[str] | None = None, card_in_cell: bool = False
) -> Iterator[Callable[[StatusView], None]]:
    """A context giving the ``on_progress`` callback of a wait that keeps ONE progress line.

    ``show=False``: nothing. Otherwise: a notebook output in a notebook, rich's live line when stderr
    is a terminal, plain lines on ``stream`` (default stderr) elsewhere. ``show=True`` asks for the live
    line even where stderr is not a terminal. ``card_in_cell``: in a notebook, the cell already shows a
    card that follows the wait (``apply()`` then ``wait_ready()`` in one cell), so that card is the one
    updating output and no line is added.

    Example:
        >>> with wait_progress(show=False) as update:
        ...     update  # doctest: +ELLIPSIS
        <function ...>
    """
    if show is False:
        yield lambda _status: None
        return
    if is_notebook() and stream is None:
        if card_in_cell:
            yield lambda _status: None
            return
        line = NotebookProgress()
        try:
            yield line.update
        except BaseException as err:
            line.finish(err)
            raise
        return
    if stream is None and (show or is_terminal()):
        last: list[StatusView] = []
        with progress_line(True) as update:

            def keep(status: StatusView) -> None:
                last[:1] = [status]
                update(status)

            yield keep
        if last:  # the live line is transient: leave the final state on a line of its own
            _print_final(last[0])
        return
    out = stream if stream is not None else sys.stderr

    def plain(status: StatusView) -> None:
        print(f"{status.namespace}/{status.name}: {progress_text(status)}", file=out, flush=True)

    yield plain


def _print_final(status: StatusView) -> None:
    # lazy: rich costs ~30 ms, paid only when something is shown
    from rich.console import Console
    from rich.text import Text

    style = PHASE_STYLES.get(status.phase.value, "")
    Console(stderr=True).print(Text(f"{status.namespace}/{status.name}: {status.explanation}", style=style))
