"""Kubernetes objects as plain data: their vocabulary, their rules and pure builders. No I/O, nothing heavy.

The vocabulary: :mod:`~rayqueue_sdk.manifests.labels` (every label and annotation key),
:mod:`~rayqueue_sdk.manifests.quantities` (the quantity grammar) and
:mod:`~rayqueue_sdk.manifests.ray_image` (the default Ray image and ``rayVersion``). The rules:
:mod:`~rayqueue_sdk.manifests.rules` (Kueue's and KubeRay's webhooks, run by the configuration models
and over rendered manifests). The builders, configuration in and plain ``dict`` out:
:mod:`~rayqueue_sdk.manifests.raycluster` (``ray.io/v1`` RayCluster),
:mod:`~rayqueue_sdk.manifests.rayjob` (``ray.io/v1`` RayJob and the Ray job-submission request) and
:mod:`~rayqueue_sdk.manifests.kueue` (Kueue ``v1beta2`` admin objects for demos and tests).

This package sits below :mod:`rayqueue_sdk.config`: the builders read a configuration model's fields but
import its classes only for type checking, so the models can use the rules without a cycle.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["dump_yaml"]


def dump_yaml(obj: Any) -> str:
    """Serialise a manifest (or a list of them, as a multi-document stream) to YAML, keys in build order.

    PyYAML is imported on first use. No anchors or aliases are emitted, and multi-line strings (such as
    ``runtimeEnvYAML``) are written as literal blocks, so the text reads well and can be pasted anywhere.

    Example:
        >>> print(dump_yaml({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}}), end="")
        apiVersion: v1
        kind: Namespace
        metadata:
          name: demo
    """
    import yaml  # lazy: PyYAML costs ~10 ms and only YAML output needs it

    dumper = _dumper()
    if isinstance(obj, list):
        return str(yaml.dump_all(obj, Dumper=dumper, sort_keys=False, default_flow_style=False))
    return str(yaml.dump(obj, Dumper=dumper, sort_keys=False, default_flow_style=False))


@functools.lru_cache(maxsize=1)
def _dumper() -> Any:
    import yaml  # lazy: as in dump_yaml

    base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class _NoAliasDumper(base):  # type: ignore[valid-type,misc]
        def ignore_aliases(self, data: Any) -> bool:
            return True

    def _str(dumper: Any, data: str) -> Any:  # multi-line strings (runtimeEnvYAML) as literal blocks
        style = "|" if "\n" in data and all(line == line.rstrip() for line in data.split("\n")) else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)

    _NoAliasDumper.add_representer(str, _str)
    return _NoAliasDumper
