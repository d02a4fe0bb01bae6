"""The store's event log: its bounded history of committed events and the watches that history feeds.

:class:`EventLog` is one part of :class:`~rayqueue_local.storage.store.Store`, held as an attribute: the
store appends every committed :class:`~rayqueue_local.storage.store.Event` (:meth:`EventLog.record`),
which offers it to the open watches in commit order; a watch or list from an old resourceVersion
replays or undoes what the history still holds, and answers 410 Expired once the history no longer
reaches back that far (:attr:`EventLog.compacted_rv`). The log keeps no lock of its own: the store
calls it with the store lock held.

Example:
    >>> log = EventLog(size=2)
    >>> for rv in ("1", "2", "3"):
    ...     log.record(Event("ADDED", "configmaps", {"metadata": {"name": "c", "resourceVersion": rv}}))
    >>> log.compacted_rv, [e.resource_version for e in log.newest_first()]
    (1, [3, 2])
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from rayqueue_local.storage.storetypes import Event
from rayqueue_local.storage.watch import Watch

__all__ = ["EventLog"]


class EventLog:
    """The last ``size`` committed events (at least one) and the open watches (the store lock held).

    Example:
        >>> from rayqueue_local.apimachinery.selectors import parse_field_selector, parse_label_selector
        >>> log = EventLog(size=10)
        >>> labels, fields = parse_label_selector(None), parse_field_selector(None)
        >>> w = Watch("configmaps", None, labels, fields, log.remove_watch)
        >>> log.add_watch(w)
        >>> log.record(Event("ADDED", "configmaps", {"metadata": {"name": "c", "resourceVersion": "1"}}))
        >>> w.get(timeout=1).object["metadata"]["name"]
        'c'
        >>> log.close_watches(); log.watch_count
        0
    """

    def __init__(self, size: int) -> None:
        self._history: deque[Event] = deque()
        self._size = max(1, size)
        self._compacted_rv = 0
        self._watches: list[Watch] = []

    @property
    def compacted_rv(self) -> int:
        """The newest resourceVersion the history no longer holds (a version before it is Expired)."""
        return self._compacted_rv

    def start_at(self, rv: int) -> None:
        """Start an empty history at ``rv`` (the version a store loaded from disk begins at)."""
        self._history.clear()
        self._compacted_rv = rv

    def record(self, event: Event) -> None:
        """Append a committed event (dropping the oldest past ``size``) and offer it to every watch."""
        if len(self._history) >= self._size:
            self._compacted_rv = self._history.popleft().resource_version
        self._history.append(event)
        for w in self._watches:
            w.offer(event)

    def oldest_first(self) -> Iterator[Event]:
        """The events the history holds, in commit order."""
        return iter(self._history)

    def newest_first(self) -> Iterator[Event]:
        """The events the history holds, newest first (to undo them back to a version)."""
        return reversed(self._history)

    # -- watches -----------------------------------------------------------------------------------
    @property
    def watch_count(self) -> int:
        """How many watches are open."""
        return len(self._watches)

    def add_watch(self, w: Watch) -> None:
        """Offer ``w`` every event recorded from now on."""
        self._watches.append(w)

    def remove_watch(self, w: Watch) -> None:
        """Stop offering events to ``w``."""
        self._watches = [x for x in self._watches if x is not w]

    def close_watches(self) -> None:
        """Close every open watch (each removes itself through its ``on_close``)."""
        for w in list(self._watches):
            w.close()
