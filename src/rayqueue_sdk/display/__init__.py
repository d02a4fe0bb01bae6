"""Showing clusters to a person: rich in a console (:mod:`.console`), ipywidgets in a notebook
(:mod:`.widgets`; the cluster's box with Apply and Down, :mod:`.controls`), chosen by :mod:`.environment`;
plain text (:mod:`.text`) for ``text/plain`` and reprs; notebook outputs that last, update in place and
make one box per cell (:mod:`.live`, :func:`show_status`).

Display sits below ``cluster/``: it is handed what the cluster layer reads (statuses, details) and, for
the notebook browser, callables that list and act; it never imports ``cluster/`` itself (its modules name
the cluster types only for type checkers). Neither ``rich`` nor ``ipywidgets`` is imported until something
is shown. Tokens never reach a display: only names, phases, Kueue's words and addresses are rendered.

Example:
    >>> from rayqueue_sdk.display import is_notebook
    >>> is_notebook()
    False
"""

from __future__ import annotations

from rayqueue_sdk.display.console import print_details
from rayqueue_sdk.display.environment import is_notebook, is_terminal
from rayqueue_sdk.display.live import display_for, show_value
from rayqueue_sdk.display.text import status_text
from rayqueue_sdk.display.views import DetailsView, StatusView
from rayqueue_sdk.display.widgets import ClusterCard, details_display, status_html

__all__ = ["follow_card", "is_notebook", "is_terminal", "show_details", "show_status"]


def show_details(details: DetailsView, *, show: bool | None = None) -> None:
    """Show ``details``: a widget in a notebook (once per cell, with its text and HTML), a rich panel in a
    terminal (``show=None``: only there).

    Example:
        >>> from rayqueue_sdk.cluster.observe import summarize
        >>> show_details(summarize({"metadata": {"name": "ws", "namespace": "ds"}}), show=False)  # nothing
    """
    if show is False:
        return
    if is_notebook():
        display_for(details, lambda: details_display(details)).show_once()
        return
    if show or is_terminal():
        print_details(details)


def follow_card(card: ClusterCard | None, status: StatusView, gpus: int | None = None) -> ClusterCard | None:
    """In a notebook, show ``status`` on ``card`` (updated in place), or on a new card shown now; returns
    the card. Elsewhere nothing is shown and ``card`` is returned as it is.

    Example:
        >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
        >>> follow_card(None, ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready")) is None
        True
    """
    if not is_notebook():
        return card
    if card is None:
        card = ClusterCard(status, gpus)
        card.live.show()
        return card
    card.update(status, gpus)
    return card


def show_status(status: StatusView) -> None:
    """Show a cluster's status as a cell's value: its card (``text/plain`` and ``text/html``), unless the
    cell already shows a box for that cluster (``apply(); wait_ready()``: the card; ``wait_ready()``: its
    progress line), which then settles on ``status`` instead: one box per cell.

    Example:
        >>> from rayqueue_sdk.cluster.status import ClusterStatus, ClusterPhase
        >>> show_status(ClusterStatus("ws", "ds", ClusterPhase.READY, True, "ready"))
        ds/ws: ready
          ready
    """
    show_value(("cluster", status.namespace, status.name), status, status_text, status_html)
