"""``resourceVersion``, ``resourceVersionMatch`` and ``sendInitialEvents`` of list and watch requests.

Upstream's rules (``staging/src/k8s.io/apimachinery/pkg/apis/meta/internalversion/validation``
``ValidateListOptions``; https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions):

* list: ``resourceVersionMatch`` needs a ``resourceVersion``, is forbidden with ``continue``, is
  ``Exact`` or ``NotOlderThan``, and ``Exact`` is forbidden for ``"0"``; ``sendInitialEvents`` is
  forbidden. A bad combination is a 422 ``ListOptions.meta.k8s.io "" is invalid: ...``.
* watch: ``sendInitialEvents`` requires ``resourceVersionMatch=NotOlderThan``, which is allowed only
  with ``sendInitialEvents``.
* a version the server has not reached yet: upstream's watch cache waits up to 3 seconds for it
  (``waitUntilFreshAndBlock``), then answers ``504 Timeout`` ``Too large resource version: X, current:
  Y`` with the cause ``ResourceVersionTooLarge`` and ``Retry-After: 1``
  (``storage.NewTooLargeResourceVersionError``).

Example:
    >>> parse({"resourceVersion": ["5"], "resourceVersionMatch": ["Exact"]}, watch=False)
    ListOptions(resource_version='5', match='Exact', send_initial_events=None)
    >>> try:
    ...     parse({"resourceVersionMatch": ["Exact"]}, watch=False)
    ... except HTTPError as err:
    ...     print(err.code, err.body["message"].partition(": ")[2])
    422 resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

from rayqueue_local.apimachinery.status import HTTPError
from rayqueue_local.apiserver.http import query_str

__all__ = ["TOO_LARGE_WAIT_SECONDS", "ListOptions", "parse", "version_number", "wait_for_version"]

#: How long a read from a future resourceVersion waits for the store to get there (upstream: 3 s).
TOO_LARGE_WAIT_SECONDS = 3.0


class ListOptions(NamedTuple):
    """The version options of one list or watch request (empty strings as None)."""

    resource_version: str | None
    match: str | None
    send_initial_events: bool | None


def _forbidden(message: str) -> dict[str, str]:
    return {
        "reason": "FieldValueForbidden",
        "field": "resourceVersionMatch",
        "message": f"Forbidden: {message}",
    }


def parse(query: dict[str, list[str]], *, watch: bool) -> ListOptions:
    """The options of a request, checked as upstream checks them (422 otherwise)."""
    rv = query_str(query, "resourceVersion") or None
    match = query_str(query, "resourceVersionMatch") or None
    raw_initial = query_str(query, "sendInitialEvents")
    initial = None if raw_initial in (None, "") else raw_initial.lower() in ("true", "1")
    cont = query_str(query, "continue")
    causes: list[dict[str, str]] = []
    if watch:
        if initial is not None and match != "NotOlderThan":
            causes.append(
                _forbidden("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
            )
        if match is not None:
            if initial is None:
                causes.append(
                    _forbidden(
                        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
                    )
                )
            if match != "NotOlderThan":
                causes.append(_unsupported(match, '"NotOlderThan"'))
            if cont:
                causes.append(_forbidden("resourceVersionMatch is forbidden when continue is provided"))
    else:
        if match is not None:
            if rv is None:
                causes.append(
                    _forbidden("resourceVersionMatch is forbidden unless resourceVersion is provided")
                )
            if cont:
                causes.append(_forbidden("resourceVersionMatch is forbidden when continue is provided"))
            if match not in ("Exact", "NotOlderThan"):
                causes.append(_unsupported(match, '"Exact", "NotOlderThan", ""'))
            if match == "Exact" and rv == "0":
                causes.append(_forbidden('resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
        if initial is not None:
            causes.append(
                {
                    "reason": "FieldValueForbidden",
                    "field": "sendInitialEvents",
                    "message": "Forbidden: sendInitialEvents is forbidden for list",
                }
            )
    if causes:
        raise HTTPError.invalid("ListOptions", "meta.k8s.io", "", causes)
    return ListOptions(rv, match, initial)


def _unsupported(value: str, supported: str) -> dict[str, str]:
    return {
        "reason": "FieldValueNotSupported",
        "field": "resourceVersionMatch",
        "message": f'Unsupported value: "{value}": supported values: {supported}',
    }


def version_number(rv: str) -> int:
    """A resourceVersion as a number; 400 as upstream for one that is not.

    Example:
        >>> version_number("12")
        12
    """
    try:
        value = int(rv)
    except ValueError:
        value = -1
    if value < 0:
        raise HTTPError.bad_request(f"invalid resource version: {rv}")
    return value


def wait_for_version(
    current: Callable[[], str], wanted: int, timeout: float = TOO_LARGE_WAIT_SECONDS
) -> None:
    """Return once ``current()`` reaches ``wanted``; after ``timeout`` seconds, upstream's 504.

    Example:
        >>> wait_for_version(lambda: "10", 5)
        >>> try:
        ...     wait_for_version(lambda: "10", 11, timeout=0)
        ... except HTTPError as err:
        ...     print(err.code, err.body["message"], err.headers)
        504 Timeout: Too large resource version: 11, current: 10 {'Retry-After': '1'}
    """
    deadline = time.monotonic() + timeout
    while True:
        now = int(current())
        if now >= wanted:
            return
        if time.monotonic() >= deadline:
            raise HTTPError.make(
                504,
                "Timeout",
                f"Timeout: Too large resource version: {wanted}, current: {now}",
                details={
                    "causes": [
                        {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
                    ],
                    "retryAfterSeconds": 1,
                },
                headers={"Retry-After": "1"},
            )
        time.sleep(0.02)
