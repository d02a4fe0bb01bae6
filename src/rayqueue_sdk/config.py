"""Configuration models: :class:`ClusterConfiguration`, :class:`ManagedClusterConfig`, :class:`WorkerGroup`.

The models accept the peer SDK's spelling and meaning (``worker_cpu_requests=2``, ``worker_memory_requests=8``
meaning 8 GB, ``worker_extended_resource_requests={"nvidia.com/gpu": 1}``, ...) and add what the peer lacks:
``priority_class`` for interactive clusters and several worker groups. Every check runs in the constructor,
which does no I/O; a bad value raises :class:`~rayqueue_sdk.errors.ConfigError` (a ``ValueError``) naming
the field, the value and what is allowed. No pydantic ``ValidationError`` escapes.

Limits: a limit left unset is ``max(default limit, request)``, so ``worker_cpu_requests=4`` alone is valid;
an explicit limit below its request is an error.

Accelerators: extended resources map to Ray resources through :data:`DEFAULT_ACCELERATORS` (GPU kinds are
summed into ``num-gpus``; the others go into ``resources``). ``extended_resource_mapping`` adds entries;
changing a default entry needs ``overwrite_default_resource_mapping=True``.

Example:
    >>> cfg = ClusterConfiguration(name="my-workspace-cluster", num_workers=2, worker_cpu_requests=2,
    ...     worker_memory_requests=8, worker_extended_resource_requests={"nvidia.com/gpu": 1},
    ...     local_queue="ds-workspace-queue", labels={"kueue.x-k8s.io/priority-class": "rd-priority"})
    >>> cfg.priority_class, cfg.worker_cpu_limits
    ('rd-priority', 2)
"""

from __future__ import annotations

import difflib
import functools
import re
import sys
import types
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    PrivateAttr,
    ValidationError,
    model_validator,
)
from pydantic_core import ErrorDetails

from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.manifests.rules import (
    ELASTIC_JOB_ANNOTATION,
    MAX_WORKER_GROUPS_RAYCLUSTER,
    PRIORITY_LABEL,
    QUEUE_LABEL,
    check_annotations,
    check_autoscaling,
    check_dns_label,
    check_labels,
    check_raycluster_name,
    check_replicas,
    check_worker_groups,
    resolve_queue_and_priority,
)
from rayqueue_sdk.quantities import (
    CPU_ALLOWED,
    MEMORY_ALLOWED,
    compare_quantities,
    count_quantity,
    cpu_quantity,
    memory_quantity,
)

__all__ = [
    "DEFAULT_ACCELERATORS",
    "ClusterConfiguration",
    "ManagedClusterConfig",
    "WorkerGroup",
    "accelerator_mapping",
    "default_image",
]

DEFAULT_ACCELERATORS: Mapping[str, str] = types.MappingProxyType(
    {
        "nvidia.com/gpu": "GPU",
        "intel.com/gpu": "GPU",
        "amd.com/gpu": "GPU",
        "aws.amazon.com/neuroncore": "neuron_cores",
        "google.com/tpu": "TPU",
        "habana.ai/gaudi": "HPU",
        "huawei.com/Ascend910": "NPU",
        "huawei.com/Ascend310": "NPU",
    }
)
"""Extended resource -> Ray resource. ``GPU`` entries feed ``num-gpus``; the others feed ``resources``."""

_RESERVED_RAY_RESOURCES = {"CPU", "memory", "object_store_memory"}
_EXTENDED_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
_TOLERATION_KEYS = {"key", "operator", "value", "effect", "tolerationSeconds"}
_COUNT_ALLOWED = "a whole number >= 0 (int or an integral quantity string)"
_HINTS = {
    "write_to_file": "use Cluster(config).to_yaml() to write the manifest yourself",
    "enable_gcs_ft": "GCS fault tolerance is not supported yet",
    "accelerator_configs": "use extended_resource_mapping",
}


@functools.lru_cache(maxsize=1)
def default_image() -> str:
    """The upstream Ray image for the local Ray and Python versions, e.g. ``rayproject/ray:2.60.0-py311``.

    Reads the installed ``ray`` distribution's version from its metadata (Ray is not imported). Without Ray
    installed it falls back to ``rayproject/ray:latest-py3XX``.

    Example:
        >>> default_image().startswith("rayproject/ray:")
        True
    """
    py = f"py{sys.version_info.major}{sys.version_info.minor}"
    version = ray_version()
    return f"rayproject/ray:{version or 'latest'}-{py}"


