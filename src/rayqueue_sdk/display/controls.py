"""The cluster's box in a notebook, with its buttons (:class:`ClusterControls`): what ``Cluster(...)``
shows in a cell, and the card that ``apply()``, ``wait_ready()`` and ``status()`` then keep up to date.

The box is a :class:`~rayqueue_sdk.display.widgets.ClusterCard` with Apply and Down buttons and a
"wait for the cluster" checkbox underneath. Building and showing it reads nothing from the API server:
until a button is clicked (or the cluster is read from code) it shows what the configuration asks for,
said offline. It is handed callables (``apply(wait)``, ``down()``), so this module never imports the
cluster layer; :class:`~rayqueue_sdk.cluster.cluster.Cluster` wires them to itself. A click's outcome (the
status the card now shows, or a :class:`~rayqueue_sdk.errors.RayQueueError` in a line) stays on the box;
Down asks for confirmation first, as the cluster browser does. ``ipywidgets`` is imported when the box is
built.

Example:
    >>> done = []
    >>> box = ClusterControls(None, intro=["ds/ws: not read from the server yet"],
    ...                       apply=lambda wait: done.append(("apply", wait)),
    ...                       down=lambda: done.append("down"))
    >>> [b.description for b in box.buttons], box.wait_check.description
    (['Apply', 'Down'], 'Wait for the cluster')
    >>> box.apply_button.click(); done
    [('apply', False)]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from html import escape, unescape
from typing import Any

from rayqueue_sdk.display.views import StatusView
from rayqueue_sdk.display.widgets import ClusterCard, DownConfirmation
from rayqueue_sdk.errors import RayQueueError

__all__ = ["ClusterControls"]


class ClusterControls(ClusterCard):
    """A :class:`~rayqueue_sdk.display.widgets.ClusterCard` with Apply, Down and "Wait for the cluster".

    Apply calls ``apply(wait)`` (``wait``: the checkbox) and Down, after its confirmation, ``down()``;
    both are expected to put what they learn on this card (``update``). While one runs, both buttons are
    disabled; a :class:`RayQueueError` is shown in :attr:`message` (its first line, with the fix), not
    raised. ``label`` names the cluster in the confirmation.

    Attributes (ipywidgets): ``view`` (the card), ``apply_button``, ``down_button``, ``wait_check``,
    ``confirm`` (``confirm_text``, ``confirm_button``, ``cancel_button``), ``message``, and ``widget`` (the
    VBox that holds them).

    Example:
        >>> from rayqueue_sdk.errors import QueueNotFoundError
        >>> def apply(wait):
        ...     raise QueueNotFoundError("gpu-queue", ["parked"], namespace="ds")
        >>> downs = []
        >>> box = ClusterControls(None, intro=["ds/ws: not read from the server yet"], label="ds/ws",
        ...                       apply=apply, down=lambda: downs.append(1))
        >>> box.apply_button.click(); "LocalQueue &#x27;gpu-queue&#x27; does not exist" in box.message.value
        True
        >>> box.down_button.click(); downs, box.confirm.layout.display
        ([], 'flex')
        >>> box.confirm_button.click(); downs, box.confirm.layout.display
        ([1], 'none')
    """

    def __init__(
        self,
        status: StatusView | None,
        gpus: int | None = None,
        *,
        apply: Callable[[bool], object],
        down: Callable[[], object],
        intro: Sequence[str] = (),
        label: str | None = None,
        key: tuple[str, ...] | None = None,
    ) -> None:
        self._apply = apply
        self._down = down
        self.label = label or (f"{status.namespace}/{status.name}" if status is not None else "the cluster")
        super().__init__(status, gpus, intro=intro, key=key)

    def _layout(self, w: Any) -> Any:
        self.apply_button = w.Button(
            description="Apply", icon="play", tooltip="Create or update the RayCluster (cluster.apply())"
        )
        self.down_button = w.Button(
            description="Down",
            icon="trash",
            button_style="danger",
            tooltip="Delete the RayCluster and give its resources back (asks to confirm)",
        )
        self.wait_check = w.Checkbox(value=False, description="Wait for the cluster", indent=False)
        confirm = DownConfirmation(w, self._confirmed_down)
        self.confirm, self.confirm_text = confirm.box, confirm.text
        self.confirm_button, self.cancel_button = confirm.confirm_button, confirm.cancel_button
        self.message = w.HTML()
        self.apply_button.on_click(lambda _b: self._applied())
        self.down_button.on_click(
            lambda _b: confirm.ask(
                f"Delete RayCluster <b>{escape(self.label)}</b> and give its resources back?"
            )
        )
        self.buttons = [self.apply_button, self.down_button]
        row = w.HBox([self.apply_button, self.down_button, self.wait_check])
        return w.VBox([self.view, row, self.confirm, self.message])

    def _plain(self) -> str:
        text = super()._plain()
        note = self._note()
        return f"{text}\n  {note}" if note else text

    def _html(self) -> str:
        note = self.message.value
        return super()._html() + (f"<div class='rayqueue-message'>{note}</div>" if note else "")

    def _note(self) -> str:
        # the message line as text (it is built escaped from plain words)
        return unescape(re.sub(r"<[^>]+>", "", self.message.value))

    def _busy(self, busy: bool) -> None:
        for button in self.buttons:
            button.disabled = busy

    def _say(self, text: str, *, error: bool = False) -> None:
        words = escape(text)
        self.message.value = f"<span style='color:#cf222e'>{words}</span>" if error else words
        self.live.refresh()

    def _run(self, action: str, call: Callable[[], object], done: Callable[[object], str]) -> None:
        self._busy(True)
        self._say(f"{action}: {self.label} ...")
        try:
            result = call()
        except RayQueueError as err:
            self._say(f"{action} {self.label}: {_short(err)}", error=True)
        else:
            self._say(done(result))
        finally:
            self._busy(False)

    def _applied(self) -> None:
        wait = bool(self.wait_check.value)
        said = f"apply: {self.label} {'ready' if wait else 'applied'}"
        self._run("apply", lambda: self._apply(wait), lambda _result: said)

    def _confirmed_down(self) -> None:
        self._run(
            "down",
            self._down,
            lambda deleted: f"down: {self.label} {'already gone' if deleted is False else 'deleted'}",
        )

    def __repr__(self) -> str:
        return "ClusterControls" + super().__repr__().removeprefix("ClusterCard")


def _short(error: BaseException) -> str:
    """An error's first line without the troubleshooting pointer, and its fix when it has one."""
    text = str(error).split(" (see docs/", 1)[0].splitlines()[0]
    fix = getattr(error, "fix", None)
    return f"{text}. Fix: {fix}" if isinstance(fix, str) and fix else text
