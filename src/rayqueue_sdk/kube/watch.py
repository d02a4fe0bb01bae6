"""A list-then-watch loop over one object or a label selector, driven by a deadline.

Both its requests go over the session's one REST path (:meth:`KubeSession.list_at
<rayqueue_sdk.kube.session.KubeSession.list_at>`, :meth:`KubeSession.stream
<rayqueue_sdk.kube.session.KubeSession.stream>`): the same retries, credentials, User-Agent and URL of the
kind (``/api/v1/...`` for a core kind). It lists first (yielding a ``SYNC`` event with every object that
matches), then watches from the list's ``resourceVersion`` (with bookmarks, so an idle stream resumes from
a recent version); after a dropped stream or a server-side
timeout it resumes from the last ``resourceVersion`` seen; on ``410 Gone`` it lists again (another
``SYNC``); on 429/5xx and connection failures it backs off with jitter (honouring ``Retry-After``).
401/403/404 end it with a typed error. It never runs past its deadline, and :meth:`Watcher.stop`
(from any thread) ends a blocked stream at once.

Example:
    >>> from rayqueue_sdk.kube.kinds import RAYCLUSTERS
    >>> from rayqueue_sdk.kube.session import KubeSession
    >>> w = Watcher(KubeSession(), RAYCLUSTERS, namespace="ds", name="ws", deadline=0.0)  # deadline passed
    >>> list(w.events())
    []
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from rayqueue_sdk.errors import ConnectionFailedError, RayQueueError, TLSVerificationError
from rayqueue_sdk.kube.errors import retry_after, status_code, translate
from rayqueue_sdk.kube.kinds import KUEUE_GROUP, Kind
from rayqueue_sdk.kube.normalize import normalize_kueue
from rayqueue_sdk.kube.retry import RetryPolicy, is_retryable
from rayqueue_sdk.kube.session import KubeSession
from rayqueue_sdk.manifests.meta import meta_of, name_of

__all__ = ["UNREACHABLE_SECONDS", "WatchEvent", "Watcher", "cache_by_name"]

log = logging.getLogger(__name__)

#: Longest single watch request; the server ends it and the loop resumes from the last version.
_STREAM_SECONDS = 30
#: A watch stream that ends sooner than this with no event counts as a failure (backoff).
_SHORT_STREAM = 0.2
#: How long the server may stay unreachable (no list, no stream, only transport failures) before the
#: watch gives up with ConnectionFailedError: one call's retry budget, so a dead server is reported as
#: such (exit 7) and not, minutes later, as a timeout.
UNREACHABLE_SECONDS = RetryPolicy().budget


@dataclass(frozen=True)
class WatchEvent:
    """One thing the watcher saw.

    ``type`` is ``"SYNC"`` (a full relist: ``objects`` holds every matching object, so anything
    absent is gone), ``"ADDED"``, ``"MODIFIED"``, ``"DELETED"`` (``object`` holds it), or ``"ERROR"``
    (``error`` holds the typed error that ended the watch; only from :meth:`Watcher.run_into`).

    A ``SYNC`` with ``cached`` set is a shared cache's copy handed to a reader that joined a running
    watch (:mod:`rayqueue_sdk.kube.informer`), not a fresh LIST: an object created a moment ago may not
    have reached the cache yet, so an absent object is not known to be gone.

    Example:
        >>> WatchEvent("SYNC", objects=[]).objects, WatchEvent("SYNC", cached=True).cached
        ([], True)
    """

    type: str
    object: dict[str, Any] | None = None
    objects: list[dict[str, Any]] = field(default_factory=list)
    error: RayQueueError | None = None
    source: str = ""
    #: a ``SYNC`` from a running shared cache (an absent object may just not have arrived yet)
    cached: bool = False


def _status_error(status: dict[str, Any]) -> BaseException:
    """The ``ApiException`` of a watch's ``ERROR`` event (its object is a ``Status``), as if answered."""
    from kubernetes.client.exceptions import ApiException  # lazy: kubernetes is slow to import

    err = ApiException(status=int(status.get("code") or 500), reason=str(status.get("reason") or "Error"))
    err.body = json.dumps(status)
    return err


def cache_by_name(cache: dict[str, dict[str, Any]], event: WatchEvent) -> dict[str, dict[str, Any]]:
    """The name -> object cache that ``event`` leaves: a ``SYNC``'s objects replace it (a new dict); an
    added or modified object is stored in it, a deleted one removed from it (in place); an ``ERROR``
    leaves it as it was. The one rule for every cache kept from watch events.

    Example:
        >>> ws = {"metadata": {"name": "ws"}}
        >>> cache = cache_by_name({}, WatchEvent("SYNC", objects=[ws]))
        >>> list(cache), cache_by_name(cache, WatchEvent("DELETED", object=ws))
        (['ws'], {})
    """
    if event.type == "SYNC":
        return {name_of(o): o for o in event.objects}
    if event.object is not None:
        if event.type == "DELETED":
            cache.pop(name_of(event.object), None)
        else:
            cache[name_of(event.object)] = event.object
    return cache


