"""Kubernetes quantities: parse, check, format and compare CPU and memory amounts.

Kubernetes writes amounts as *quantities*: ``"500m"`` (half a CPU), ``"2"``, ``"1.5"``, ``"8Gi"``
(8 × 2^30 bytes), ``"8G"`` (8 × 10^9 bytes), ``"1e9"``. The SDK also accepts plain numbers, with the
meaning they have in the peer SDK: a CPU number is a number of cores, and **a memory number is a number
of gigabytes** (``8`` -> ``"8G"``). Every check raises :class:`~rayqueue_sdk.errors.ConfigError` naming
the field, the bad value and what is allowed.

Example:
    >>> cpu_quantity("500m", "worker_cpu_requests"), cpu_quantity(2, "worker_cpu_requests")
    ('500m', '2')
    >>> memory_quantity(8, "worker_memory_requests")
    '8G'
    >>> compare_quantities("8Gi", "8G")
    1
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from rayqueue_sdk.errors import ConfigError

__all__ = [
    "CPU_ALLOWED",
    "MEMORY_ALLOWED",
    "compare_quantities",
    "count_quantity",
    "cpu_quantity",
    "cpu_to_ray_count",
    "memory_quantity",
    "parse_quantity",
    "quantity_or_zero",
]

#: What a CPU or a memory field accepts, as the ConfigError's ``allowed`` text says it.
CPU_ALLOWED = "a number of cores >= 0 (2, 1.5) or a Kubernetes CPU quantity such as '500m' or '2'"
MEMORY_ALLOWED = (
    "a number of gigabytes > 0 (8 means '8G') or a Kubernetes memory quantity of at least 1Mi "
    "such as '512Mi', '8Gi' or '8G'"
)

_QUANTITY = re.compile(
    r"^(?P<sign>[+-]?)(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE](?P<exp>[+-]?[0-9]+))?\Z"
)
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_MIN_MEMORY = Decimal(2**20)
# Kubernetes keeps a quantity's value in an int64; its parser refuses exponents past a few dozen.
_MAX_QUANTITY = Decimal(2**63)
_MAX_EXPONENT = 100


def parse_quantity(text: str | int | float) -> Decimal:
    """Return the value of a Kubernetes quantity as a :class:`~decimal.Decimal` (bytes, cores, ...).

    Numbers are taken as they are (no unit). Raises :class:`ValueError` for text that is not a quantity.

    Example:
        >>> parse_quantity("500m"), parse_quantity("1Ki"), parse_quantity("2e3"), parse_quantity(3)
        (Decimal('0.500'), Decimal('1024'), Decimal('2E+3'), Decimal('3'))
    """
    if isinstance(text, bool):
        raise ValueError(f"not a quantity: {text!r}")
    if isinstance(text, int):
        if abs(text) >= _MAX_QUANTITY:
            raise ValueError(f"not a quantity: {text!r} (larger than Kubernetes' limit of 2^63-1)")
        return Decimal(text)
    if isinstance(text, float):
        if not math.isfinite(text):
            raise ValueError(f"not a finite number: {text!r}")
        return Decimal(repr(text))
    if not isinstance(text, str):
        raise ValueError(f"not a quantity: {text!r}")
    match = _QUANTITY.match(text.strip())
    if match is None:
        raise ValueError(f"not a quantity: {text!r}")
    try:
        value = Decimal(match["number"])
    except InvalidOperation as err:  # pragma: no cover - the regex admits only decimal numbers
        raise ValueError(f"not a quantity: {text!r}") from err
    suffix, exp = match["suffix"], match["exp"]
    if exp is not None and abs(int(exp)) > _MAX_EXPONENT:  # "1e999999999": out of any range, not a crash
        raise ValueError(f"not a quantity: {text!r} (exponent out of range)")
    if suffix in _BINARY:
        value *= Decimal(2) ** _BINARY[suffix]
    elif suffix in _DECIMAL:
        value = value.scaleb(_DECIMAL[suffix])
    elif exp is not None:
        value = value.scaleb(int(exp))
    if value >= _MAX_QUANTITY:
        raise ValueError(f"not a quantity: {text!r} (larger than Kubernetes' limit of 2^63-1)")
    return -value if match["sign"] == "-" else value


def quantity_or_zero(value: Any) -> Decimal:
    """The value of a quantity as a status reports it, ``0`` when it is absent or not a quantity (a reader
    of Kueue's or Kubernetes' status does not fail on an amount it cannot parse).

    Example:
        >>> quantity_or_zero("2Gi"), quantity_or_zero(None), quantity_or_zero("lots")
        (Decimal('2147483648'), Decimal('0'), Decimal('0'))
    """
    try:
        return parse_quantity(value)
    except ValueError:
        return Decimal(0)


def compare_quantities(a: str | int | float, b: str | int | float) -> int:
    """Compare two quantities of the same kind: -1, 0 or 1 (like the old ``cmp``).

    Example:
        >>> compare_quantities("500m", "0.5"), compare_quantities("1Gi", "1G"), compare_quantities(1, "2")
        (0, 1, -1)
    """
    x, y = parse_quantity(a), parse_quantity(b)
    return (x > y) - (x < y)


def cpu_quantity(value: Any, field: str) -> str:
    """Check a CPU amount and return it as a Kubernetes quantity string.

    Whole cores stay whole (``2`` -> ``"2"``), fractions become millicores (``1.5`` -> ``"1500m"``),
    quantity strings are kept as written.

    Example:
        >>> cpu_quantity(1.5, "head_cpu_requests"), cpu_quantity("250m", "head_cpu_limits")
        ('1500m', '250m')
        >>> cpu_quantity(-1, "worker_cpu_requests")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: worker_cpu_requests: negative CPU (got -1); allowed: ...
    """
    amount = _amount(value, field, CPU_ALLOWED, "CPU")
    if isinstance(value, str):
        text = value.strip()
        if amount != 0 and amount < Decimal("0.001"):
            raise ConfigError(field, value, CPU_ALLOWED, problem="below Kubernetes' CPU resolution of 1m")
        return text
    if amount == amount.to_integral_value():
        return str(int(amount))
    millis = amount * 1000
    if millis != millis.to_integral_value():
        raise ConfigError(field, value, CPU_ALLOWED, problem="finer than Kubernetes' CPU resolution of 1m")
    return f"{int(millis)}m"


def memory_quantity(value: Any, field: str) -> str:
    """Check a memory amount and return it as a Kubernetes quantity string.

    A number means gigabytes, as in the peer SDK (``8`` -> ``"8G"``); a string is a quantity and must
    come to at least 1Mi (a bare ``"8"`` would be eight *bytes*, which is never what is meant).

    Example:
        >>> memory_quantity(8, "worker_memory_requests"), memory_quantity("512Mi", "head_memory_limits")
        ('8G', '512Mi')
        >>> memory_quantity("8 GB", "worker_memory_requests")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: worker_memory_requests: not a memory quantity (got '8 GB'); ...
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        amount = _amount(value, field, MEMORY_ALLOWED, "memory")
        if amount == 0:
            raise ConfigError(field, value, MEMORY_ALLOWED, problem="zero memory")
        text = str(int(amount)) if amount == amount.to_integral_value() else f"{amount.normalize():f}"
        return f"{text}G"
    amount = _amount(value, field, MEMORY_ALLOWED, "memory")
    if amount < _MIN_MEMORY:
        raise ConfigError(field, value, MEMORY_ALLOWED, problem="less than 1Mi (a bare number is bytes)")
    return str(value).strip()


