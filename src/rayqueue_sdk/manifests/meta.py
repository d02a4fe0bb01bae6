"""Typed accessors for the parts every Kubernetes object has: its metadata, its status conditions and their
times, read from the plain dicts the API returns.

One place instead of ``(obj.get("metadata") or {}).get("name")`` chains: each accessor accepts ``None``
or a partial object and answers with a typed value (``""``/empty mapping/``None``), never a ``KeyError``.
Pure: no I/O.

Example:
    >>> rc = {"metadata": {"name": "ws", "namespace": "ds", "labels": {"team": "a"}},
    ...       "status": {"conditions": [{"type": "Ready", "status": "True",
    ...                                  "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}
    >>> name_of(rc), namespace_of(rc), labels_of(rc)["team"], is_true(condition_of(rc, "Ready"))
    ('ws', 'ds', 'a', True)
    >>> transition_time(condition_of(rc, "Ready"))
    datetime.datetime(2026, 1, 1, 0, 0, tzinfo=datetime.timezone.utc)
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, NamedTuple

__all__ = [
    "Condition",
    "Conditions",
    "Obj",
    "annotations_of",
    "condition_of",
    "condition_text",
    "conditions_of",
    "created_at",
    "epoch_of",
    "is_false",
    "is_true",
    "labels_of",
    "meta_of",
    "name_of",
    "namespace_of",
    "parse_time",
    "stored_as_sent",
    "transition_time",
    "uid_of",
]

#: A Kubernetes object as the API returns it (decoded JSON).
Obj = Mapping[str, Any]


def _mapping_at(obj: Mapping[str, Any] | None, key: str) -> Mapping[str, Any]:
    value = (obj or {}).get(key)
    return value if isinstance(value, Mapping) else {}


def _text_at(obj: Mapping[str, Any], key: str) -> str | None:
    value = obj.get(key)
    return str(value) if value else None


def meta_of(obj: Obj | None) -> Mapping[str, Any]:
    """``obj.metadata`` (an empty mapping when absent).

    Example:
        >>> meta_of(None), meta_of({"metadata": {"name": "x"}})
        ({}, {'name': 'x'})
    """
    return _mapping_at(obj, "metadata")


def name_of(obj: Obj | None) -> str:
    """``metadata.name`` (``""`` when absent).

    Example:
        >>> name_of({"metadata": {"name": "ws"}}), name_of({})
        ('ws', '')
    """
    return str(meta_of(obj).get("name") or "")


def namespace_of(obj: Obj | None) -> str | None:
    """``metadata.namespace`` (``None`` when absent, as for a cluster-scoped object).

    Example:
        >>> namespace_of({"metadata": {"namespace": "ds"}}), namespace_of({})
        ('ds', None)
    """
    return _text_at(meta_of(obj), "namespace")


def uid_of(obj: Obj | None) -> str | None:
    """``metadata.uid`` (``None`` when absent, e.g. a manifest not yet stored).

    Example:
        >>> uid_of({"metadata": {"uid": "1234"}}), uid_of({})
        ('1234', None)
    """
    return _text_at(meta_of(obj), "uid")


def labels_of(obj: Obj | None) -> Mapping[str, str]:
    """``metadata.labels`` (an empty mapping when absent).

    Example:
        >>> labels_of({"metadata": {"labels": {"a": "b"}}}), labels_of(None)
        ({'a': 'b'}, {})
    """
    return _mapping_at(meta_of(obj), "labels")


def annotations_of(obj: Obj | None) -> Mapping[str, str]:
    """``metadata.annotations`` (an empty mapping when absent).

    Example:
        >>> annotations_of({"metadata": {"annotations": {"a": "b"}}}), annotations_of({})
        ({'a': 'b'}, {})
    """
    return _mapping_at(meta_of(obj), "annotations")


def parse_time(value: object) -> datetime | None:
    """An RFC 3339 time as Kubernetes writes it (``2026-01-01T00:00:00Z``), aware; ``None`` if absent or
    unreadable.

    Example:
        >>> parse_time("2026-01-01T10:00:00Z").hour, parse_time("not a time"), parse_time(None)
        (10, None, None)
    """
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def epoch_of(value: object) -> float | None:
    """An RFC 3339 time as epoch seconds (``None`` if absent or unreadable).

    Example:
        >>> epoch_of("1970-01-01T00:01:00Z"), epoch_of("")
        (60.0, None)
    """
    parsed = parse_time(value)
    return parsed.timestamp() if parsed else None


def created_at(obj: Obj | None) -> datetime | None:
    """``metadata.creationTimestamp``, parsed (``None`` when absent).

    Example:
        >>> created_at({"metadata": {"creationTimestamp": "2026-03-01T12:00:00Z"}}).month
        3
    """
    return parse_time(meta_of(obj).get("creationTimestamp"))


def condition_of(obj: Obj | None, type_: str) -> Mapping[str, Any] | None:
    """The condition of ``type_`` in ``obj.status.conditions``, or ``None``.

    Example:
        >>> condition_of({"status": {"conditions": [{"type": "Admitted", "status": "True"}]}}, "Admitted")
        {'type': 'Admitted', 'status': 'True'}
        >>> condition_of({"status": {}}, "Admitted") is None
        True
    """
    status = (obj or {}).get("status")
    if not isinstance(status, Mapping):
        return None
    for cond in status.get("conditions") or []:
        if isinstance(cond, Mapping) and cond.get("type") == type_:
            return cond
    return None


def is_true(cond: Mapping[str, Any] | None) -> bool:
    """Whether a condition is present with ``status: "True"``.

    Example:
        >>> is_true({"status": "True"}), is_true({"status": "False"}), is_true(None)
        (True, False, False)
    """
    return cond is not None and str(cond.get("status")) == "True"


def is_false(cond: Mapping[str, Any] | None) -> bool:
    """Whether a condition is present with ``status: "False"`` (absent is neither true nor false).

    Example:
        >>> is_false({"status": "False"}), is_false(None)
        (True, False)
    """
    return cond is not None and str(cond.get("status")) == "False"


def condition_text(cond: Mapping[str, Any] | None, key: str) -> str | None:
    """A condition's ``reason`` or ``message`` (``key``), ``None`` when absent or empty.

    Example:
        >>> condition_text({"reason": "Pending", "message": ""}, "reason"), condition_text(None, "message")
        ('Pending', None)
    """
    if not cond:
        return None
    value = cond.get(key)
    return str(value) if value else None


def transition_time(cond: Mapping[str, Any] | None) -> datetime | None:
    """A condition's ``lastTransitionTime``, parsed (``None`` when absent).

    Example:
        >>> transition_time({"lastTransitionTime": "2026-01-01T00:00:05Z"}).second
        5
    """
    return parse_time((cond or {}).get("lastTransitionTime"))


class Condition(NamedTuple):
    """One status condition, decoded: ``true``/``false`` say its ``status`` (an absent condition is
    neither), ``reason``/``message`` are ``None`` when empty, ``transition`` is ``lastTransitionTime`` as
    written (:func:`parse_time` reads it).

    Example:
        >>> c = conditions_of({"status": {"conditions": [{"type": "Ready", "status": "True"}]}})["Ready"]
        >>> c.present, c.true, c.false, c.reason
        (True, True, False, None)
    """

    type: str
    present: bool = False
    true: bool = False
    false: bool = False
    reason: str | None = None
    message: str | None = None
    transition: str | None = None


class Conditions:
    """An object's status conditions by type (made by :func:`conditions_of`); a type the object does not
    have reads as an absent :class:`Condition`, so ``conds["Admitted"].true`` never raises. Each type is
    decoded the first time it is asked for.

    Example:
        >>> conds = conditions_of({"status": {"conditions": [{"type": "Evicted", "status": "False"}]}})
        >>> conds["Evicted"].false, conds["Admitted"].present, "Evicted" in conds
        (True, False, True)
    """

    __slots__ = ("_decoded", "_raw")

    def __init__(self, raw: Mapping[str, Mapping[str, Any]]) -> None:
        self._raw = raw
        self._decoded: dict[str, Condition] = {}

    def __getitem__(self, type_: str) -> Condition:
        found = self._decoded.get(type_)
        if found is None:
            raw = self._raw.get(type_)
            found = self._decoded[type_] = _decoded(raw) if raw is not None else Condition(type_)
        return found

    def __contains__(self, type_: object) -> bool:
        return type_ in self._raw

    def __repr__(self) -> str:
        return f"Conditions({sorted(self._raw)})"


def _decoded(cond: Mapping[str, Any]) -> Condition:
    status = str(cond.get("status"))
    changed = cond.get("lastTransitionTime")
    reason, message = cond.get("reason"), cond.get("message")
    return Condition(
        str(cond.get("type")),
        present=True,
        true=status == "True",
        false=status == "False",
        reason=str(reason) if reason else None,
        message=str(message) if message else None,
        transition=str(changed) if changed else None,
    )


def conditions_of(obj: Obj | None) -> Conditions:
    """``obj.status.conditions`` by type, as :class:`Conditions` (the first of a type wins, as
    :func:`condition_of` reads them).

    Example:
        >>> wl = {"status": {"conditions": [{"type": "QuotaReserved", "status": "True", "reason": "Ok"}]}}
        >>> conditions_of(wl)["QuotaReserved"].reason, conditions_of(None)["QuotaReserved"].true
        ('Ok', False)
    """
    status = (obj or {}).get("status")
    raw: dict[str, Mapping[str, Any]] = {}
    if isinstance(status, Mapping):
        for cond in status.get("conditions") or ():
            if isinstance(cond, Mapping):
                raw.setdefault(str(cond.get("type")), cond)
    return Conditions(raw)


def stored_as_sent(stored: Obj, sent: Obj) -> bool:
    """Whether the object the API server holds still has everything a write sent: the name, labels and
    annotations, and every top-level field but the type, the rest of the metadata and the status (the
    server may add defaults beside them; lists compare item by item). How a create whose answer was lost
    tells the object it made.

    Example:
        >>> sent = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {"a": "1"}},
        ...         "data": {"k": "v"}}
        >>> stored = {**sent, "metadata": {"name": "c", "uid": "u", "labels": {"a": "1", "b": "2"}}}
        >>> stored_as_sent(stored, sent), stored_as_sent({**stored, "data": {"k": "other"}}, sent)
        (True, False)
    """
    meta = meta_of(sent)
    written = {k: v for k, v in sent.items() if k not in ("apiVersion", "kind", "metadata", "status")}
    written["metadata"] = {k: meta[k] for k in ("name", "labels", "annotations") if meta.get(k)}
    return _holds(stored, written)


def _holds(stored: Any, sent: Any) -> bool:
    """Whether ``stored`` holds everything in ``sent``: every key of a mapping, lists item by item, other
    values equal.

    Example:
        >>> _holds({"spec": {"a": 1, "b": [{"x": 1, "y": 2}]}}, {"spec": {"b": [{"x": 1}]}})
        True
        >>> _holds({"spec": {"a": 1}}, {"spec": {"a": 2}}), _holds({"spec": {}}, {"spec": {"a": 1}})
        (False, False)
    """
    if isinstance(sent, Mapping):
        return isinstance(stored, Mapping) and all(
            k in stored and _holds(stored[k], v) for k, v in sent.items()
        )
    if isinstance(sent, list):
        return (
            isinstance(stored, list)
            and len(stored) == len(sent)
            and all(_holds(a, b) for a, b in zip(stored, sent, strict=True))
        )
    return bool(stored == sent)