@functools.lru_cache(maxsize=1)
def ray_version() -> str | None:
    """The installed Ray version (from package metadata, without importing Ray), or ``None``.

    Example:
        >>> isinstance(ray_version(), (str, type(None)))
        True
    """
    import importlib.metadata  # only when a default image is first needed

    try:
        return importlib.metadata.version("ray")
    except importlib.metadata.PackageNotFoundError:
        return None


def accelerator_mapping(extra: Mapping[str, str] | None = None, *, overwrite: bool = False) -> dict[str, str]:
    """The extended-resource -> Ray-resource mapping: the defaults plus ``extra``.

    Changing a default entry needs ``overwrite=True``. Ray's own ``CPU`` and ``memory`` cannot be targets.

    Example:
        >>> accelerator_mapping({"example.com/fpga": "FPGA"})["example.com/fpga"]
        'FPGA'
        >>> accelerator_mapping({"nvidia.com/gpu": "A100"})
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: extended_resource_mapping['nvidia.com/gpu']: overrides a default ...
    """
    mapping = dict(DEFAULT_ACCELERATORS)
    for key, target in (extra or {}).items():
        where = f"extended_resource_mapping[{key!r}]"
        if not isinstance(key, str) or not _EXTENDED_NAME.match(key):
            raise ConfigError(
                "extended_resource_mapping",
                key,
                "an extended resource name 'domain/name', e.g. 'example.com/fpga'",
                problem="not an extended resource name",
            )
        if not isinstance(target, str) or not target or target in _RESERVED_RAY_RESOURCES:
            raise ConfigError(
                where, target, "a Ray resource name other than CPU, memory and object_store_memory"
            )
        if key in DEFAULT_ACCELERATORS and DEFAULT_ACCELERATORS[key] != target and not overwrite:
            raise ConfigError(
                where,
                target,
                f"{DEFAULT_ACCELERATORS[key]!r}, or set overwrite_default_resource_mapping=True",
                problem=f"overrides a default mapping ({key} -> {DEFAULT_ACCELERATORS[key]})",
            )
        mapping[key] = target
    return mapping


# ---------------------------------------------------------------------------------------------------
# field types


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


def _check_counts(value: Any, info: Any) -> dict[str, int | str]:
    value = _plain(value)
    if not isinstance(value, Mapping):
        raise ConfigError(
            info.field_name, value, "a dict such as {'nvidia.com/gpu': 1}", problem="not a dict"
        )
    return {
        key: count_quantity(count, f"{info.field_name}[{key!r}]", _COUNT_ALLOWED)
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
    value = _plain(value)
    allowed = "a dict of strings to strings"
    if not isinstance(value, Mapping):
        raise ConfigError(info.field_name, value, allowed, problem="not a dict")
    for key, val in value.items():
        if not isinstance(key, str):
            raise ConfigError(info.field_name, key, allowed, problem="keys are strings")
        if not isinstance(val, str):
            raise ConfigError(f"{info.field_name}[{key!r}]", val, allowed, problem="values are strings")
    return dict(value)


def _check_envs(value: Any, info: Any) -> dict[str, str]:
    value = _plain(value)
    allowed = "a dict of variable names to string (or number) values"
    if not isinstance(value, Mapping):
        raise ConfigError(info.field_name, value, allowed, problem="not a dict")
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


def _check_optional_name(value: Any, info: Any) -> str | None:
    if value is not None:
        check_dns_label(value, info.field_name)
    return value


Cpu = Annotated[int | float | str, PlainValidator(_check_cpu)]
OptCpu = Annotated[int | float | str | None, PlainValidator(_check_cpu_opt)]
Memory = Annotated[int | float | str, PlainValidator(_check_memory)]
OptMemory = Annotated[int | float | str | None, PlainValidator(_check_memory_opt)]
Counts = Annotated[dict[str, int | str], PlainValidator(_check_counts)]
Tolerations = Annotated[list[Any] | None, PlainValidator(_check_tolerations)]  # dicts or V1Toleration
StrMap = Annotated[dict[str, str], PlainValidator(_check_str_map)]
Envs = Annotated[dict[str, Any], PlainValidator(_check_envs)]  # values: str (numbers are converted)
DictList = Annotated[list[Any], PlainValidator(_check_dict_list)]  # dicts or kubernetes client objects
Names = Annotated[list[str], PlainValidator(_check_names)]
OptName = Annotated[str | None, PlainValidator(_check_optional_name)]


# ---------------------------------------------------------------------------------------------------
# the base model: pydantic errors become ConfigError


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=False, arbitrary_types_allowed=False)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as err:
            raise _config_error(err, type(self)) from None

    def __setattr__(self, name: str, value: Any) -> None:
        """Assigning a field re-validates the whole model (derived limits and groups follow the change).

        On a :class:`ConfigError` the model is left as it was.
        """
        if name not in type(self).model_fields:
            super().__setattr__(name, value)
            return
        data = {key: getattr(self, key) for key in self.model_fields_set}
        data[name] = value
        fresh = type(self)(**data)
        object.__setattr__(self, "__dict__", fresh.__dict__)
        object.__setattr__(self, "__pydantic_fields_set__", fresh.__pydantic_fields_set__)
        object.__setattr__(self, "__pydantic_private__", fresh.__pydantic_private__)

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> Any:
        """Validate ``obj`` (a dict) into the model; errors are :class:`ConfigError`."""
        try:
            return super().model_validate(obj, **kwargs)
        except ValidationError as err:
            raise _config_error(err, cls) from None

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, **kwargs: Any) -> Any:
        """Validate a JSON document into the model; errors are :class:`ConfigError`."""
        try:
            return super().model_validate_json(json_data, **kwargs)
        except ValidationError as err:
            raise _config_error(err, cls) from None


