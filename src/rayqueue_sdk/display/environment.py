"""Where this process shows things: a Jupyter kernel (:func:`is_notebook`) or a terminal
(:func:`is_terminal`).

Both are read from the process itself (``sys.modules``, environment variables, stderr); nothing is imported.

Example:
    >>> from rayqueue_sdk.display.environment import is_notebook
    >>> is_notebook()
    False
"""

from __future__ import annotations

import os
import sys

__all__ = ["is_notebook", "is_terminal"]


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
