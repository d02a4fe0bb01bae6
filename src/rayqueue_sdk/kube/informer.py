"""One shared watch per kind and namespace in a session: an informer-like cache that every reader shares.

A notebook may show a cluster's card, the cluster browser and a waiting ``wait_ready()`` at once; each
reading its own list and watch would put one watch per display on the API server. Instead every reader
in the process subscribes to :func:`shared_informer` ``(session, kind, namespace=...)`` (one per
connection: sessions over one ``ApiClient`` share it): the first one starts
a :class:`SharedInformer` (one LIST, then one WATCH from its ``resourceVersion`` in a daemon thread, built
on :class:`~rayqueue_sdk.kube.watch.Watcher`: a re-list on ``410 Gone``, backoff with jitter on
429/5xx and dropped connections), later ones get the cache at once, and the watch stops when the last
reader leaves. Watch requests last 5 to 10 minutes each (client-go's reflector: its ``minWatchTimeout``
of 5 minutes times 1 + a random fraction), so a held watch costs about one request in 7.5 minutes.

A reader is a callback that gets a ``SYNC`` :class:`~rayqueue_sdk.kube.watch.WatchEvent` with every
object it matches (at once if the cache is filled, else after the first LIST), then every ``ADDED``,
``MODIFIED`` and ``DELETED`` of an object it matches, and ``SYNC`` again after a re-list; an ``ERROR``
event ends the informer (401, 403, 404, or the server gone): the next subscription starts a new one.
Callbacks run on the informer's thread, one event at a time, and must be quick (put it on a queue).

Example:
    >>> from rayqueue_sdk.kube.kinds import RAYCLUSTERS
    >>> informer = SharedInformer(KubeSession(), RAYCLUSTERS, namespace="ds")   # not started: no reader yet
    >>> informer.running, informer.objects()
    (False, [])
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from rayqueue_sdk.errors import RayQueueError
from rayqueue_sdk.kube.errors import translate
from rayqueue_sdk.kube.kinds import Kind
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.kube.watch import Watcher, WatchEvent, cache_by_name

__all__ = [
    "MIN_WATCH_SECONDS",
    "Match",
    "Reader",
    "SharedInformer",
    "Subscription",
    "open_informers",
    "read_shared",
    "shared_running",
    "shared_informer",
]

log = logging.getLogger(__name__)

#: The shortest watch request (client-go's reflector ``minWatchTimeout``); each lasts 1 to 2 times this.
MIN_WATCH_SECONDS = 300

#: A reader: called with each event it matches (see the module's docstring).
Reader = Callable[[WatchEvent], None]
#: Which objects a reader wants (``None``: all of the kind in the namespace).
Match = Callable[[dict[str, Any]], bool]


class Subscription:
    """One reader of a :class:`SharedInformer`; :meth:`close` (idempotent) lets the watch stop with the last.

    Example:
        >>> from rayqueue_sdk.kube.kinds import RAYCLUSTERS
        >>> informer = SharedInformer(KubeSession(), RAYCLUSTERS, namespace="ds")
        >>> sub = Subscription(informer, print, None, "card")
        >>> sub.close(); sub.closed
        True
    """

    def __init__(self, informer: SharedInformer, reader: Reader, match: Match | None, source: str) -> None:
        self.informer = informer
        self.reader = reader
        self.match = match
        self.source = source
        self.closed = False

    def deliver(self, event: WatchEvent) -> None:
        """Hand ``event`` to the reader, narrowed to what it matches and labelled with its ``source``."""
        if self.closed:
            return
        if event.type == "SYNC":
            objects = [o for o in event.objects if self.match is None or self.match(o)]
            self.reader(replace(event, objects=objects, source=self.source))
        elif event.type == "ERROR" or (
            event.object is not None and (self.match is None or self.match(event.object))
        ):
            self.reader(replace(event, source=self.source))

    def close(self) -> None:
        """Stop reading; the informer's watch ends when no reader is left."""
        if not self.closed:
            self.closed = True
            self.informer._leave(self)