class Watcher:
    """Watch objects of ``kind`` in ``namespace`` (one ``name``, or a ``label_selector``).

    Args:
        session: the :class:`~rayqueue_sdk.kube.session.KubeSession` (its client, resolved on first use).
        kind: the resource type (see :mod:`rayqueue_sdk.kube.kinds`).
        namespace: the namespace (``None``: the session's; ignored for cluster-scoped kinds).
        name: watch this one object (``metadata.name`` field selector, also filtered here).
        label_selector: watch objects with these labels.
        deadline: a ``time.monotonic()`` value after which the loop ends (``None``: until stopped).
        stream_seconds: the longest single watch request.
        label: a name for logs and for :attr:`WatchEvent.source`.
    """

    def __init__(
        self,
        session: KubeSession,
        kind: Kind,
        *,
        namespace: str | None = None,
        name: str | None = None,
        label_selector: str | None = None,
        deadline: float | None = None,
        stream_seconds: int = _STREAM_SECONDS,
        label: str | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self.session = session
        self.kind = kind
        self._namespace = namespace
        self.name = name
        self.label_selector = label_selector
        self.deadline = deadline
        self.stream_seconds = stream_seconds
        self.label = label or kind.plural
        self.resource_version: str | None = None
        self.relists = 0
        self.resumes = 0
        self._stopped = threading.Event()
        self._response: Any = None  # the open stream's urllib3 response (stop() shuts it down)
        self._sleep = sleep

    @property
    def namespace(self) -> str | None:
        """The namespace watched (the session's when none was given; ``None`` for a cluster-scoped kind)."""
        if not self.kind.namespaced:
            return None
        if self._namespace is None:
            self._namespace = self.session.namespace
        return self._namespace

    # -- control ------------------------------------------------------------------------------
    def stop(self) -> None:
        """End the loop from any thread; a blocked stream is shut down at once."""
        self._stopped.set()
        response = self._response
        if response is not None:
            with contextlib.suppress(Exception):  # the stream may be ending by itself meanwhile
                # urllib3 >= 2.3: shutdown() wakes a read blocked on the socket; close() where older
                (getattr(response, "shutdown", None) or response.close)()

    @property
    def stopped(self) -> bool:
        """True once :meth:`stop` was called."""
        return self._stopped.is_set()

    def _remaining(self) -> float:
        if self.deadline is None:
            return float("inf")
        return self.deadline - time.monotonic()

    def _pause(self, seconds: float) -> None:
        seconds = max(0.0, min(seconds, self._remaining()))
        if self._sleep is not None:
            self._sleep(seconds)
        else:
            self._stopped.wait(seconds)

    # -- the loop -----------------------------------------------------------------------------
    def events(self) -> Iterator[WatchEvent]:
        """Yield events until the deadline or :meth:`stop`; raise a typed error on 401/403/404."""
        failures = 0
        unreachable_since: float | None = None
        field_selector = f"metadata.name={self.name}" if self.name else None
        while not self.stopped and self._remaining() > 0:
            try:
                if self.resource_version is None:
                    items, rv = self.session.list_at(
                        self.kind,
                        namespace=self.namespace,
                        label_selector=self.label_selector,
                        field_selector=field_selector,
                        deadline=self.deadline,
                    )
                    self.resource_version = rv
                    self.relists += 1
                    failures, unreachable_since = 0, None
                    yield WatchEvent("SYNC", objects=[o for o in items if self._wanted(o)], source=self.label)
                    continue
                opened = time.monotonic()
                count = 0
                for event in self._stream(field_selector):
                    count += 1
                    unreachable_since = None
                    yield event
                if count == 0 and time.monotonic() - opened < _SHORT_STREAM:
                    # A stream that ends at once with nothing in it: do not spin on reconnects.
                    failures += 1
                    self._pause(self._backoff(failures, None))
                else:
                    failures = 0
            except RayQueueError as err:
                if getattr(err, "status", None) == 410:  # the watch request itself answered 410 Gone
                    self._gone()
                    continue
                if self.stopped:
                    return
                streaming = self.resource_version is not None  # else the LIST failed
                if (
                    streaming
                    and isinstance(err, ConnectionFailedError)
                    and not isinstance(err, TLSVerificationError)
                ):
                    # the session's retries of the watch request are spent: the watch keeps trying until
                    # the server has been out of reach for UNREACHABLE_SECONDS
                    now = time.monotonic()
                    unreachable_since = unreachable_since if unreachable_since is not None else now
                    if now - unreachable_since >= UNREACHABLE_SECONDS:
                        raise
                elif not self._retry_typed(err):
                    raise
                failures += 1
                self.resumes += int(streaming)
                self._pause(self._backoff(failures, None))
            except Exception as exc:  # urllib3 exceptions from the stream, an ERROR event's Status
                if status_code(exc) == 410:
                    self._gone()
                    continue
                if self.stopped:
                    return
                if not is_retryable(exc, idempotent=True):
                    raise self._translated(exc) from exc
                if status_code(exc) == 0:  # no answer at all: the server may be gone
                    now = time.monotonic()
                    unreachable_since = unreachable_since if unreachable_since is not None else now
                    if now - unreachable_since >= UNREACHABLE_SECONDS:
                        raise translate(
                            exc,
                            verb="watch",
                            resource=self.kind.key,
                            namespace=self.namespace,
                            name=self.name,
                        ) from exc
                failures += 1
                pause = self._backoff(failures, exc)
                log.debug(
                    "%s watch interrupted (%s); resuming from %s in %.2fs",
                    self.label,
                    status_code(exc) or type(exc).__name__,
                    self.resource_version,
                    pause,
                )
                self.resumes += 1
                self._pause(pause)

    def _gone(self) -> None:
        log.debug("%s watch: 410 Gone at resourceVersion %s; relisting", self.label, self.resource_version)
        self.resource_version = None

    def _translated(self, exc: BaseException) -> RayQueueError:
        return translate(exc, verb="watch", resource=self.kind.key, namespace=self.namespace, name=self.name)

    @staticmethod
    def _retry_typed(err: RayQueueError) -> bool:
        # the session's LIST already retried: a ConnectionFailedError (TLS included) means its retries are
        # spent, so it ends the watch; transient answers from a server that is there are retried
        # while time remains.
        return not isinstance(err, ConnectionFailedError) and getattr(err, "status", None) in (
            429,
            500,
            502,
            503,
            504,
        )

    @staticmethod
    def _backoff(failures: int, exc: BaseException | None) -> float:
        hinted = retry_after(exc) if exc is not None else None
        if hinted is not None:
            return hinted
        return random.random() * min(5.0, 0.1 * (2.0 ** min(failures, 10)))

    def _wanted(self, obj: dict[str, Any]) -> bool:
        return self.name is None or meta_of(obj).get("name") == self.name

    def _stream(self, field_selector: str | None) -> Iterator[WatchEvent]:
        remaining = self._remaining()
        if remaining <= 0:
            return
        timeout = max(1, int(min(self.stream_seconds, remaining + 1)))
        # One watch request over the session's REST path (its retries, credentials, User-Agent and the
        # kind's URL), from the last resourceVersion seen; the answer is one JSON event a line.
        query: dict[str, Any] = {"watch": "true", "timeoutSeconds": timeout, "allowWatchBookmarks": "true"}
        if self.resource_version:
            query["resourceVersion"] = self.resource_version
        if self.label_selector:
            query["labelSelector"] = self.label_selector
        if field_selector:
            query["fieldSelector"] = field_selector
        response = self.session.stream(
            self.kind.path(self.namespace),
            verb="watch",
            resource=self.kind.key,
            namespace=self.namespace,
            name=self.name,
            query=query,
            deadline=self.deadline,
            request_timeout=(5.0, timeout + 5.0),
        )
        self._response = response
        try:
            if self.stopped:
                return
            for line in response:
                if not line.strip():
                    continue
                raw = json.loads(line)
                etype = raw.get("type") if isinstance(raw, dict) else None
                obj = raw.get("object") if isinstance(raw, dict) else None
                if not isinstance(obj, dict):
                    continue
                if etype == "ERROR":  # a Status: 410 Gone (relist) or another failure of the watch
                    raise _status_error(obj)
                rv = meta_of(obj).get("resourceVersion")
                if rv:
                    self.resource_version = rv
                if etype == "BOOKMARK" or not self._wanted(obj):
                    continue
                if self.kind.group == KUEUE_GROUP:
                    obj = normalize_kueue(obj, self.kind.version, self.kind.plural)
                yield WatchEvent(str(etype), object=obj, source=self.label)
                if self.stopped or self._remaining() <= 0:
                    break
        finally:
            self._response = None
            with contextlib.suppress(Exception):  # closed, not pooled: the body may not be read to its end
                response.close()
                response.release_conn()

    # -- threads ------------------------------------------------------------------------------
    def run_into(self, sink: queue.Queue[WatchEvent]) -> threading.Thread:
        """Run the loop in a daemon thread, putting events (and a final ``ERROR``) on ``sink``.

        Example:
            >>> import queue
            >>> from rayqueue_sdk.kube.kinds import RAYCLUSTERS
            >>> q: queue.Queue = queue.Queue()
            >>> w = Watcher(KubeSession(), RAYCLUSTERS, namespace="ds", name="ws", deadline=0.0)
            >>> w.run_into(q).join(1)
        """

        def run() -> None:
            try:
                for event in self.events():
                    sink.put(event)
            except RayQueueError as err:
                sink.put(WatchEvent("ERROR", error=err, source=self.label))
            except Exception as exc:  # never die silently
                sink.put(
                    WatchEvent(
                        "ERROR", error=translate(exc, verb="watch", resource=self.kind.key), source=self.label
                    )
                )

        thread = threading.Thread(target=run, name=f"rayqueue-watch-{self.label}", daemon=True)
        thread.start()
        return thread