def _config_error(err: ValidationError, model: type[BaseModel]) -> ConfigError:
    details = err.errors()
    first = details[0]
    result = _one_error(first, model)
    if len(details) > 1:
        others = "; ".join(str(_one_error(d, model)) for d in details[1:4])
        result.add_note(f"{len(details) - 1} more problem(s): {others}")
    return result


def _one_error(detail: ErrorDetails, model: type[BaseModel]) -> ConfigError:
    loc = detail["loc"]
    path = _dotted(loc)
    cause = (detail.get("ctx") or {}).get("error")
    if isinstance(cause, ConfigError):
        head = re.split(r"[.\[]", cause.field, maxsplit=1)[0]
        prefix = _dotted(loc[:-1]) if loc and str(loc[-1]) == head else path
        field = (
            cause.field
            if not prefix
            else f"{prefix}{'' if cause.field.startswith('[') else '.'}{cause.field}"
        )
        return ConfigError(field, cause.value, cause.allowed, problem=cause.problem)
    if detail["type"] == "extra_forbidden":
        name = str(loc[-1]) if loc else "?"
        owner = _model_at(model, loc[:-1])
        known = sorted(owner.model_fields)
        hint = _HINTS.get(name)
        close = difflib.get_close_matches(name, known, n=1)
        problem = (
            "unknown field"
            + (f" (did you mean {close[0]!r}?)" if close else "")
            + (f"; {hint}" if hint else "")
        )
        return ConfigError(path or name, detail.get("input"), "one of: " + ", ".join(known), problem=problem)
    if detail["type"] == "missing":
        return ConfigError(path, None, _allowed(model, loc), problem="required field missing")
    return ConfigError(
        path or model.__name__, detail.get("input"), _allowed(model, loc), problem=detail["msg"]
    )


