"""The emulator's one quantity parser against the Kubernetes quantity grammar (resource.Quantity)."""

from __future__ import annotations

import doctest
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rayqueue_local.apimachinery import quantities
from rayqueue_local.apimachinery.quantities import BINARY_SUFFIXES, DECIMAL_SUFFIXES, parse_quantity

VALID = [
    ("0", Fraction(0)),
    ("1", Fraction(1)),
    ("+1", Fraction(1)),
    ("-1", Fraction(-1)),
    ("007", Fraction(7)),
    ("1.5", Fraction(3, 2)),
    ("5.", Fraction(5)),
    (".5", Fraction(1, 2)),
    ("-.5", Fraction(-1, 2)),
    ("0.1", Fraction(1, 10)),
    ("100n", Fraction(1, 10**7)),
    ("5u", Fraction(5, 10**6)),
    ("500m", Fraction(1, 2)),
    ("1.5k", Fraction(1500)),
    ("2M", Fraction(2 * 10**6)),
    ("3G", Fraction(3 * 10**9)),
    ("4T", Fraction(4 * 10**12)),
    ("5P", Fraction(5 * 10**15)),
    ("6E", Fraction(6 * 10**18)),
    ("1Ki", Fraction(1024)),
    ("1.5Mi", Fraction(3 * 2**19)),
    ("8Gi", Fraction(8 * 2**30)),
    ("1Ti", Fraction(2**40)),
    ("1Pi", Fraction(2**50)),
    ("1Ei", Fraction(2**60)),
    ("-2Gi", Fraction(-2 * 2**30)),
    ("1e3", Fraction(1000)),
    ("1E3", Fraction(1000)),
    ("1e+3", Fraction(1000)),
    ("1.5e-3", Fraction(3, 2000)),
    ("12E-1", Fraction(6, 5)),
    (3, Fraction(3)),
    (0.5, Fraction(1, 2)),
    (0.1, Fraction(1, 10)),
    (1e20, Fraction(10**20)),
]

INVALID = [
    "",
    " ",
    "1 Gi",
    " 1",
    "1 ",
    "1.5.3",
    "Mi",
    "Gi",
    "m",
    ".",
    "+",
    "-",
    "+-1",
    "1K",
    "1ki",
    "1KI",
    "1Gb",
    "1g",
    "1e",
    "1e1.5",
    "1e3Gi",
    "1Gie3",
    "1mm",
    "0x10",
    "١",  # a non-ASCII digit
    "1_000",
    "inf",
    "nan",
    "1/2",
]


@pytest.mark.parametrize(("text", "value"), VALID, ids=[repr(t) for t, _ in VALID])
def test_valid_quantities(text: str | int | float, value: Fraction) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", INVALID, ids=repr)
def test_invalid_quantities_are_rejected_with_upstreams_message(text: str) -> None:
    with pytest.raises(ValueError, match="quantities must match the regular expression"):
        parse_quantity(text)


@pytest.mark.parametrize("value", [True, None, float("inf"), float("nan"), [1]], ids=repr)
def test_non_quantity_values_are_rejected(value: object) -> None:
    with pytest.raises(ValueError):
        parse_quantity(value)  # type: ignore[arg-type]


@given(
    sign=st.sampled_from(["", "+", "-"]),
    whole=st.text("0123456789", max_size=6),
    fraction=st.none() | st.text("0123456789", max_size=6),
    suffix=st.sampled_from([*BINARY_SUFFIXES, *DECIMAL_SUFFIXES, "e", "E"]),
    exponent=st.integers(-20, 20),
)
def test_every_grammatical_quantity_parses_to_its_exact_value(
    sign: str, whole: str, fraction: str | None, suffix: str, exponent: int
) -> None:
    number = whole if fraction is None else f"{whole}.{fraction}"
    if not (whole or fraction):  # <number> needs a digit on one side of the point
        with pytest.raises(ValueError):
            parse_quantity(f"{sign}{number}{suffix}")
        return
    mantissa = Fraction(int(whole or "0")) + (Fraction(int(fraction), 10 ** len(fraction)) if fraction else 0)
    if sign == "-":
        mantissa = -mantissa
    if suffix in ("e", "E"):
        text, expected = f"{sign}{number}{suffix}{exponent}", mantissa * Fraction(10) ** exponent
    elif suffix in BINARY_SUFFIXES:
        text, expected = f"{sign}{number}{suffix}", mantissa * 2 ** BINARY_SUFFIXES[suffix]
    else:
        text, expected = f"{sign}{number}{suffix}", mantissa * Fraction(10) ** DECIMAL_SUFFIXES[suffix]
    assert parse_quantity(text) == expected


@given(st.integers(-(10**30), 10**30), st.sampled_from(sorted(DECIMAL_SUFFIXES)))
def test_round_trip_through_the_canonical_decimal_form(millis: int, suffix: str) -> None:
    value = Fraction(millis, 1000)
    text = f"{millis}m"
    assert parse_quantity(text) == value
    scaled = value / Fraction(10) ** DECIMAL_SUFFIXES[suffix]
    if scaled.denominator == 1:
        assert parse_quantity(f"{scaled.numerator}{suffix}") == value


def test_docstring_examples() -> None:
    result = doctest.testmod(quantities)
    assert result.attempted > 0 and result.failed == 0
