"""Notebook displays that last and update in place: :class:`LiveDisplay` (the cluster card, the cluster
browser and the details view of :mod:`.widgets` are built on it).

Every display the SDK makes in a notebook is one output whose bundle holds the widget
(``application/vnd.jupyter.widget-view+json``) next to ``text/plain`` and ``text/html``. A live kernel
shows the widget; a saved notebook opened without its kernel, ``jupyter nbconvert --to html`` (which drops
a widget whose state was not saved: nbconvert's ``WidgetsDataTypeFilter``) or a code host's renderer show
the HTML. The output carries a ``display_id`` (Jupyter's ``update_display_data`` message), so a refresh
replaces that same output, the widget and its fallbacks together, instead of adding a new one; the last
state is what is saved.

An object shows once per cell: a function that displays (``view_clusters()``, ``details()``) and then
returns the object, written as the cell's last expression, does not display it a second time
(``_ipython_display_`` sees that it was shown during this execution). In a later cell the object displays
again, as any value does.

``IPython.display`` and ``ipywidgets`` are imported only when something is shown.

Example:
    >>> shown = LiveDisplay(None, lambda: "plain", lambda: "<b>html</b>")
    >>> shown.bundle()
    {'text/plain': 'plain', 'text/html': '<b>html</b>'}
    >>> shown.refresh()   # never shown: nothing to update
    False
"""

from __future__ import annotations

import sys
import uuid
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from rayqueue_sdk.display.environment import is_notebook

__all__ = [
    "WIDGET_VIEW",
    "LiveDisplay",
    "display_for",
    "execution_count",
    "show_value",
    "shown_in_cell",
]

#: The widget's MIME type in a display bundle (ipywidgets' view reference).
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def execution_count() -> int | None:
    """The running IPython shell's execution count (constant during one cell), ``None`` outside IPython.

    Read from ``sys.modules`` so that nothing is imported outside a notebook.

    Example:
        >>> execution_count() is None
        True
    """
    ipython = sys.modules.get("IPython")
    shell = getattr(ipython, "get_ipython", lambda: None)() if ipython is not None else None
    count = getattr(shell, "execution_count", None)
    return count if isinstance(count, int) else None


class LiveDisplay:
    """One notebook output: ``widget`` (or none) with ``text/plain`` and ``text/html`` from callables,
    under one ``display_id``.

    :meth:`show` adds the output; :meth:`refresh` rewrites every output shown under the id with the
    current texts (the widget updates itself through its model); :meth:`show_once` shows unless already
    shown during this cell.

    Example:
        >>> LiveDisplay(None, lambda: "x", lambda: "y").display_id.startswith("rayqueue-")
        True
    """

    def __init__(
        self,
        widget: Any,
        plain: Callable[[], str],
        html: Callable[[], str],
        *,
        key: tuple[str, ...] | None = None,
        settle: Callable[[Any], bool] | None = None,
    ) -> None:
        self.widget = widget
        self._plain = plain
        self._html = html
        self.display_id = f"rayqueue-{uuid.uuid4().hex}"
        #: the execution count of the cell that showed it last (``None``: never shown).
        self.shown_in: int | None = None
        self.shown = False
        #: what this output shows (e.g. ``("cluster", namespace, name)``), for :func:`shown_in_cell`.
        self.key = key
        #: ``settle(value)``: make this output show ``value`` (a status returned at the end of the cell);
        #: ``True`` when it does, so the value need not be shown a second time.
        self.settle = settle

    def set_key(self, key: tuple[str, ...]) -> None:
        """Say what this output shows (once the namespace is known, say); an output already shown is
        found under the new key by :func:`shown_in_cell`."""
        if key == self.key:
            return
        self.key = key
        if self.shown:
            _BY_KEY[key] = weakref.ref(self)

    def bundle(self) -> dict[str, Any]:
        """The MIME bundle: the widget's view reference (when there is a widget), the text and the HTML."""
        data: dict[str, Any] = {}
        if self.widget is not None:
            data.update(self.widget._repr_mimebundle_() or {})
        data["text/plain"] = self._plain()
        data["text/html"] = self._html()
        return data

    def show(self) -> None:
        """Add the output (``display(bundle, raw=True, display_id=...)``)."""
        from IPython.display import display  # lazy: IPython.display costs ~310 ms, paid only in a notebook

        display(self.bundle(), raw=True, display_id=self.display_id)
        self.shown = True
        self.shown_in = execution_count()
        if self.key is not None:
            _BY_KEY[self.key] = weakref.ref(self)

    def show_once(self) -> None:
        """:meth:`show`, unless it was shown during the cell that runs now."""
        if self.shown and self.shown_in == execution_count():
            return
        self.show()

    def refresh(self) -> bool:
        """Rewrite the outputs shown under this id with the current texts; ``False`` if never shown."""
        if not self.shown:
            return False
        from IPython.display import update_display  # lazy: IPython.display, paid only in a notebook

        update_display(self.bundle(), raw=True, display_id=self.display_id)
        return True


