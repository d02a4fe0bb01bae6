"""The error tree: stdlib mixins, messages that name fields, no secrets."""

from __future__ import annotations

import pytest

from rayqueue_sdk import errors


@pytest.mark.parametrize(
    ("cls", "std"),
    [
        (errors.ConfigError, ValueError),
        (errors.ForbiddenError, PermissionError),
        (errors.NotFoundError, LookupError),
        (errors.QueueNotFoundError, LookupError),
        (errors.AdmissionTimeout, TimeoutError),
        (errors.ConnectionFailedError, ConnectionError),
        (errors.TLSVerificationError, ConnectionError),
    ],
)
def test_leaves_inherit_the_stdlib_exception_a_caller_expects(cls: type, std: type) -> None:
    assert issubclass(cls, std)
    assert issubclass(cls, errors.RayQueueError)


def test_every_public_error_is_in_the_tree() -> None:
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.RayQueueError), name


def test_config_error_names_field_value_and_allowed() -> None:
    err = errors.ConfigError("worker_cpu_requests", -2, "a positive CPU quantity", problem="negative")
    text = str(err)
    assert "worker_cpu_requests" in text and "-2" in text and "a positive CPU quantity" in text
    assert err.field == "worker_cpu_requests"


def test_queue_not_found_lists_available_queues_sorted() -> None:
    err = errors.QueueNotFoundError("nope", ["b-queue", "a-queue"], namespace="team")
    assert err.available == ["a-queue", "b-queue"]
    assert "a-queue, b-queue" in str(err) and "'team'" in str(err)
    assert str(errors.QueueNotFoundError("nope", [])).endswith("available: none")


def test_admission_timeout_carries_reason_and_position() -> None:
    err = errors.AdmissionTimeout("ws", 3, phase="queued", reason="insufficient unused quota", position=2)
    assert "position 2" in str(err) and "insufficient unused quota" in str(err)
    assert (err.phase, err.position) == ("queued", 2)


def test_long_values_are_shortened_in_messages() -> None:
    err = errors.ConfigError("name", "x" * 500, "at most 53 characters")
    assert len(str(err)) < 200
