"""The error tree: stdlib mixins, messages that name fields, no secrets."""

from __future__ import annotations

import pytest

from rayqueue_sdk import errors
from rayqueue_sdk.cli.exit_codes import code_for, exit_code


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
        (errors.OutcomeUnknownError, ConnectionError),
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
    # the message ends with the list, then (appended for every error) its troubleshooting entry
    assert str(errors.QueueNotFoundError("nope", [])).endswith(
        "available: none (see docs/troubleshooting.md#queuenotfounderror)"
    )


def test_admission_timeout_carries_reason_and_position() -> None:
    err = errors.AdmissionTimeout("ws", 3, phase="queued", reason="insufficient unused quota", position=2)
    assert "position 2" in str(err) and "insufficient unused quota" in str(err)
    assert (err.phase, err.position) == ("queued", 2)


def test_long_values_are_shortened_in_messages() -> None:
    err = errors.ConfigError("name", "x" * 500, "at most 53 characters")
    assert len(str(err)) < 200


def _all_sdk_modules() -> list[str]:
    import pkgutil

    import rayqueue_sdk

    return sorted(m.name for m in pkgutil.walk_packages(rayqueue_sdk.__path__, "rayqueue_sdk."))


def test_every_exception_class_defined_in_the_sdk_is_a_rayqueue_error() -> None:
    """Walk every module of the package: each exception class defined there (warnings aside) is in
    the tree, and is defined in rayqueue_sdk.errors, the tree's one home."""
    import importlib
    import inspect

    modules = _all_sdk_modules()
    assert "rayqueue_sdk.job.rayjob" in modules and "rayqueue_sdk.cluster.dashboard" in modules
    found: dict[str, type] = {}
    for name in modules:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and not issubclass(value, Warning)
                and value.__module__.startswith("rayqueue_sdk")
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    assert "rayqueue_sdk.errors.DashboardNotFoundError" in found
    outside = {name for name, cls in found.items() if not issubclass(cls, errors.RayQueueError)}
    assert not outside, f"exceptions outside the RayQueueError tree: {sorted(outside)}"
    elsewhere = {name for name in found if not name.startswith("rayqueue_sdk.errors.")}
    assert not elsewhere, f"errors defined outside rayqueue_sdk.errors: {sorted(elsewhere)}"


def test_dashboard_not_found_is_a_not_found_error_still_importable_where_it_was() -> None:
    import rayqueue_sdk
    from rayqueue_sdk.cluster import dashboard

    assert dashboard.DashboardNotFoundError is errors.DashboardNotFoundError
    assert rayqueue_sdk.DashboardNotFoundError is errors.DashboardNotFoundError
    assert issubclass(errors.DashboardNotFoundError, errors.NotFoundError)
    assert exit_code(errors.DashboardNotFoundError("ws", "ds", "queued")) == 3


def test_every_error_class_has_a_stable_cli_exit_code() -> None:
    public = [getattr(errors, name) for name in errors.__all__ if isinstance(getattr(errors, name), type)]
    assert {cls.__name__: code_for(cls) for cls in public} == {
        "AdmissionCheckRejected": 5,
        "RayQueueError": 1,
        "ConfigError": 2,
        "ApiError": 1,
        "AuthenticationError": 6,
        "ForbiddenError": 6,
        "NotFoundError": 3,
        "QueueNotFoundError": 3,
        "PriorityClassNotFoundError": 3,
        "ClusterNotFoundError": 3,
        "DashboardNotFoundError": 3,
        "AlreadyExistsError": 1,
        "ConflictError": 1,
        "ConnectionFailedError": 7,
        "TLSVerificationError": 7,
        "OutcomeUnknownError": 7,
        "AdmissionTimeout": 4,
        "ClusterDeletedError": 5,
        "ClusterFailedError": 5,
        "PreemptedError": 5,
        "JobFailedError": 8,
        "ScaledToZeroError": 5,
        "UnsupportedError": 1,
    }