class SharedInformer:
    """The cache of every ``kind`` object in ``namespace``, kept by one list-then-watch loop.

    Start it with a first :meth:`subscribe`; it stops when the last :class:`Subscription` closes.

    Example:
        >>> from rayqueue_sdk.kube.kinds import RAYCLUSTERS
        >>> SharedInformer(KubeSession(), RAYCLUSTERS, namespace="ds").get("ws") is None
        True
    """

    def __init__(
        self,
        session: KubeSession,
        kind: Kind,
        *,
        namespace: str | None = None,
        min_watch_seconds: int = MIN_WATCH_SECONDS,
        on_stop: Callable[[SharedInformer], None] | None = None,
    ) -> None:
        self.session = session
        self.kind = kind
        self.namespace = namespace
        self.min_watch_seconds = min_watch_seconds
        self._on_stop = on_stop
        self._lock = threading.RLock()  # held while the cache changes and readers are told
        self._cache: dict[str, dict[str, Any]] = {}
        self._subs: list[Subscription] = []
        self._synced = False
        self._filled = threading.Event()  # set at the first SYNC, and when the loop ends (wakes waiters)
        self._watcher: Watcher | None = None
        self._thread: threading.Thread | None = None
        #: the error that ended the loop, if one did
        self.error: RayQueueError | None = None

    # -- readers ------------------------------------------------------------------------------
    def subscribe(self, reader: Reader, *, match: Match | None = None, source: str = "") -> Subscription:
        """Add a reader (starting the watch if it is the first); it gets a ``SYNC`` as soon as the cache
        is filled (at once when it already is: then a ``cached`` one, which an object created a moment
        ago may not have reached yet)."""
        sub = Subscription(self, reader, match, source or self.kind.plural)
        with self._lock:
            self._subs.append(sub)
            if self._synced:
                sub.deliver(WatchEvent("SYNC", objects=list(self._cache.values()), cached=True))
            if self._watcher is None:
                self._start()
        return sub

    def _leave(self, sub: Subscription) -> None:
        with self._lock:
            if sub in self._subs:
                self._subs.remove(sub)
            if self._subs or self._watcher is None:
                return
            watcher, self._watcher = self._watcher, None
            self._cache, self._synced = {}, False
        log.debug("%s/%s informer: last reader gone; stopping its watch", self.namespace, self.kind.plural)
        watcher.stop()
        self._stopped()

    @property
    def readers(self) -> int:
        """How many subscriptions are open."""
        with self._lock:
            return len(self._subs)

    @property
    def running(self) -> bool:
        """True while the list-then-watch loop runs."""
        with self._lock:
            return self._watcher is not None

    # -- the cache ----------------------------------------------------------------------------
    def objects(self) -> list[dict[str, Any]]:
        """Every object in the cache (a snapshot; empty before the first LIST)."""
        with self._lock:
            return list(self._cache.values())

    def wait_synced(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the cache to be filled (the first LIST); whether it is.

        Example:
            >>> from rayqueue_sdk.kube.kinds import RAYCLUSTERS
            >>> SharedInformer(KubeSession(), RAYCLUSTERS, namespace="ds").wait_synced(0)   # not started
            False
        """
        self._filled.wait(timeout)
        with self._lock:
            return self._synced

    def get(self, name: str) -> dict[str, Any] | None:
        """The cached object called ``name`` (``None``: absent, or not listed yet)."""
        with self._lock:
            return self._cache.get(name)

    # -- the loop -----------------------------------------------------------------------------
    def _start(self) -> None:
        self._filled.clear()
        seconds = int(self.min_watch_seconds * (1 + random.random()))
        self._watcher = Watcher(
            self.session,
            self.kind,
            namespace=self.namespace,
            stream_seconds=seconds,
            label=f"shared-{self.kind.plural}",
        )
        self._thread = threading.Thread(
            target=self._run, args=(self._watcher,), name=f"rayqueue-informer-{self.kind.plural}", daemon=True
        )
        self._thread.start()

    def _run(self, watcher: Watcher) -> None:
        try:
            for event in watcher.events():
                self._apply(watcher, event)
        except RayQueueError as err:
            self._fail(watcher, err)
        except Exception as exc:  # never die silently: the readers are told
            self._fail(
                watcher, translate(exc, verb="watch", resource=self.kind.key, namespace=self.namespace)
            )

    def _apply(self, watcher: Watcher, event: WatchEvent) -> None:
        with self._lock:
            if watcher is not self._watcher:  # stopped meanwhile
                return
            self._cache = cache_by_name(self._cache, event)
            self._synced = self._synced or event.type == "SYNC"
            if self._synced:
                self._filled.set()
            for sub in list(self._subs):
                sub.deliver(event)

    def _fail(self, watcher: Watcher, err: RayQueueError) -> None:
        with self._lock:
            if watcher is not self._watcher:
                return
            self.error = err
            self._watcher = None
            self._cache, self._synced = {}, False
            self._filled.set()
            subs = list(self._subs)
            self._subs.clear()
            for sub in subs:
                sub.deliver(WatchEvent("ERROR", error=err))
                sub.closed = True
        log.debug("%s/%s informer ended: %s", self.namespace, self.kind.plural, err)
        self._stopped()

    def _stopped(self) -> None:
        if self._on_stop is not None:
            self._on_stop(self)


_informers: dict[tuple[int, str, str, str | None], SharedInformer] = {}
_informers_lock = threading.Lock()


def _registered(session: KubeSession, kind: Kind, namespace: str | None) -> SharedInformer:
    """The running informer for (the session's client, kind, namespace), or a new one registered; under
    ``_informers_lock``. One per connection: sessions over one ``ApiClient`` share it."""
    ns = (namespace or session.namespace) if kind.namespaced else None
    key = (id(session.api), kind.key, kind.version, ns)
    found = _informers.get(key)
    if found is None or found.error is not None:
        found = SharedInformer(session, kind, namespace=ns, on_stop=_forget)
        _informers[key] = found
    return found


def shared_informer(session: KubeSession, kind: Kind, *, namespace: str | None = None) -> SharedInformer:
    """The informer for ``kind`` in ``namespace`` (``None``: the session's) over the session's client
    (made when none runs).

    Subscribe to it; it stops, and leaves this registry, when its last reader closes.

    Example:
        >>> from rayqueue_sdk.kube.connection import build_api_client
        >>> from rayqueue_sdk.kube.kinds import RAYCLUSTERS
        >>> one = KubeSession(build_api_client("https://k8s.example:6443"), namespace="ds")
        >>> other = one.in_namespace("x")   # the same connection
        >>> shared_informer(one, RAYCLUSTERS) is shared_informer(other, RAYCLUSTERS, namespace="ds")
        True
        >>> _forget(shared_informer(one, RAYCLUSTERS))
    """
    with _informers_lock:
        return _registered(session, kind, namespace)


def shared_running(session: KubeSession, kind: Kind, *, namespace: str | None = None) -> bool:
    """Whether the informer for ``kind`` in ``namespace`` (``None``: the session's) runs now over the
    session's client, so that a reader joining it is answered from its cache, without a request.

    Example:
        >>> from rayqueue_sdk.kube.kinds import RAYCLUSTERS
        >>> shared_running(session, RAYCLUSTERS, namespace="a-namespace-nobody-watches")
        False
    """
    ns = (namespace or session.namespace) if kind.namespaced else None
    with _informers_lock:
        found = _informers.get((id(session.api), kind.key, kind.version, ns))
    return found is not None and found.error is None and found.running


def read_shared(
    session: KubeSession,
    kind: Kind,
    reader: Reader,
    *,
    namespace: str | None = None,
    match: Match | None = None,
    source: str = "",
) -> Subscription:
    """Subscribe ``reader`` to the informer for ``kind`` in ``namespace`` (``None``: the session's) over
    the session's client (started if none runs).

    The way displays and waits read: close the returned :class:`Subscription` when done.

    Example:
        >>> import queue
        >>> from rayqueue_sdk.kube.kinds import RAYCLUSTERS
        >>> events: queue.Queue[WatchEvent] = queue.Queue()
        >>> sub = read_shared(session, RAYCLUSTERS, events.put, namespace="an-empty-namespace")
        >>> first = events.get(timeout=60)   # every object there is, then each change
        >>> first.type, first.objects
        ('SYNC', [])
        >>> sub.close()
    """
    with _informers_lock:
        found = _registered(session, kind, namespace)
        # Under the registry's lock: a reader leaving now cannot stop and forget it before this one joins.
        return found.subscribe(reader, match=match, source=source)


def _forget(informer: SharedInformer) -> None:
    with _informers_lock:
        for key, value in list(_informers.items()):
            if value is informer and not informer.running:  # not restarted by a reader meanwhile
                del _informers[key]


def open_informers() -> list[SharedInformer]:
    """The informers of this session that exist now (for tests and diagnostics).

    Example:
        >>> isinstance(open_informers(), list)
        True
    """
    with _informers_lock:
        return list(_informers.values())
