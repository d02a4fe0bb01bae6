"""Kubernetes quantities: parsing, formatting, comparison, and the peer SDK's integer-memory meaning."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.manifests.quantities import (
    compare_quantities,
    count_quantity,
    cpu_quantity,
    cpu_to_ray_count,
    memory_quantity,
    parse_quantity,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("500m", Decimal("0.5")),
        ("2", Decimal(2)),
        ("1.5", Decimal("1.5")),
        ("8Gi", Decimal(8 * 2**30)),
        ("8G", Decimal(8 * 10**9)),
        ("512Mi", Decimal(512 * 2**20)),
        ("1e3", Decimal(1000)),
        ("100k", Decimal(100_000)),
        (".5", Decimal("0.5")),
        (3, Decimal(3)),
    ],
)
def test_parse_quantity(text: str | int, value: Decimal) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["", "8 GB", "Gi", "1.2.3", "five", "8gi", "--1", "1e"])
def test_parse_quantity_rejects_non_quantities(text: str) -> None:
    with pytest.raises(ValueError):
        parse_quantity(text)


def test_compare_quantities_across_units() -> None:
    assert compare_quantities("1Gi", "1G") == 1
    assert compare_quantities("500m", "0.5") == 0
    assert compare_quantities("1000Mi", "1Gi") == -1


def test_integer_memory_means_gigabytes_and_strings_are_quantities() -> None:
    assert memory_quantity(8, "m") == "8G"
    assert memory_quantity(1.5, "m") == "1.5G"
    assert memory_quantity("8Gi", "m") == "8Gi"
    assert memory_quantity(" 3G ", "m") == "3G"


def test_cpu_formats() -> None:
    assert cpu_quantity(2, "c") == "2"
    assert cpu_quantity(2.0, "c") == "2"
    assert cpu_quantity(0.25, "c") == "250m"
    assert cpu_quantity("100m", "c") == "100m"
    assert cpu_quantity(0, "c") == "0"


def test_count_quantity_keeps_the_given_form() -> None:
    assert count_quantity(2, "f", "x") == 2
    assert count_quantity("1", "f", "x") == "1"
    with pytest.raises(ConfigError):
        count_quantity("500m", "f", "x")


@given(st.integers(min_value=0, max_value=10**6))
def test_millicores_round_trip(millis: int) -> None:
    text = cpu_quantity(millis / 1000, "c")
    assert parse_quantity(text) * 1000 == millis


@given(st.integers(min_value=1, max_value=4096))
def test_integer_gigabytes_compare_like_bytes(gigabytes: int) -> None:
    assert parse_quantity(memory_quantity(gigabytes, "m")) == gigabytes * 10**9
    assert compare_quantities(memory_quantity(gigabytes, "m"), f"{gigabytes}Gi") == -1


@given(st.integers(min_value=1, max_value=64_000))
def test_ray_cpu_count_is_the_ceiling(millis: int) -> None:
    count = cpu_to_ray_count(f"{millis}m")
    assert count >= 1 and count - 1 < millis / 1000 <= count
