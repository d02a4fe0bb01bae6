"""The catalogue's SDK cases: a typed error naming field, value and what is allowed; nothing sent or made.

Every case runs with the SDK's current client on the catalogue's plane (as the admin, so that only the
SDK's own validation or the server's contents can refuse it), and ends with the namespace and the
sentinel unchanged (``assert_state_unchanged``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from reliability_catalogue import NAME_CASES, SDK_CALL_CASES, SDK_CASES

from rayqueue_sdk import ClusterConfiguration, ConfigError, ManagedClusterConfig, RayJob

pytestmark = pytest.mark.usefixtures("sdk_client", "assert_state_unchanged")


@pytest.mark.parametrize(
    ("action", "field", "value"), [c[1:] for c in SDK_CASES], ids=[c[0] for c in SDK_CASES]
)
def test_bad_input_raises_config_error_naming_field_value_and_allowed(
    action: Callable[[], Any], field: str, value: str
) -> None:
    with pytest.raises(ConfigError) as info:
        action()
    err = info.value
    message = str(err)
    assert isinstance(err, ValueError)
    assert field in err.field, (field, err.field)
    assert message.startswith(err.field)
    assert value in message, (value, message)
    assert "; allowed: " in message and err.allowed.strip()


@pytest.mark.parametrize(
    ("action", "error", "names"), [c[1:] for c in SDK_CALL_CASES], ids=[c[0] for c in SDK_CALL_CASES]
)
def test_call_refused_by_the_server_raises_the_typed_error_and_makes_nothing(
    action: Callable[[], Any], error: type[Exception], names: str
) -> None:
    with pytest.raises(error) as info:
        action()
    assert names in str(info.value)


@pytest.mark.parametrize(
    ("name", "field", "build"), [c[1:] for c in NAME_CASES], ids=[c[0] for c in NAME_CASES]
)
def test_bad_name_is_refused_wherever_a_name_goes(name: Any, field: str, build: Callable[[Any], Any]) -> None:
    with pytest.raises(ConfigError) as info:
        build(name)
    assert info.value.field == field, (info.value.field, field)
    assert repr(name)[:20] in str(info.value) and "; allowed: " in str(info.value)


def test_missing_requirements_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    job_ = RayJob(
        job_name="j",
        entrypoint="python x.py",
        cluster_config=ManagedClusterConfig(),
        runtime_env={"pip": "./path/to/requirements.txt"},
    )  # the constructor does no I/O: the file is read when rendering
    with pytest.raises(ConfigError) as info:
        job_.to_dict()
    assert info.value.field == "runtime_env['pip']"
    assert "./path/to/requirements.txt" in str(info.value)
    assert "not found" in str(info.value)


def test_no_pydantic_error_escapes_model_validate() -> None:
    with pytest.raises(ConfigError) as info:
        ClusterConfiguration.model_validate({"name": "c", "worker_groups": [{"name": "a", "replicas": "x"}]})
    assert info.value.field == "worker_groups[0].replicas"


def test_no_pydantic_error_escapes_model_validate_json() -> None:
    with pytest.raises(ConfigError) as info:
        ClusterConfiguration.model_validate_json('{"name": "c", "num_workers": -2}')
    assert info.value.field == "num_workers"


def test_several_problems_are_reported_as_a_note() -> None:
    with pytest.raises(ConfigError) as info:
        ClusterConfiguration(name="c", head_cpu_requests="x", worker_memory_requests="y")
    assert info.value.field == "head_cpu_requests"
    assert any("worker_memory_requests" in note for note in info.value.__notes__)
