"""Field types of the configuration models: each ``Annotated`` type checks one value or raises ConfigError.

CPU and memory quantities, extended-resource counts, tolerations, string maps, environment variables,
volume lists and Secret names are checked by plain validators (``kubernetes`` client objects such as
``V1Toleration`` are turned into plain dicts first, ``_plain``). ``resolve_limits`` fills an unset
limit with ``max(default, request)`` and rejects a limit below its request. The error conversion of
:mod:`rayqueue_sdk.config.errors` puts each error at its place in the model (``worker_groups[0].envs``).

Example:
    >>> from rayqueue_sdk.config.models import WorkerGroup
    >>> WorkerGroup(name="g", envs={"N": 1}).envs
    {'N': '1'}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field, PlainValidator

from rayqueue_sdk.config.errors import StrictModel
from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.manifests.quantities import (
    compare_quantities,
    count_quantity,
    cpu_quantity,
    memory_quantity,
)
from rayqueue_sdk.manifests.rules import check_dns_label

__all__ = [
    "COUNT_ALLOWED",
    "INT32_MAX",
    "NODE_SELECTOR_ALLOWED",
    "TOLERATIONS_ALLOWED",
    "Counts",
    "Cpu",
    "DictList",
    "Envs",
    "Image",
    "Memory",
    "Names",
    "OptCpu",
    "OptImage",
    "OptMemory",
    "OptName",
    "Replicas",
    "Seconds",
    "StrMap",
    "Tolerations",
    "resolve_limits",
]

_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*\Z")
_TOLERATION_KEYS = {"key", "operator", "value", "effect", "tolerationSeconds"}
#: What a count field (replicas, accelerators) allows, in words, for its errors.
COUNT_ALLOWED = "a whole number >= 0 (int or an integral quantity string)"
#: What a tolerations field allows, in words: its description (the fallback "allowed" of its errors).
TOLERATIONS_ALLOWED = "a list of Kubernetes toleration dicts"
#: What a node selector field allows, in words: its description (the fallback "allowed" of its errors).
NODE_SELECTOR_ALLOWED = "a dict of node label -> value"


def _check_cpu(value: Any, info: Any) -> Any:
    cpu_quantity(value, info.field_name)
    return value


def _check_cpu_opt(value: Any, info: Any) -> Any:
    return None if value is None else _check_cpu(value, info)


def _check_memory(value: Any, info: Any) -> Any:
    memory_quantity(value, info.field_name)
    return value


def _check_memory_opt(value: Any, info: Any) -> Any:
    return None if value is None else _check_memory(value, info)


def _plain_mapping(value: Any, info: Any, allowed: str) -> Mapping[Any, Any]:
    """``value`` as a plain mapping (client objects turned into dicts), or ConfigError."""
    value = _plain(value)
    if not isinstance(value, Mapping):
        raise ConfigError(info.field_name, value, allowed, problem="not a dict")
    return value


def _check_counts(value: Any, info: Any) -> dict[str, int | str]:
    value = _plain_mapping(value, info, "a dict such as {'nvidia.com/gpu': 1}")
    return {
        key: count_quantity(count, f"{info.field_name}[{key!r}]", COUNT_ALLOWED)
        for key, count in value.items()
    }


def _check_tolerations(value: Any, info: Any) -> list[dict[str, Any]] | None:
    if value is None:
        return None
    value = _plain(value)
    allowed = (
        "a list of toleration dicts with keys key, operator (Exists|Equal), value, effect, tolerationSeconds"
    )
    if not isinstance(value, list):
        raise ConfigError(info.field_name, value, allowed, problem="not a list")
    for i, tol in enumerate(value):
        where = f"{info.field_name}[{i}]"
        if not isinstance(tol, dict) or set(tol) - _TOLERATION_KEYS:
            raise ConfigError(where, tol, allowed, problem="not a toleration")
        if tol.get("operator", "Equal") not in ("Exists", "Equal"):
            raise ConfigError(f"{where}.operator", tol["operator"], "'Exists' or 'Equal'")
        if tol.get("effect", "") not in ("", "NoSchedule", "PreferNoSchedule", "NoExecute"):
            raise ConfigError(
                f"{where}.effect", tol["effect"], "'NoSchedule', 'PreferNoSchedule' or 'NoExecute'"
            )
    return list(value)


def _check_str_map(value: Any, info: Any) -> dict[str, str]:
    allowed = "a dict of strings to strings"
    value = _plain_mapping(value, info, allowed)
    for key, val in value.items():
        if not isinstance(key, str):
            raise ConfigError(info.field_name, key, allowed, problem="keys are strings")
        if not isinstance(val, str):
            raise ConfigError(f"{info.field_name}[{key!r}]", val, allowed, problem="values are strings")
    return dict(value)


def _check_envs(value: Any, info: Any) -> dict[str, str]:
    allowed = "a dict of variable names to string (or number) values"
    value = _plain_mapping(value, info, allowed)
    out: dict[str, str] = {}
    for key, val in value.items():
        if not isinstance(key, str) or not _ENV_NAME.match(key):
            raise ConfigError(
                info.field_name, key, "names of letters, digits, '_', '-', '.'", problem="bad name"
            )
        if isinstance(val, bool) or not isinstance(val, (str, int, float)):
            raise ConfigError(f"{info.field_name}[{key!r}]", val, allowed, problem="not a string")
        out[key] = str(val)
    return out


def _check_dict_list(value: Any, info: Any) -> list[dict[str, Any]]:
    value = _plain(value)
    required = {"volumes": ("name",), "volume_mounts": ("name", "mountPath")}.get(info.field_name, ())
    allowed = f"a list of dicts in Kubernetes form, each with {', '.join(required) or 'its fields'}"
    if not isinstance(value, list):
        raise ConfigError(info.field_name, value, allowed, problem="not a list")
    for i, item in enumerate(value):
        if not isinstance(item, dict) or any(not isinstance(item.get(k), str) for k in required):
            raise ConfigError(f"{info.field_name}[{i}]", item, allowed, problem="missing or bad keys")
    return list(value)


def _check_names(value: Any, info: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(info.field_name, value, "a list of Secret names", problem="not a list of names")
    for v in value:
        check_dns_label(v, info.field_name, "Secret name")
    return list(value)


_IMAGE_ALLOWED = "a container image reference such as 'rayproject/ray:2.40.0' (no spaces, no controls)"


def _check_image(value: Any, info: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(info.field_name, value, _IMAGE_ALLOWED, problem="not an image name")
    if any(ch.isspace() or not ch.isprintable() for ch in value) or len(value) > 4096:
        raise ConfigError(info.field_name, value, _IMAGE_ALLOWED, problem="not an image reference")
    return value


def _check_image_opt(value: Any, info: Any) -> str | None:
    return None if value is None else _check_image(value, info)


def _check_optional_name(value: Any, info: Any) -> str | None:
    if value is None:
        return None
    check_dns_label(value, info.field_name)
    return str(value)


#: The field types, one per kind of value (``Opt...``: ``None`` allowed, meaning the default).
Cpu = Annotated[int | float | str, PlainValidator(_check_cpu)]
OptCpu = Annotated[int | float | str | None, PlainValidator(_check_cpu_opt)]
Memory = Annotated[int | float | str, PlainValidator(_check_memory)]
OptMemory = Annotated[int | float | str | None, PlainValidator(_check_memory_opt)]
#: The largest value of a Kubernetes int32 field (a RayCluster's replicas, minReplicas, maxReplicas).
INT32_MAX = 2**31 - 1
#: A replica count: a real ``int`` (a bool, a float or NaN is refused, not coerced) in ``[0, INT32_MAX]``.
Replicas = Annotated[int, Field(strict=True, ge=0, le=INT32_MAX)]
#: A duration in whole seconds for an int32 field (a RayJob's ttlSecondsAfterFinished,
#: activeDeadlineSeconds): a real ``int`` in ``[0, INT32_MAX]``, no bool, float or NaN.
Seconds = Annotated[int, Field(strict=True, ge=0, le=INT32_MAX)]
Counts = Annotated[dict[str, int | str], PlainValidator(_check_counts)]
Tolerations = Annotated[list[Any] | None, PlainValidator(_check_tolerations)]  # dicts or V1Toleration
StrMap = Annotated[dict[str, str], PlainValidator(_check_str_map)]
Envs = Annotated[dict[str, Any], PlainValidator(_check_envs)]  # values: str (numbers are converted)
DictList = Annotated[list[Any], PlainValidator(_check_dict_list)]  # dicts or kubernetes client objects
Names = Annotated[list[str], PlainValidator(_check_names)]
#: A container image reference: non-empty, printable, no whitespace (the registry checks the rest).
Image = Annotated[str, PlainValidator(_check_image)]
OptImage = Annotated[str | None, PlainValidator(_check_image_opt)]
OptName = Annotated[str | None, PlainValidator(_check_optional_name)]


def _plain(value: Any) -> Any:
    """Turn ``kubernetes`` client model objects (V1Toleration, V1Volume, ...) into plain API dicts."""
    attribute_map = getattr(value, "attribute_map", None)
    if isinstance(attribute_map, dict) and hasattr(value, "openapi_types"):
        return {
            attribute_map[attr]: _plain(getattr(value, attr))
            for attr in value.openapi_types
            if getattr(value, attr, None) is not None
        }
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def resolve_limits(
    model: StrictModel, req_name: str, lim_name: str, default: Any, *, compare_cpu: bool = False
) -> None:
    """Derive an unset limit (``max(default, request)``) on ``model``, or refuse a limit below its request.

    Example:
        >>> from rayqueue_sdk.config.models import WorkerGroup
        >>> WorkerGroup(name="g", memory_requests="8Gi").memory_limits   # derived by resolve_limits
        '8Gi'
        >>> WorkerGroup(name="g", memory_requests="8Gi", memory_limits="4Gi")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: memory_limits: limit below the request '8Gi' ...
    """
    request = getattr(model, req_name)
    limit = getattr(model, lim_name)
    norm = cpu_quantity if compare_cpu else memory_quantity
    if limit is None:
        bigger = compare_quantities(norm(request, req_name), norm(default, lim_name)) > 0
        model._derive(lim_name, request if bigger else default)
        return
    if compare_quantities(norm(limit, lim_name), norm(request, req_name)) < 0:
        raise ConfigError(
            lim_name,
            limit,
            f"a value >= {req_name}={request!r} (or leave it unset: it defaults to max(default, request))",
            problem=f"limit below the request {request!r}",
        )
