"""Resource amounts as Kueue counts them: integers per resource, with Kueue's display format.

Kueue keeps CPU in millicores and every other resource in whole units (bytes for memory),
rounding fractions up as ``resource.Quantity.MilliValue()``/``Value()`` do (the parsing is
:mod:`rayqueue_local.apimachinery.quantities`), and prints amounts with its ``ResourceFormatter``
(CPU and plain counts in decimal SI, memory in the canonical binary or decimal form)
[K pkg/resources/resource_formatter.go].

Example:
    >>> to_amount("cpu", "1500m"), to_amount("memory", "8Gi"), to_amount("nvidia.com/gpu", 2)
    (1500, 8589934592, 2)
    >>> format_amount("cpu", 2000), format_amount("memory", 3 * 10**9), format_amount("memory", 2**34)
    ('2', '3G', '16Gi')
"""

from __future__ import annotations

import functools
import math

from rayqueue_local.apimachinery.quantities import BINARY_SUFFIXES, DECIMAL_SUFFIXES, parse_quantity

__all__ = ["format_amount", "to_amount"]

_SUFFIX_FOR_EXP = {exp: suffix for suffix, exp in DECIMAL_SUFFIXES.items()}
_BINARY_FOR_POWER = {bits // 10: suffix for suffix, bits in BINARY_SUFFIXES.items()}


def to_amount(resource: str, value: str | int | float) -> int:
    """Kueue's integer amount of ``value``: millicores for ``cpu``, whole units (rounded up) otherwise.

    Example:
        >>> to_amount("cpu", "0.1"), to_amount("memory", "1.5"), to_amount("pods", 4)
        (100, 2, 4)
    """
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return _to_amount(resource, value)
    return _cached_amount(resource, value)


def _to_amount(resource: str, value: str | int | float) -> int:
    exact = parse_quantity(value)
    if resource == "cpu":
        exact *= 1000
    return math.ceil(exact)


@functools.lru_cache(maxsize=4096)
def _cached_amount(resource: str, value: str | int | float) -> int:
    # The same few quantities ("2", "8Gi") recur in thousands of Workloads: parse each once.
    return _to_amount(resource, value)


def _decimal(mantissa: int, exp: int) -> str:
    if mantissa == 0:
        return "0"
    while mantissa % 1000 == 0 and exp < 18:
        mantissa //= 1000
        exp += 3
    while exp < -9:  # finer than nano cannot be written with a suffix; round up like Kubernetes
        mantissa = -(-mantissa // 1000)
        exp += 3
    return f"{mantissa}{_SUFFIX_FOR_EXP[exp]}"


def format_amount(resource: str, amount: int) -> str:
    """Print ``amount`` of ``resource`` as Kueue prints it in messages and status.

    CPU is millicores (``2000`` -> ``"2"``, ``500`` -> ``"500m"``); memory and ephemeral storage
    use the binary suffix when the value is a multiple of 1024 and the decimal one otherwise.

    Example:
        >>> format_amount("cpu", 500), format_amount("memory", 512 * 2**20), format_amount("pods", 5)
        ('500m', '512Mi', '5')
    """
    if resource == "cpu":
        return _decimal(amount, -3)
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        if abs(amount) >= 1024:
            power, mantissa = 0, amount
            while mantissa % 1024 == 0 and power < 6:
                mantissa //= 1024
                power += 1
            if power:
                return f"{mantissa}{_BINARY_FOR_POWER[power]}"
        return _decimal(amount, 0)
    return _decimal(amount, 0)
