"""Records by their fields: a frozen dataclass's fields as a dict, and one record's fields carried into
another that declares the same names.

:func:`record_dict` is the body of a ``to_dict`` whose keys are the record's fields (unlike
:func:`dataclasses.asdict` it does not recurse: a nested record is given as its own ``to_dict``).
:func:`carried` builds a record from another whose fields it shares by name, so a status built from an
assessment (or the assessment read back from a status) does not list the fields again. Pure: no I/O.

Example:
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Point:
    ...     x: int
    ...     y: int
    ...     label: str = ""
    >>> record_dict(Point(1, 2), drop=("label",), z=3)
    {'x': 1, 'y': 2, 'z': 3}
    >>> @dataclass(frozen=True)
    ... class Flat:
    ...     x: int
    ...     y: int
    >>> carried(Flat, Point(1, 2, "p"), y=5)
    Flat(x=1, y=5)
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import fields
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["carried", "record_dict"]

R = TypeVar("R", bound="DataclassInstance")


def record_dict(record: DataclassInstance, *, drop: Collection[str] = (), **values: Any) -> dict[str, Any]:
    """``record``'s fields by name, in their order, without those in ``drop``; ``values`` replace a
    field's value where they name one (keeping its place) and follow the fields otherwise.

    Example:
        >>> from rayqueue_sdk.admission.usage import UsageRow
        >>> record_dict(UsageRow("ds", "rc", "q", 2.0, None, 0.5), drop=("sources",), kind="RayJob")
        {'namespace': 'ds', 'name': 'rc', 'queue': 'q', 'gpu_hours_allocated': 2.0, \
'gpu_hours_busy': None, 'gpu_hours_reclaimed': 0.5, 'kind': 'RayJob', 'cluster_queue': None}
    """
    out = {name: getattr(record, name) for name in _names(type(record)) if name not in drop}
    out.update(values)
    return out


def carried(into: type[R], record: DataclassInstance, **values: Any) -> R:
    """A new ``into`` from ``record``'s fields that ``into`` declares too (by name), with ``values`` for
    the others (or in place of the carried ones).

    Example:
        >>> from rayqueue_sdk.admission.job import JobAssessment
        >>> from rayqueue_sdk.admission.phases import JobPhase, Verdict
        >>> a = JobAssessment(JobPhase.QUEUED, Verdict.WAIT, "queued", position=2)
        >>> b = carried(JobAssessment, a, explanation="queued again")
        >>> b.position, b.explanation
        (2, 'queued again')
    """
    names = _names(into)
    shared = {name: getattr(record, name) for name in _names(type(record)) if name in names}
    return into(**{**shared, **values})


@cache
def _names(cls: type[DataclassInstance]) -> tuple[str, ...]:
    """A dataclass's field names, read once per class (statuses are built on every observation)."""
    return tuple(f.name for f in fields(cls))