def count_quantity(value: Any, field: str, allowed: str) -> int | str:
    """Check a count of an extended resource (GPUs, TPUs, ...): a whole number >= 0.

    Integers stay integers; integral quantity strings are kept as strings.

    Example:
        >>> count_quantity(2, "worker_extended_resource_requests['nvidia.com/gpu']", "an integer >= 0")
        2
        >>> count_quantity("1", "x", "an integer >= 0")
        '1'
    """
    amount = _amount(value, field, allowed, "count")
    if amount != amount.to_integral_value():
        raise ConfigError(field, value, allowed, problem="extended resources are whole units")
    return value if isinstance(value, int) else str(value).strip()


def cpu_to_ray_count(quantity: str) -> int:
    """The whole number of CPUs Ray should advertise for a container CPU amount (rounded up, at least 1).

    Example:
        >>> cpu_to_ray_count("500m"), cpu_to_ray_count("2"), cpu_to_ray_count("2500m")
        (1, 2, 3)
    """
    return max(1, math.ceil(parse_quantity(quantity)))


def _amount(value: Any, field: str, allowed: str, what: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ConfigError(field, value, allowed, problem=f"not a {what} amount")
    try:
        amount = parse_quantity(value)
    except ValueError:
        raise ConfigError(field, value, allowed, problem=f"not a {what} quantity") from None
    if amount < 0:
        raise ConfigError(field, value, allowed, problem=f"negative {what}")
    return amount
