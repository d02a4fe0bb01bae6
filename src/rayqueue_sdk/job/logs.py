"""Following a Ray job's logs synchronously, also from inside a running event loop (Jupyter).

Ray's ``JobSubmissionClient.tail_job_logs`` is an *async* iterator. :func:`follow_lines` runs it on a
background thread with its own event loop and hands the lines over through a queue, so a plain
``for line in ...`` works anywhere: in a script, and in a notebook cell whose thread already runs
an asyncio loop (where ``asyncio.run`` would fail). Closing the generator stops the thread.

Example:
    >>> async def chunks():
    ...     for c in ["epoch 1\\nepoch", " 2\\n", "done"]:
    ...         yield c
    >>> list(follow_lines(chunks))
    ['epoch 1', 'epoch 2', 'done']
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Generator, Iterator

__all__ = ["KEPT_LINES", "LogKeeper", "follow_lines", "split_lines", "tail"]

log = logging.getLogger(__name__)

_END = object()


def split_lines(buffer: str, chunk: str) -> tuple[list[str], str]:
    """Split ``buffer + chunk`` into complete lines and the unfinished rest.

    Example:
        >>> split_lines("ab", "c\\nd")
        (['abc'], 'd')
    """
    text = buffer + chunk
    *lines, rest = text.split("\n")
    return [line.rstrip("\r") for line in lines], rest


def tail(text: str, lines: int = 50) -> str:
    """The last ``lines`` lines of ``text``.

    Example:
        >>> tail("a\\nb\\nc\\n", 2)
        'b\\nc'
    """
    return "\n".join(text.rstrip("\n").splitlines()[-lines:])


def follow_lines(
    make_stream: Callable[[], AsyncIterator[str]],
    *,
    poll: float = 0.5,
    stop: threading.Event | None = None,
) -> Generator[str, None, None]:
    """Yield the lines of an async text stream as they arrive, from a background thread's own loop.

    ``make_stream`` is called on that thread (e.g. ``lambda: client.tail_job_logs(job_id)``). Errors
    of the stream are raised here, in the caller's thread. Leaving the ``for`` loop early (or closing
    the generator) cancels the stream and ends the thread; so does setting ``stop`` (for a consumer
    that runs on yet another thread).

    Example:
        >>> async def stream():
        ...     yield "a\\nb\\n"
        >>> list(follow_lines(stream))
        ['a', 'b']
    """
    import asyncio  # lazy: ~10 ms (with ssl and socket), only for following logs, not at import

    items: queue.Queue[object] = queue.Queue()
    stop = stop if stop is not None else threading.Event()
    holder: dict[str, asyncio.AbstractEventLoop] = {}

    async def pump() -> None:
        buffer = ""
        try:
            async for chunk in make_stream():
                lines, buffer = split_lines(buffer, chunk)
                for line in lines:
                    items.put(line)
                if stop.is_set():
                    return
            if buffer:
                items.put(buffer)
        except asyncio.CancelledError:
            raise
        except BaseException as err:  # handed to the consumer's thread
            items.put(err)

    def run() -> None:
        loop = asyncio.new_event_loop()
        holder["loop"] = loop
        try:
            task = loop.create_task(pump())
            holder_task["task"] = task
            loop.run_until_complete(task)
        except asyncio.CancelledError:
            pass
        finally:
            items.put(_END)
            loop.close()

    holder_task: dict[str, asyncio.Task[None]] = {}
    thread = threading.Thread(target=run, name="rayqueue-log-follower", daemon=True)
    thread.start()
    try:
        while True:
            try:
                item = items.get(timeout=poll)
            except queue.Empty:
                if stop.is_set():
                    return
                continue
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            yield str(item)
    finally:
        stop.set()
        loop = holder.get("loop")
        task = holder_task.get("task")
        if loop is not None and task is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed in between
                loop.call_soon_threadsafe(task.cancel)
        thread.join(timeout=5)


#: The most log lines :meth:`~rayqueue_sdk.job.rayjob.RayJob.wait` keeps of a job-owned job it followed.
KEPT_LINES = 100_000


class LogKeeper:
    """Keeps a job-owned job's logs while it runs (its cluster may be deleted the moment it ends, taking
    Ray's copy along): up to :data:`KEPT_LINES` lines, what ``wait()`` then leaves to ``logs()``."""

    def __init__(self, lines: int) -> None:
        self.lines: deque[str] = deque(maxlen=max(KEPT_LINES, lines))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, follow: Callable[[threading.Event], Iterator[str]]) -> None:
        if self._thread is not None:
            return

        def run() -> None:
            try:
                for line in follow(self._stop):
                    self.lines.append(line)
            except Exception as err:  # best effort: the wait reports what it has
                log.debug("log keeper stopped: %s", err)

        self._thread = threading.Thread(target=run, name="rayqueue-log-keeper", daemon=True)
        self._thread.start()

    @property
    def seen(self) -> bool:
        return bool(self.lines)

    def text(self) -> str:
        return "\n".join(self.lines)

    def stop(self) -> None:
        self._stop.set()
