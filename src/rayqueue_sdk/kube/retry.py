"""Bounded retries with jitter for API calls, and the one place calls are mapped to typed errors.

Retried: 429 (honouring ``Retry-After``), 503, and connection failures where the request never
reached the server; for idempotent calls also 500/502/504, dropped connections and read timeouts.
Never retried: TLS failures, 4xx answers other than 429. Every attempt is bounded by a request
timeout and the whole call by a time budget (and an optional deadline), so nothing hangs.

Example:
    >>> from kubernetes.client.exceptions import ApiException
    >>> attempts = []
    >>> def flaky():
    ...     attempts.append(1)
    ...     if len(attempts) < 3:
    ...         raise ApiException(status=503, reason="Service Unavailable")
    ...     return "ok"
    >>> call(flaky, verb="get", resource="rayclusters.ray.io", sleep=lambda s: None, request_timeout=None)
    'ok'
    >>> len(attempts)
    3
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from rayqueue_sdk.errors import RayQueueError
from rayqueue_sdk.kube.errors import is_tls_failure, retry_after, status_code, translate

__all__ = ["DEFAULT_POLICY", "DEFAULT_REQUEST_TIMEOUT", "RetryPolicy", "answer_lost", "call", "is_retryable"]

log = logging.getLogger(__name__)
T = TypeVar("T")

#: (connect, read) seconds for one ordinary request.
DEFAULT_REQUEST_TIMEOUT: tuple[float, float] = (5.0, 30.0)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry.

    Attributes:
        attempts: the maximum number of attempts (1 = no retry).
        base_delay: the first backoff ceiling in seconds; doubled each attempt ("full jitter").
        max_delay: the largest single backoff.
        budget: the most seconds spent on one call across attempts (a ``Retry-After`` larger than
            what is left ends the retries).

    Example:
        >>> RetryPolicy(attempts=3).delay(0, rng=lambda: 1.0)
        0.2
    """

    attempts: int = 6
    base_delay: float = 0.2
    max_delay: float = 5.0
    budget: float = 30.0

    def delay(
        self, attempt: int, exc: BaseException | None = None, rng: Callable[[], float] = random.random
    ) -> float:
        """Seconds to sleep before attempt ``attempt + 1``: ``Retry-After`` if given, else jittered."""
        if exc is not None:
            hinted = retry_after(exc)
            if hinted is not None:
                return min(hinted, self.budget)
        ceiling = min(self.max_delay, self.base_delay * (2.0**attempt))
        return rng() * ceiling


#: The policy of every call that names none.
DEFAULT_POLICY = RetryPolicy()


def is_retryable(exc: BaseException, *, idempotent: bool = True) -> bool:
    """Whether ``exc`` is worth another attempt.

    Example:
        >>> from kubernetes.client.exceptions import ApiException
        >>> is_retryable(ApiException(status=429)), is_retryable(ApiException(status=403))
        (True, False)
        >>> is_retryable(ApiException(status=500), idempotent=False)
        False
    """
    if isinstance(exc, RayQueueError):
        return False
    status = status_code(exc)
    if status in (429, 503):
        return True
    if status in (500, 502, 504):
        return idempotent
    if status != 0:
        return False
    if is_tls_failure(exc):
        return False
    sent = _transport_sent(exc)
    if sent is None:
        return isinstance(exc, OSError) and idempotent
    return not sent or idempotent


def _transport_sent(exc: BaseException) -> bool | None:
    """For a failure without an answer: ``False`` if the request never left (no connection was made),
    ``True`` if it may have reached the server, ``None`` if the exception says neither."""
    try:
        import urllib3.exceptions as u3  # lazy: urllib3 (kubernetes' transport) costs ~70 ms to import
    except ImportError:  # pragma: no cover
        return None
    cur: BaseException | None = exc
    for _ in range(5):
        if cur is None:
            break
        if isinstance(cur, u3.NewConnectionError | u3.ConnectTimeoutError | ConnectionRefusedError):
            return False  # the request was never sent
        if isinstance(cur, u3.ProtocolError | u3.ReadTimeoutError | ConnectionError | TimeoutError):
            return True
        reason = getattr(cur, "reason", None)
        cur = reason if isinstance(reason, BaseException) else cur.__cause__
    return None


def answer_lost(exc: BaseException) -> bool:
    """Whether ``exc`` says a request may have reached the server and been carried out, though no
    answer came back (the connection dropped or timed out after the request was sent): after a write,
    only reading the object back tells what happened.

    Example:
        >>> import urllib3.exceptions as u3
        >>> answer_lost(u3.ProtocolError("Connection aborted.", ConnectionResetError()))
        True
        >>> answer_lost(u3.NewConnectionError(None, "refused")), answer_lost(ValueError("bad"))
        (False, False)
    """
    if isinstance(exc, RayQueueError) or status_code(exc) != 0 or is_tls_failure(exc):
        return False
    return bool(_transport_sent(exc))


def call(
    fn: Callable[..., T],
    *args: Any,
    verb: str,
    resource: str,
    namespace: str | None = None,
    name: str | None = None,
    server: str | None = None,
    idempotent: bool = True,
    policy: RetryPolicy = DEFAULT_POLICY,
    deadline: float | None = None,
    request_timeout: tuple[float, float] | float | None = DEFAULT_REQUEST_TIMEOUT,
    sleep: Callable[[float], None] = time.sleep,
    failures: list[BaseException] | None = None,
    **kwargs: Any,
) -> T:
    """Call ``fn(*args, **kwargs)`` with retries, raising a typed error when it gives up.

    Args:
        fn: a ``kubernetes`` client method (or any callable raising its exceptions).
        verb, resource, namespace, name, server: context for error messages.
        idempotent: whether the call may be repeated after an unclear failure.
        policy: the :class:`RetryPolicy`.
        deadline: an absolute ``time.monotonic()`` after which no new attempt starts.
        request_timeout: passed as ``_request_timeout`` (``None`` leaves it out).
        sleep: injectable for tests.
        failures: when given, every failed attempt's exception is appended to it (so a write can tell
            whether an attempt's answer was lost: :func:`answer_lost`).

    Raises:
        RayQueueError: the mapped error (see :func:`rayqueue_sdk.kube.errors.translate`).

    Example:
        >>> from kubernetes.client.exceptions import ApiException
        >>> def denied():
        ...     raise ApiException(status=401, reason="Unauthorized")
        >>> try:
        ...     call(denied, verb="list", resource="rayclusters.ray.io", request_timeout=None)
        ... except Exception as err:
        ...     print(type(err).__name__)
        AuthenticationError
    """
    if request_timeout is not None:
        kwargs.setdefault("_request_timeout", request_timeout)
    started = time.monotonic()
    attempt = 0
    while True:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # mapped to the error tree below
            attempt += 1
            if failures is not None:
                failures.append(exc)
            err_ctx = {
                "verb": verb,
                "resource": resource,
                "namespace": namespace,
                "name": name,
                "server": server,
            }
            if not is_retryable(exc, idempotent=idempotent) or attempt >= policy.attempts:
                raise translate(exc, **err_ctx) from exc
            pause = policy.delay(attempt - 1, exc)
            now = time.monotonic()
            if now + pause - started > policy.budget or (deadline is not None and now + pause >= deadline):
                raise translate(exc, **err_ctx) from exc
            log.debug(
                "%s %s failed (%s); retry %d/%d in %.2fs",
                verb,
                resource,
                status_code(exc) or type(exc).__name__,
                attempt,
                policy.attempts - 1,
                pause,
            )
            sleep(pause)
