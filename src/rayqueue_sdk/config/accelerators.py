"""The extended-resource -> Ray-resource mapping (GPUs, TPUs, Neuron cores, ...) of the configuration models.

:data:`DEFAULT_ACCELERATORS` maps the usual accelerators' Kubernetes extended resources to Ray resources
(GPU kinds are summed into ``num-gpus``; the others go into ``resources``); :func:`accelerator_mapping`
adds a configuration's ``extended_resource_mapping`` to it, and ``check_mapped`` rejects a request for
an extended resource the mapping does not know. Pure: no I/O. :mod:`rayqueue_sdk.config.models` re-exports the
public names.

Example:
    >>> DEFAULT_ACCELERATORS["nvidia.com/gpu"], accelerator_mapping()["google.com/tpu"]
    ('GPU', 'TPU')
"""

from __future__ import annotations

import re
import types
from collections.abc import Mapping
from typing import Any

from rayqueue_sdk.errors import ConfigError

__all__ = ["DEFAULT_ACCELERATORS", "accelerator_mapping", "check_mapped"]


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
_EXTENDED_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?\Z")


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


def check_mapped(counts: Mapping[str, Any], mapping: Mapping[str, str], field: str) -> None:
    """Refuse an extended resource in ``counts`` that ``mapping`` does not map to a Ray resource.

    Example:
        >>> check_mapped({"nvidia.com/gpu": 1}, DEFAULT_ACCELERATORS, "head_accelerators")
        >>> check_mapped({"example.com/tpu": 1}, DEFAULT_ACCELERATORS, "head_accelerators")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: head_accelerators['example.com/tpu']: ...
    """
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
