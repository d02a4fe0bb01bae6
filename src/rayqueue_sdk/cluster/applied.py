"""What ``Cluster.apply()`` and ``Cluster.up()`` return (:class:`AppliedCluster`): the RayCluster as the
server stored it, a plain ``dict`` in code, that a notebook or a console shows in a few lines (the
cluster's card in a notebook) instead of the 70-line object.

Example:
    >>> applied = AppliedCluster({"metadata": {"name": "ws", "namespace": "ds", "uid": "0d5c",
    ...                                        "generation": 1}})
    >>> applied["metadata"]["uid"], isinstance(applied, dict)
    ('0d5c', True)
    >>> applied
    ds/ws: applied (RayCluster generation 1)
      cluster.wait_ready() waits until it is ready; cluster.status() reads it
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from html import escape
from typing import Any

from rayqueue_sdk.manifests.meta import meta_of

__all__ = ["AppliedCluster"]


class AppliedCluster(dict[str, Any]):
    """The RayCluster as stored (a ``dict``: ``applied["metadata"]["uid"]``, ``dict(applied)``), shown
    short: ``repr`` and ``text/plain`` say what was applied and what to call next in two lines within 80
    columns, ``text/html`` the same as a card. As a notebook cell's value it is the cluster's box that
    ``apply()`` showed (``show_box``), not a second output. Pickles as a plain ``dict``.

    Example:
        >>> applied = AppliedCluster({"metadata": {"name": "ws", "namespace": "ds", "generation": 2}})
        >>> applied.name, applied.namespace, applied.generation
        ('ws', 'ds', 2)
        >>> "<b>ds/ws</b>" in applied._repr_html_()
        True
        >>> import pickle
        >>> type(pickle.loads(pickle.dumps(applied)))
        <class 'dict'>
    """

    def __init__(self, stored: Mapping[str, Any], *, show_box: Callable[[], bool] | None = None) -> None:
        super().__init__(stored)
        self._show_box = show_box

    @property
    def _meta(self) -> Mapping[str, Any]:
        return meta_of(self)

    @property
    def name(self) -> str:
        """``metadata.name``."""
        return str(self._meta.get("name") or "")

    @property
    def namespace(self) -> str:
        """``metadata.namespace``."""
        return str(self._meta.get("namespace") or "")

    @property
    def generation(self) -> int | None:
        """``metadata.generation``: the spec's version (a re-apply that changes nothing keeps it)."""
        value = self._meta.get("generation")
        return int(value) if value is not None else None

    def _what(self) -> str:
        return f"RayCluster generation {self.generation}" if self.generation is not None else "RayCluster"

    def __repr__(self) -> str:
        return (
            f"{self.namespace}/{self.name}: applied ({self._what()})\n"
            "  cluster.wait_ready() waits until it is ready; cluster.status() reads it"
        )

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(repr(self))

    def _repr_html_(self) -> str:
        return (
            f"<div class='rayqueue-card'><b>{escape(self.namespace)}/{escape(self.name)}</b>: applied "
            f"({escape(self._what())}, uid {escape(str(self._meta.get('uid') or '-'))})"
            "<br><code>cluster.wait_ready()</code> waits until it is ready; "
            "<code>cluster.status()</code> reads it</div>"
        )

    def _ipython_display_(self) -> None:
        if self._show_box is not None and self._show_box():
            return
        from IPython.display import display  # lazy: only IPython calls this

        display({"text/plain": repr(self), "text/html": self._repr_html_()}, raw=True)

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))
