"""The emulator's one RFC 3339 helper module."""

from __future__ import annotations

import doctest
import time
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rayqueue_local.apimachinery import time as ktime
from rayqueue_local.apimachinery.time import format_rfc3339, now_rfc3339, parse_rfc3339


def test_now_is_utc_whole_seconds_with_z() -> None:
    before = int(time.time())
    stamp = now_rfc3339()
    after = time.time()
    assert len(stamp) == 20 and stamp.endswith("Z") and stamp[10] == "T"
    parsed = parse_rfc3339(stamp)
    assert parsed is not None and before <= parsed <= after


@pytest.mark.parametrize(
    ("stamp", "seconds"),
    [
        ("1970-01-01T00:00:00Z", 0.0),
        ("1970-01-01T00:01:00z", 60.0),
        ("1970-01-01t00:01:00Z", 60.0),
        ("1970-01-01T01:01:00+01:00", 60.0),
        ("1969-12-31T23:01:00-01:00", 60.0),
        ("1970-01-01T00:01:00.250Z", 60.25),
        ("1970-01-01T00:01:00.123456789Z", 60.123456),
    ],
)
def test_parse_accepts_rfc3339(stamp: str, seconds: float) -> None:
    assert parse_rfc3339(stamp) == pytest.approx(seconds)


@pytest.mark.parametrize(
    "stamp",
    [
        None,
        "",
        "yesterday",
        "2026-01-02",
        "2026-01-02 03:04:05Z",
        "2026-01-02T03:04:05",
        "2026-13-02T03:04:05Z",
    ],
)
def test_parse_answers_none_for_missing_or_malformed(stamp: str | None) -> None:
    assert parse_rfc3339(stamp) is None


def test_format_takes_epoch_seconds_and_aware_datetimes() -> None:
    assert format_rfc3339(0) == "1970-01-01T00:00:00Z"
    assert format_rfc3339(59.999) == "1970-01-01T00:00:59Z"
    plus_two = datetime(2026, 1, 2, 5, 4, 5, tzinfo=timezone(timedelta(hours=2)))
    assert format_rfc3339(plus_two) == "2026-01-02T03:04:05Z"


@given(st.integers(0, 4_000_000_000))
def test_round_trip(seconds: int) -> None:
    assert parse_rfc3339(format_rfc3339(seconds)) == seconds
    assert format_rfc3339(datetime.fromtimestamp(seconds, UTC)) == format_rfc3339(seconds)


def test_docstring_examples() -> None:
    result = doctest.testmod(ktime)
    assert result.attempted > 0 and result.failed == 0