def _dotted(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _model_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> type[BaseModel]:
    current = model
    for part in loc:
        if isinstance(part, str) and part in current.model_fields:
            inner = _inner_model(current.model_fields[part].annotation)
            if inner is not None:
                current = inner
    return current


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _allowed(model: type[BaseModel], loc: tuple[int | str, ...]) -> str:
    names = [p for p in loc if isinstance(p, str)]
    if not names:
        return "see the class docstring"
    owner = _model_at(model, tuple(loc[:-1]) if loc and isinstance(loc[-1], str) else tuple(loc))
    field = owner.model_fields.get(names[-1])
    return (field.description if field and field.description else None) or "see the class docstring"


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


# ---------------------------------------------------------------------------------------------------
# models


class WorkerGroup(_Model):
    """One group of identical Ray workers (a ``workerGroupSpecs`` entry).

    Give ``ClusterConfiguration(worker_groups=[...])`` several groups for heterogeneous workers (e.g. GPU
    and CPU-only). Unset limits default to ``max(default, request)``; memory numbers mean GB.

    Example:
        >>> gpu = WorkerGroup(name="gpu", replicas=2, cpu_requests=4, memory_requests=16,
        ...                   extended_resource_requests={"nvidia.com/gpu": 1})
        >>> gpu.cpu_limits, gpu.memory_limits, (gpu.min_replicas, gpu.max_replicas)
        (4, 16, (2, 2))
    """

    _LIMIT_DEFAULTS: ClassVar[dict[str, Any]] = {"cpu_limits": 1, "memory_limits": 6}

    name: str = Field(description="a DNS label (lower-case, <= 63 chars), not 'head', unique in the cluster")
    replicas: int = Field(default=1, ge=0, description="an integer >= 0 within [min_replicas, max_replicas]")
    min_replicas: int | None = Field(default=None, ge=0, description="an integer >= 0 (default: replicas)")
    max_replicas: int | None = Field(
        default=None, ge=0, description="an integer >= min_replicas (default: replicas)"
    )
    cpu_requests: Cpu = Field(default=1, description=CPU_ALLOWED)
    cpu_limits: OptCpu = Field(default=None, description=CPU_ALLOWED + "; >= cpu_requests")
    memory_requests: Memory = Field(default=3, description=MEMORY_ALLOWED)
    memory_limits: OptMemory = Field(default=None, description=MEMORY_ALLOWED + "; >= memory_requests")
    extended_resource_requests: Counts = Field(default_factory=dict, description=_COUNT_ALLOWED)
    tolerations: Tolerations = Field(default=None, description="a list of Kubernetes toleration dicts")
    node_selector: StrMap = Field(default_factory=dict, description="a dict of node label -> value")
    labels: StrMap = Field(default_factory=dict, description="pod labels: a dict of str -> str")
    annotations: StrMap = Field(default_factory=dict, description="pod annotations: a dict of str -> str")
    envs: Envs = Field(default_factory=dict, description="extra environment variables for this group")
    image: str | None = Field(default=None, description="a container image (default: the cluster's image)")
    ray_start_params: StrMap = Field(
        default_factory=dict, description="extra `ray start` parameters (str -> str)"
    )

    @model_validator(mode="after")
    def _resolve(self) -> WorkerGroup:
        check_dns_label(self.name, "name", "worker group name")
        _resolve_limits(
            self, "cpu_requests", "cpu_limits", self._LIMIT_DEFAULTS["cpu_limits"], compare_cpu=True
        )
        _resolve_limits(self, "memory_requests", "memory_limits", self._LIMIT_DEFAULTS["memory_limits"])
        if self.min_replicas is None:
            low = min(self.replicas, self.max_replicas if self.max_replicas is not None else self.replicas)
            object.__setattr__(self, "min_replicas", low)
        if self.max_replicas is None:
            object.__setattr__(self, "max_replicas", max(self.replicas, self.min_replicas or 0))
        check_replicas(self.replicas, self.min_replicas, self.max_replicas, "")
        check_labels(self.labels, "labels")
        check_annotations(self.annotations, "annotations")
        return self


class _ClusterShape(_Model):
    """Fields shared by ClusterConfiguration and ManagedClusterConfig (head, flat workers, pods, image)."""

    _LIMIT_DEFAULTS: ClassVar[dict[str, Any]] = {}
    _FLAT_WORKER_FIELDS: ClassVar[frozenset[str]] = frozenset()
    _DEFAULT_GROUP = "worker-group"

    num_workers: int = Field(default=1, ge=0, description="an integer >= 0: workers in the default group")
    head_cpu_requests: Cpu = Field(default=1, description=CPU_ALLOWED)
    head_cpu_limits: OptCpu = Field(default=None, description=CPU_ALLOWED + "; >= head_cpu_requests")
    head_memory_requests: Memory = Field(default=5, description=MEMORY_ALLOWED)
    head_memory_limits: OptMemory = Field(
        default=None, description=MEMORY_ALLOWED + "; >= head_memory_requests"
    )
    worker_cpu_requests: Cpu = Field(default=1, description=CPU_ALLOWED)
    worker_cpu_limits: OptCpu = Field(default=None, description=CPU_ALLOWED + "; >= worker_cpu_requests")
    worker_memory_requests: Memory = Field(default=3, description=MEMORY_ALLOWED)
    worker_memory_limits: OptMemory = Field(
        default=None, description=MEMORY_ALLOWED + "; >= worker_memory_requests"
    )
    worker_groups: list[WorkerGroup] | None = Field(
        default=None, description="a list of WorkerGroup (instead of the flat worker_* fields)"
    )
    image: str = Field(default_factory=default_image, description="a container image with Ray installed")
    image_pull_secrets: Names = Field(default_factory=list, description="a list of Secret names")
    envs: Envs = Field(default_factory=dict, description="a dict of environment variables")
    annotations: StrMap = Field(default_factory=dict, description="a dict of str -> str annotations")
    head_tolerations: Tolerations = Field(default=None, description="a list of Kubernetes toleration dicts")
    worker_tolerations: Tolerations = Field(default=None, description="a list of Kubernetes toleration dicts")
    head_node_selector: StrMap = Field(default_factory=dict, description="a dict of node label -> value")
    worker_node_selector: StrMap = Field(default_factory=dict, description="a dict of node label -> value")
    volumes: DictList = Field(default_factory=list, description="Kubernetes volume dicts, each with a name")
    volume_mounts: DictList = Field(
        default_factory=list, description="Kubernetes volumeMount dicts (name, mountPath) naming a volume"
    )
    extended_resource_mapping: StrMap = Field(
        default_factory=dict,
        description="a dict of extended resource -> Ray resource, e.g. {'x.com/fpga': 'FPGA'}",
    )
    overwrite_default_resource_mapping: bool = Field(default=False, description="True or False")

    _groups: list[WorkerGroup] = PrivateAttr(default_factory=list)
    _mapping: dict[str, str] = PrivateAttr(default_factory=dict)

    # subclasses name their extended-resource fields differently (peer spelling)
    def head_extended_resources(self) -> dict[str, int | str]:
        """The head's extended resource requests (GPUs, TPUs, ...).

        Example:
            >>> ClusterConfiguration(name="c").head_extended_resources()
            {}
        """
        raise NotImplementedError

    def _worker_extended(self) -> dict[str, int | str]:
        raise NotImplementedError

    def _worker_extended_field(self) -> str:
        raise NotImplementedError

    def _head_extended_field(self) -> str:
        raise NotImplementedError

    def pod_labels(self) -> dict[str, str]:
        """Labels for the head and worker pod templates (the cluster's own labels go on its metadata).

        Example:
            >>> ClusterConfiguration(name="c", labels={"team": "a"}).pod_labels()
            {}
        """
        return {}

    def pod_annotations(self) -> dict[str, str]:
        """Annotations for the pod templates: ``annotations`` without Kueue's keys (those stay on the object).

        Example:
            >>> ClusterConfiguration(name="c", elastic=True, annotations={"a": "1"}).pod_annotations()
            {'a': '1'}
        """
        return {k: v for k, v in self.annotations.items() if not k.startswith("kueue.x-k8s.io/")}

    @property
    def resource_mapping(self) -> dict[str, str]:
        """The extended-resource -> Ray-resource mapping in force for this configuration.

        Example:
            >>> ClusterConfiguration(name="c").resource_mapping["google.com/tpu"]
            'TPU'
        """
        return self._mapping

    def resolved_worker_groups(self) -> list[WorkerGroup]:
        """The worker groups to render: ``worker_groups`` or one group built from the flat worker_* fields.

        Example:
            >>> [g.name for g in ClusterConfiguration(name="c", num_workers=2).resolved_worker_groups()]
            ['worker-group']
        """
        return self._groups

    def _resolve_shape(self, *, autoscaling: bool, min_workers: int | None, max_workers: int | None) -> None:
        self._mapping = accelerator_mapping(
            self.extended_resource_mapping, overwrite=self.overwrite_default_resource_mapping
        )
        d = self._LIMIT_DEFAULTS
        _resolve_limits(self, "head_cpu_requests", "head_cpu_limits", d["head_cpu_limits"], compare_cpu=True)
        _resolve_limits(self, "head_memory_requests", "head_memory_limits", d["head_memory_limits"])
        _check_mapped(self.head_extended_resources(), self._mapping, self._head_extended_field())
        mounts_ok = {v["name"] for v in self.volumes}
        for i, mount in enumerate(self.volume_mounts):
            if mount["name"] not in mounts_ok:
                raise ConfigError(
                    f"volume_mounts[{i}].name",
                    mount["name"],
                    f"one of the volumes: {sorted(mounts_ok)}",
                    problem="names no volume",
                )
        check_annotations(self.annotations, "annotations")
        if self.worker_groups is not None:
            flat = sorted(self._FLAT_WORKER_FIELDS & self.model_fields_set)
            if flat:
                raise ConfigError(
                    "worker_groups",
                    [g.name for g in self.worker_groups],
                    "either worker_groups=[WorkerGroup(...)] or the flat worker_* fields, not both",
                    problem=f"given together with {', '.join(flat)}",
                )
            self._groups = list(self.worker_groups)
        else:
            _resolve_limits(
                self, "worker_cpu_requests", "worker_cpu_limits", d["worker_cpu_limits"], compare_cpu=True
            )
            _resolve_limits(self, "worker_memory_requests", "worker_memory_limits", d["worker_memory_limits"])
            low = min_workers if min_workers is not None else (0 if autoscaling else self.num_workers)
            high = max_workers if max_workers is not None else max(self.num_workers, low)
            if low > high:
                raise ConfigError("min_workers", low, f"at most max_workers={high}", problem="min above max")
            if not low <= self.num_workers <= high:
                raise ConfigError(
                    "num_workers",
                    self.num_workers,
                    f"an integer within [min_workers={low}, max_workers={high}]",
                    problem="outside the autoscaling bounds",
                )
            self._groups = [
                WorkerGroup.model_construct(
                    name=self._DEFAULT_GROUP,
                    replicas=self.num_workers,
                    min_replicas=low,
                    max_replicas=high,
                    cpu_requests=self.worker_cpu_requests,
                    cpu_limits=self.worker_cpu_limits,
                    memory_requests=self.worker_memory_requests,
                    memory_limits=self.worker_memory_limits,
                    extended_resource_requests=self._worker_extended(),
                    tolerations=self.worker_tolerations,
                    node_selector=self.worker_node_selector,
                    labels={},
                    annotations={},
                    envs={},
                    image=None,
                    ray_start_params={},
                )
            ]
        for i, group in enumerate(self._groups):
            field = (
                f"worker_groups[{i}].extended_resource_requests"
                if self.worker_groups is not None
                else self._worker_extended_field()
            )
            _check_mapped(group.extended_resource_requests, self._mapping, field)


class ClusterConfiguration(_ClusterShape):
    """A long-running RayCluster: head, workers, Kueue queue and priority. Pass it to :class:`Cluster`.

    Seed spelling works unchanged (``worker_cpu_requests=2``, ``worker_memory_requests=8`` meaning 8 GB,
    ``worker_extended_resource_requests={'nvidia.com/gpu': 1}``, ``local_queue=...``, ``labels={...}``).
    ``priority_class="rd-priority"`` and ``labels={"kueue.x-k8s.io/priority-class": "rd-priority"}`` mean the
    same thing (different values in both is an error); likewise ``local_queue`` and the queue-name label.
    ``namespace=None`` leaves the namespace to the connection (chosen at ``apply()`` time).
    ``labels`` and ``annotations`` go on the RayCluster's metadata (annotations on the pods too).
    ``elastic=True`` adds Kueue's elastic-job annotation, which Kueue needs for autoscaling in a queue.

    Example:
        >>> cfg = ClusterConfiguration(name="first-raycluster", namespace="demo", head_cpu_requests=2,
        ...     head_cpu_limits=2, head_memory_requests=8, head_memory_limits=8,
        ...     head_extended_resource_requests={"nvidia.com/gpu": 1}, num_workers=1,
        ...     worker_extended_resource_requests={"nvidia.com/gpu": 1}, local_queue="user-queue")
        >>> cfg.local_queue, cfg.priority_class
        ('user-queue', None)
        >>> ClusterConfiguration(name="Bad_Name")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: name: not a DNS-1035 label (got 'Bad_Name'); allowed: ...
    """

    _LIMIT_DEFAULTS: ClassVar[dict[str, Any]] = {
        "head_cpu_limits": 2,
        "head_memory_limits": 8,
        "worker_cpu_limits": 1,
        "worker_memory_limits": 6,
    }
    _FLAT_WORKER_FIELDS: ClassVar[frozenset[str]] = frozenset(
        {
            "num_workers",
            "worker_cpu_requests",
            "worker_cpu_limits",
            "worker_memory_requests",
            "worker_memory_limits",
            "worker_extended_resource_requests",
            "worker_tolerations",
            "worker_node_selector",
            "min_workers",
            "max_workers",
        }
    )

    name: str = Field(description="a DNS-1035 label of at most 53 characters")
    namespace: OptName = Field(
        default=None, description="a namespace name (DNS label), or None for the current one"
    )
    local_queue: OptName = Field(default=None, description="the name of a Kueue LocalQueue in the namespace")
    priority_class: OptName = Field(default=None, description="the name of a Kueue WorkloadPriorityClass")
    labels: StrMap = Field(default_factory=dict, description="a dict of str -> str labels for the RayCluster")
    head_extended_resource_requests: Counts = Field(default_factory=dict, description=_COUNT_ALLOWED)
    worker_extended_resource_requests: Counts = Field(default_factory=dict, description=_COUNT_ALLOWED)
    enable_autoscaling: bool = Field(default=False, description="True or False")
    min_workers: int | None = Field(default=None, ge=0, description="an integer >= 0 and <= num_workers")
    max_workers: int | None = Field(default=None, ge=0, description="an integer >= num_workers")
    elastic: bool = Field(default=False, description="True adds the kueue.x-k8s.io/elastic-job annotation")
    verify_tls: bool = Field(
        default=True, description="True or False: verify the dashboard's TLS certificate"
    )

    def head_extended_resources(self) -> dict[str, int | str]:
        """The head's extended resource requests (``head_extended_resource_requests``).

        Example:
            >>> ClusterConfiguration(name="c", head_extended_resource_requests={"nvidia.com/gpu": 1}
            ...     ).head_extended_resources()
            {'nvidia.com/gpu': 1}
        """
        return self.head_extended_resource_requests

    def _worker_extended(self) -> dict[str, int | str]:
        return self.worker_extended_resource_requests

    def _worker_extended_field(self) -> str:
        return "worker_extended_resource_requests"

    def _head_extended_field(self) -> str:
        return "head_extended_resource_requests"

    @property
    def is_elastic(self) -> bool:
        """Whether the RayCluster carries Kueue's elastic-job annotation (``elastic=True`` or given directly).

        Example:
            >>> ClusterConfiguration(name="c", elastic=True).is_elastic
            True
        """
        return self.elastic or self.annotations.get(ELASTIC_JOB_ANNOTATION) == "true"

    @model_validator(mode="after")
    def _resolve(self) -> ClusterConfiguration:
        check_raycluster_name(self.name, "name")
        check_labels(self.labels, "labels")
        queue, priority = resolve_queue_and_priority(self.labels, self.local_queue, self.priority_class)
        object.__setattr__(self, "local_queue", queue)  # derived values: not marked as given
        object.__setattr__(self, "priority_class", priority)
        self._resolve_shape(
            autoscaling=self.enable_autoscaling, min_workers=self.min_workers, max_workers=self.max_workers
        )
        queued = self.local_queue is not None
        check_worker_groups(
            [g.name for g in self._groups],
            field="worker_groups",
            limit=MAX_WORKER_GROUPS_RAYCLUSTER if queued else None,
            what="a RayCluster",
        )
        check_autoscaling(self.enable_autoscaling, queued=queued, elastic=self.is_elastic)
        return self


class ManagedClusterConfig(_ClusterShape):
    """The cluster a :class:`RayJob` creates for itself and deletes when the job ends (``rayClusterSpec``).

    Uses the peer's spelling: ``head_accelerators`` / ``worker_accelerators`` for extended resources.
    There is no name, namespace or queue here: those belong to the RayJob (``RayJob(local_queue=...,
    priority_class=..., labels=...)``). ``labels`` and ``annotations`` go on the pods; Kueue keys there
    are rejected rather than silently dropped.

    Example:
        >>> cfg = ManagedClusterConfig(num_workers=4, worker_cpu_requests=8, worker_cpu_limits=8,
        ...     worker_memory_requests=16, worker_memory_limits=16, worker_accelerators={"nvidia.com/gpu": 2})
        >>> cfg.resolved_worker_groups()[0].replicas
        4
    """

    _LIMIT_DEFAULTS: ClassVar[dict[str, Any]] = {
        "head_cpu_limits": 2,
        "head_memory_limits": 8,
        "worker_cpu_limits": 1,
        "worker_memory_limits": 2,
    }
    _FLAT_WORKER_FIELDS: ClassVar[frozenset[str]] = frozenset(
        {
            "num_workers",
            "worker_cpu_requests",
            "worker_cpu_limits",
            "worker_memory_requests",
            "worker_memory_limits",
            "worker_accelerators",
            "worker_tolerations",
            "worker_node_selector",
        }
    )

    head_cpu_requests: Cpu = Field(default=2, description=CPU_ALLOWED)
    head_memory_requests: Memory = Field(default=8, description=MEMORY_ALLOWED)
    worker_memory_requests: Memory = Field(default=2, description=MEMORY_ALLOWED)
    head_accelerators: Counts = Field(default_factory=dict, description=_COUNT_ALLOWED)
    worker_accelerators: Counts = Field(default_factory=dict, description=_COUNT_ALLOWED)
    labels: StrMap = Field(
        default_factory=dict, description="pod labels: a dict of str -> str (no Kueue keys)"
    )

    def head_extended_resources(self) -> dict[str, int | str]:
        """The head's extended resource requests (``head_accelerators``).

        Example:
            >>> ManagedClusterConfig(head_accelerators={"google.com/tpu": 4}).head_extended_resources()
            {'google.com/tpu': 4}
        """
        return self.head_accelerators

    def _worker_extended(self) -> dict[str, int | str]:
        return self.worker_accelerators

    def pod_labels(self) -> dict[str, str]:
        """Labels for the pod templates: ``labels`` (Kueue keys belong on the RayJob instead).

        Example:
            >>> ManagedClusterConfig(labels={"team": "a"}).pod_labels()
            {'team': 'a'}
        """
        return dict(self.labels)

    def _worker_extended_field(self) -> str:
        return "worker_accelerators"

    def _head_extended_field(self) -> str:
        return "head_accelerators"

    @model_validator(mode="after")
    def _resolve(self) -> ManagedClusterConfig:
        check_labels(self.labels, "labels")
        for key in (QUEUE_LABEL, PRIORITY_LABEL):
            if key in self.labels:
                raise ConfigError(
                    f"labels[{key!r}]",
                    self.labels[key],
                    "RayJob(local_queue=..., priority_class=..., labels=...): Kueue reads them on the RayJob",
                    problem="Kueue labels on the managed cluster's pods would be ignored",
                )
        self._resolve_shape(autoscaling=False, min_workers=None, max_workers=None)
        check_worker_groups(
            [g.name for g in self._groups], field="worker_groups", limit=None, what="a RayJob"
        )
        return self


# ---------------------------------------------------------------------------------------------------
# helpers


def _resolve_limits(
    model: BaseModel, req_name: str, lim_name: str, default: Any, *, compare_cpu: bool = False
) -> None:
    request = getattr(model, req_name)
    limit = getattr(model, lim_name)
    norm = cpu_quantity if compare_cpu else memory_quantity
    if limit is None:
        bigger = compare_quantities(norm(request, req_name), norm(default, lim_name)) > 0
        object.__setattr__(model, lim_name, request if bigger else default)
        return
    if compare_quantities(norm(limit, lim_name), norm(request, req_name)) < 0:
        raise ConfigError(
            lim_name,
            limit,
            f"a value >= {req_name}={request!r} (or leave it unset: it defaults to max(default, request))",
            problem=f"limit below the request {request!r}",
        )


def _check_mapped(counts: Mapping[str, Any], mapping: Mapping[str, str], field: str) -> None:
    for key in counts:
        if key not in mapping:
            raise ConfigError(
                f"{field}[{key!r}]",
                key,
                "a mapped extended resource: "
                + ", ".join(sorted(mapping))
                + " (add others with extended_resource_mapping={'<resource>': '<Ray resource>'})",
                problem="unmapped extended resource",
            )
