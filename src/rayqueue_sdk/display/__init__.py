"""Showing clusters to a person: rich in a console (:mod:`.console`), ipywidgets in a notebook
(:mod:`.widgets`).

Neither ``rich`` nor ``ipywidgets`` is imported until something is shown. Tokens never reach a display:
only names, phases, Kueue's words and addresses are rendered.

Example:
    >>> from rayqueue_sdk.display import is_notebook
    >>> is_notebook()
    False
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from rayqueue_sdk.cluster.observe import ClusterDetails

__all__ = ["is_notebook", "is_terminal", "show_details"]


def is_notebook() -> bool:
    """Whether this process is a Jupyter kernel (an IPython ZMQ shell, or Jupyter's/VS Code's env vars).

    Example:
        >>> isinstance(is_notebook(), bool)
        True
    """
    ipython = sys.modules.get("IPython")
    if ipython is not None:
        shell = getattr(ipython, "get_ipython", lambda: None)()
        if shell is not None and type(shell).__name__ == "ZMQInteractiveShell":
            return True
    return any(os.environ.get(v) for v in ("JPY_PARENT_PID", "JPY_SESSION_NAME", "VSCODE_PID_NOTEBOOK"))


def is_terminal() -> bool:
    """Whether stderr is an interactive terminal (where a live rich line makes sense).

    Example:
        >>> isinstance(is_terminal(), bool)
        True
    """
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


def show_details(details: ClusterDetails, *, show: bool | None = None) -> None:
    """Show ``details``: a widget in a notebook, a rich panel in a terminal (``show=None``: only there).

    Example:
        >>> # show_details(cluster.details(show=False), show=True)
    """
    if show is False:
        return
    if is_notebook():
        from IPython.display import display

        from rayqueue_sdk.display.widgets import cluster_widget

        display(cluster_widget(details))
        return
    if show or is_terminal():
        from rayqueue_sdk.display.console import print_details

        print_details(details)
