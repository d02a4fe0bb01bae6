"""The notebook card of a :class:`~rayqueue_sdk.cluster.cluster.Cluster`: its box with the Apply, Down and
"Wait for the cluster" buttons, said offline until a button or ``apply()`` reads the cluster, then following
it live through the session's shared watches (:mod:`rayqueue_sdk.cluster.live`).

Example:
    >>> from rayqueue_sdk import Cluster, ClusterConfiguration
    >>> Cluster(ClusterConfiguration(name="ws", namespace="ds"), show=False)._intro()[0]
    'ds/ws: not read from the server yet'
"""

from __future__ import annotations

import textwrap
import weakref
from typing import TYPE_CHECKING, Any

from rayqueue_sdk.cluster.base import ClusterBase
from rayqueue_sdk.cluster.status import ClusterStatus
from rayqueue_sdk.display.controls import ClusterControls
from rayqueue_sdk.display.environment import is_notebook

if TYPE_CHECKING:  # pragma: no cover
    from rayqueue_sdk.cluster.applied import AppliedCluster
    from rayqueue_sdk.kube.session import KubeSession

__all__ = ["CardMixin"]


class CardMixin(ClusterBase):
    """The notebook card of a ``Cluster`` (its box, made once, read from nothing until used).

    Example:
        >>> from rayqueue_sdk import Cluster, ClusterConfiguration
        >>> cluster = Cluster(ClusterConfiguration(name="ws", namespace="ds"), show=False)
        >>> cluster._controls() is cluster._controls()
        True
    """

    if TYPE_CHECKING:  # the lifecycle (rayqueue_sdk.cluster.cluster) defines them; the buttons call them

        def apply(self, force: bool = False) -> AppliedCluster: ...

        def down(self, force: bool = False) -> bool: ...

        def wait_ready(
            self,
            timeout: float | None = ...,
            queue_timeout: float | None = None,
            dashboard_check: bool = True,
            *,
            show: bool | None = None,
        ) -> ClusterStatus: ...

    def _intro(self) -> list[str]:
        """What the box says before anything was read: the configuration, offline (no I/O)."""
        from rayqueue_sdk.cluster.observe import summarize  # lazy: the notebook box's summary only

        ns = self._namespace or self.config.namespace
        where = f"{ns}/{self.name}" if ns else f"{self.name} (in your login's namespace)"
        shape = summarize(self.to_dict())
        asks = [f"{g.replicas} x {g.name}" for g in shape.groups]
        queue = f"queue {self.config.local_queue}" if self.config.local_queue else "the default queue"
        priority = f", priority {self.config.priority_class}" if self.config.priority_class else ""
        said = [
            f"{queue}{priority}; workers {', '.join(asks) or 'none'}; {shape.gpus} GPUs",
            "Apply sends it (cluster.apply()), Down deletes it (cluster.down()); cluster.status() reads it",
        ]
        lines = [f"{where}: not read from the server yet"]
        for text in said:
            lines += textwrap.wrap(text, 80, initial_indent="  ", subsequent_indent="    ")
        return lines

    def _controls(self) -> ClusterControls:
        """The notebook box (made once; nothing is read to make it)."""
        if self._card is None:
            ns = self._namespace or self.config.namespace
            self._card = ClusterControls(
                None,
                intro=self._intro(),
                apply=self._apply_clicked,
                down=self.down,
                label=f"{ns}/{self.name}" if ns else self.name,
                key=("cluster", ns or "", self.name),
            )
        return self._card

    def _box_in_cell(self) -> bool:
        """In a notebook, show the box in this cell (once); whether it is shown."""
        if self._card is None or not is_notebook():
            return False
        self._card.live.show_once()
        return True

    def _follow(self, status: ClusterStatus, gpus: int | None = None) -> None:
        """Put ``status`` on the box, where there is one (updated in place)."""
        if self._card is not None:
            self._card.live.set_key(("cluster", status.namespace, status.name))
            self._card.update(status, gpus)

    def _apply_clicked(self, wait: bool) -> object:
        """Apply, from the box's button; with ``wait``, then wait until ready. The box is the progress: a
        click updates it in place and adds no output (a click runs outside any cell, so an output made
        now would go nowhere and would count as shown in the next cell)."""
        self._clicked = True
        try:
            applied = self.apply()
            if wait:
                return self.wait_ready(show=False)
            return applied
        finally:
            self._clicked = False

    def _ipython_display_(self) -> None:
        """As a cell's last expression: the box with its buttons (once per cell), read from nothing."""
        if is_notebook():
            self._controls().live.show_once()
            return
        from IPython.display import display  # lazy: only IPython calls this

        display({"text/plain": repr(self)}, raw=True)

    def _show_card(self, session: KubeSession, stored: dict[str, Any]) -> None:
        """In a notebook, the cluster's box: updated in place, and shown in this cell unless it already is.

        It starts from ``stored``, the RayCluster as ``apply()``/``up()`` were answered it (not read again),
        with its Workload, position and addresses, and while it is queued its admission estimate and
        fair-share sentence, made from the shared watches the box follows it through anyway (the
        namespace's RayClusters and Workloads), the LocalQueues ``apply()`` listed and one LIST of the
        ClusterQueues (:class:`~rayqueue_sdk.cluster.live.WatchedReads`): no object is read twice."""
        from rayqueue_sdk.cluster.live import WatchedReads  # lazy: the shared watches, for a notebook box
        from rayqueue_sdk.cluster.observe import observe_object  # lazy: the read path

        if not is_notebook() and self._card is None:
            return
        reads = WatchedReads(self.namespace, local_queues=self._queues_seen)
        try:
            status, obj = observe_object(session, stored, estimate_reads=reads)
            self._follow_on_card(session, status, obj)
        finally:
            reads.close()  # the card's own readers hold the watches from here on

    def _follow_on_card(self, session: KubeSession, status: ClusterStatus, obj: dict[str, Any]) -> None:
        """Put the first ``status`` on the box, then follow the cluster live on it."""
        from rayqueue_sdk.cluster.live import follow_live  # lazy: the shared watches, for a notebook box
        from rayqueue_sdk.cluster.observe import summarize  # lazy: the read path

        card = self._controls()
        card.live.set_key(("cluster", status.namespace, status.name))
        card.update(status, summarize(obj, status).gpus)
        if is_notebook() and not self._clicked:
            card.live.show_once()
        if self._live is None or self._live.closed:
            # Live from then on, through the watches the session shares (no watch or request of its own).
            self._live = follow_live(
                session,
                card.update,
                name=self.name,
                namespace=self.namespace,
                last=status,
                shown=lambda: card.status if isinstance(card.status, ClusterStatus) else None,
            )
            weakref.finalize(self, self._live.close)  # the shared watches end with the last reader