#: The output shown last for a key (see :attr:`LiveDisplay.key`).
_BY_KEY: dict[tuple[str, ...], weakref.ref[LiveDisplay]] = {}


def shown_in_cell(key: tuple[str, ...]) -> LiveDisplay | None:
    """The output for ``key`` shown (last) during the cell that runs now, else ``None``: so that a
    value returned at the end of a cell (``apply(); wait_ready()``) settles on the box the cell already
    shows instead of adding an identical one.

    Example:
        >>> shown_in_cell(("cluster", "ds", "ws")) is None
        True
    """
    ref = _BY_KEY.get(key)
    live = ref() if ref is not None else None
    if live is None or not live.shown or live.shown_in != execution_count():
        return None
    return live


_V = TypeVar("_V")


def show_value(key: tuple[str, ...], value: _V, text: Callable[[_V], str], html: Callable[[_V], str]) -> None:
    """Show ``value`` (a status) as a cell's value: settled on the box the cell already shows for ``key``
    when that box takes it (:func:`shown_in_cell`), else ``text(value)`` and ``html(value)`` as one output;
    outside IPython, ``text(value)`` printed (what the text/plain would say).

    Example:
        >>> show_value(("cluster", "ds", "ws"), 3, lambda n: f"{n} workers", lambda n: f"<b>{n}</b>")
        3 workers
    """
    if is_notebook():
        box = shown_in_cell(key)
        if box is not None and box.settle is not None and box.settle(value):
            return
    if execution_count() is None:  # not in IPython: what the text/plain would say
        print(text(value))
        return
    from IPython.display import display  # lazy: IPython.display costs ~310 ms, paid when shown

    display({"text/plain": text(value), "text/html": html(value)}, raw=True)


#: The display made for an object (by ``id``, with a weak reference that tells a reused id apart).
_BY_OBJECT: dict[int, tuple[weakref.ref[Any], LiveDisplay]] = {}


def display_for(obj: Any, make: Callable[[], LiveDisplay]) -> LiveDisplay:
    """The :class:`LiveDisplay` made for ``obj`` before, else ``make()`` (remembered while ``obj`` lives).

    So that a function that showed ``obj`` and the cell's last expression returning it share one output.

    Example:
        >>> class Thing: pass
        >>> thing = Thing()
        >>> first = display_for(thing, lambda: LiveDisplay(None, str, str))
        >>> display_for(thing, lambda: LiveDisplay(None, str, str)) is first
        True
    """
    key = id(obj)
    found = _BY_OBJECT.get(key)
    if found is not None and found[0]() is obj:
        return found[1]
    for stale in [k for k, (ref, _) in _BY_OBJECT.items() if ref() is None]:
        del _BY_OBJECT[stale]
    made = make()
    _BY_OBJECT[key] = (weakref.ref(obj), made)
    return made
