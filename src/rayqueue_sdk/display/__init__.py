"""Showing clusters to a person: rich in a console (:mod:`.console`), ipywidgets in a notebook
(:mod:`.widgets`), chosen by :mod:`.environment`.

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

from typing import TYPE_CHECKING

from rayqueue_sdk.display.console import print_details
from rayqueue_sdk.display.environment import is_notebook, is_terminal
from rayqueue_sdk.display.widgets import cluster_widget, show_widget

if TYPE_CHECKING:  # pragma: no cover
    from rayqueue_sdk.cluster.observe import ClusterDetails

__all__ = ["is_notebook", "is_terminal", "show_details"]


def show_details(details: ClusterDetails, *, show: bool | None = None) -> None:
    """Show ``details``: a widget in a notebook, a rich panel in a terminal (``show=None``: only there).

    Example:
        >>> from rayqueue_sdk.cluster.observe import summarize
        >>> show_details(summarize({"metadata": {"name": "ws", "namespace": "ds"}}), show=False)  # nothing
    """
    if show is False:
        return
    if is_notebook():
        show_widget(cluster_widget(details))
        return
    if show or is_terminal():
        print_details(details)
