"""Kubernetes resource quantities (``resource.Quantity``): the one parser of the emulator, exact.

The grammar is apimachinery's (``k8s.io/apimachinery/pkg/api/resource/quantity.go``)::

    <quantity>        ::= <signedNumber><suffix>
    <signedNumber>    ::= <number> | <sign><number>
    <sign>            ::= "+" | "-"
    <number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
    <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
    <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei
    <decimalSI>       ::= n | u | m | "" | k | M | G | T | P | E
    <decimalExponent> ::= "e" <signedInteger> | "E" <signedInteger>

No whitespace anywhere, ASCII digits only, suffixes case-sensitive (``K`` is not ``k``). The value is
a :class:`~fractions.Fraction`, so ``"0.1"`` is exactly one tenth and ``"1Ei"`` exactly ``2**60``.
A JSON number in an object (``cpu: 2``, ``cpu: 0.5``) is read as the text it would be written as, as
the API server's JSON decoder does. (``kubernetes.utils.parse_quantity`` is not used: the emulator
does not depend on the kubernetes client, and that parser accepts ``"1 Gi"`` and ``"1K"``.)

Example:
    >>> parse_quantity("500m"), parse_quantity("1Ki"), parse_quantity(3), parse_quantity("1e3")
    (Fraction(1, 2), Fraction(1024, 1), Fraction(3, 1), Fraction(1000, 1))
    >>> parse_quantity("1 Gi")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: quantities must match the regular expression '^([+-]?[0-9.]+)...$', got '1 Gi'
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

__all__ = ["BINARY_SUFFIXES", "DECIMAL_SUFFIXES", "parse_quantity"]

BINARY_SUFFIXES: dict[str, int] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
"""Binary SI suffix -> power of two."""

DECIMAL_SUFFIXES: dict[str, int] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
"""Decimal SI suffix -> power of ten."""

_QUANTITY = re.compile(
    r"(?P<sign>[+-]?)(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<exponent>[eE][+-]?[0-9]+)|(?P<suffix>[KMGTPE]i|[numkMGTPE])?)"
)
# The message's pattern is upstream's ``splitREString``, so the 422 text reads as the API server's.
_MESSAGE = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def parse_quantity(value: str | int | float) -> Fraction:
    """The exact value of a Kubernetes quantity (``"500m"``, ``"8Gi"``, ``"1e3"``, ``2``, ``0.5``).

    Raises :class:`ValueError` for anything the API server would reject (``"1.5.3"``, ``"Mi"``,
    ``"1 Gi"``, ``""``, ``"1K"``), for booleans and for non-finite floats.

    Example:
        >>> parse_quantity("-1.5Gi"), parse_quantity(".5"), parse_quantity("5."), parse_quantity(0.1)
        (Fraction(-1610612736, 1), Fraction(1, 2), Fraction(5, 1), Fraction(1, 10))
        >>> parse_quantity("1.5.3")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: quantities must match the regular expression '^([+-]?[0-9.]+)...$', got '1.5.3'
    """
    if isinstance(value, bool):
        raise ValueError(f"quantities must be numbers or strings, got {value!r}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"quantities must be finite, got {value!r}")
        value = repr(value)  # the JSON text of the number: 0.1 is "0.1", not its binary expansion
    if not isinstance(value, str):
        raise ValueError(f"quantities must be numbers or strings, got {value!r}")
    match = _QUANTITY.fullmatch(value)
    if match is None:
        raise ValueError(f"{_MESSAGE}, got {value!r}")
    number = match["number"]
    amount = Fraction(number + "0" if number.endswith(".") else number)
    if match["sign"] == "-":
        amount = -amount
    if match["exponent"]:
        return amount * Fraction(10) ** int(match["exponent"][1:])
    suffix = match["suffix"] or ""
    if suffix in BINARY_SUFFIXES:
        return amount * 2 ** BINARY_SUFFIXES[suffix]
    return amount * Fraction(10) ** DECIMAL_SUFFIXES[suffix]
