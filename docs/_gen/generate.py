"""The documentation's generated pages, built from the code at every ``mkdocs build`` (never hand-copied).

* :func:`configuration_page`: every field of ``ClusterConfiguration``, ``ManagedClusterConfig`` and
  ``WorkerGroup``, read from the pydantic models (type, default, allowed values from the field's
  description, which is the text the model's own errors quote), with an example per field that is
  *validated by building the model* here, so a wrong example fails the build.
* :func:`cli_page`: the ``rayqueue`` parser's help, command by command, walked from
  :func:`rayqueue_sdk.cli.main.build_parser`, and the exit-code table of :mod:`rayqueue_sdk.cli.exit_codes`.
* :func:`api_page`: one mkdocstrings block per public name of ``rayqueue_sdk`` (its ``__all__``), and of
  ``rayqueue_local``'s.

``gen_pages.py`` (run by the mkdocs-gen-files plugin) writes them; ``tests/docs`` calls these functions.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import types
import typing
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

import rayqueue_local
import rayqueue_sdk
from rayqueue_sdk.cli.exit_codes import EXIT_CODES, MEANINGS
from rayqueue_sdk.cli.main import BUILTIN_GROUPS, build_parser
from rayqueue_sdk.config.models import ClusterConfiguration, ManagedClusterConfig, WorkerGroup

#: One example value per field name (shared by the models that have the field). Each is checked by
#: building the model with it (``_checked_example``): an example the model rejects fails the build, and a
#: field without one fails it too, so a new field cannot land undocumented.
EXAMPLES: dict[str, Any] = {
    "name": "my-workspace-cluster",
    "namespace": "team-a",
    "num_workers": 2,
    "head_cpu_requests": 2,
    "head_cpu_limits": "2500m",
    "head_memory_requests": 8,
    "head_memory_limits": "16Gi",
    "worker_cpu_requests": 4,
    "worker_cpu_limits": 4,
    "worker_memory_requests": 16,
    "worker_memory_limits": 16,
    "worker_groups": [{"name": "gpu", "replicas": 2, "extended_resource_requests": {"nvidia.com/gpu": 1}}],
    "image": "rayproject/ray:2.55.1-py311",
    "image_pull_secrets": ["registry-creds"],
    "envs": {"HF_HOME": "/data/hf"},
    "annotations": {"team": "research"},
    "head_tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "worker_tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "head_node_selector": {"node-role/ray-head": "true"},
    "worker_node_selector": {"nvidia.com/gpu.present": "true"},
    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "datasets"}}],
    "volume_mounts": [{"name": "data", "mountPath": "/data"}],
    "extended_resource_mapping": {"x.com/fpga": "FPGA"},
    "overwrite_default_resource_mapping": True,
    "local_queue": "ds-workspace-queue",
    "priority_class": "rd-priority",
    "labels": {"team": "research"},
    "head_extended_resource_requests": {"nvidia.com/gpu": 1},
    "worker_extended_resource_requests": {"nvidia.com/gpu": 1},
    "enable_autoscaling": True,
    "min_workers": 0,
    "max_workers": 4,
    "elastic": True,
    "idle_scale_to_zero": {"idle_minutes": 60},
    "verify_tls": False,
    "write_to_file": True,
    "enable_usage_stats": True,
    # codeflare-sdk's fields refused unless left at their default (the reference says why)
    "enable_gcs_ft": False,
    "redis_address": None,
    "redis_password_secret": None,
    "external_storage_namespace": None,
    "additional_worker_groups": None,
    "head_accelerators": {"nvidia.com/gpu": 1},
    "worker_accelerators": {"nvidia.com/gpu": 2},
    "topology": "rack",
    "topology_mode": "preferred",
    "pod_security": "restricted",
    # WorkerGroup
    "replicas": 2,
    "min_replicas": 1,
    "max_replicas": 4,
    "cpu_requests": 8,
    "cpu_limits": 8,
    "memory_requests": 32,
    "memory_limits": "48Gi",
    "extended_resource_requests": {"nvidia.com/gpu": 2},
    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "node_selector": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
    "ray_start_params": {"object-store-memory": "2000000000"},
}

#: Fields an example needs besides its own (``name`` is required; some fields are checked together).
_COMPANIONS: dict[str, dict[str, Any]] = {
    "min_workers": {"enable_autoscaling": True, "num_workers": 2},
    "max_workers": {"enable_autoscaling": True, "num_workers": 2},
    "overwrite_default_resource_mapping": {"extended_resource_mapping": {"nvidia.com/gpu": "GPU"}},
    "volume_mounts": {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "datasets"}}]},
    "min_replicas": {"replicas": 2},
    "max_replicas": {"replicas": 2},
}

MODELS: tuple[type[BaseModel], ...] = (ClusterConfiguration, ManagedClusterConfig, WorkerGroup)


def type_name(annotation: Any) -> str:
    """A short, readable name of a field's type (``int | float | str``, ``dict[str, str]``)."""
    if annotation is type(None):
        return "None"
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__name__
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return type_name(args[0])
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(a) for a in args)
    if origin is not None and args:
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{', '.join(type_name(a) for a in args)}]"
    if annotation is type(None):
        return "None"
    if annotation is typing.Any:
        return "Any"
    return str(annotation).replace("typing.", "")


def default_text(model: type[BaseModel], field: str) -> str:
    """The default of a field as the model applies it (``required`` when there is none)."""
    info = model.model_fields[field]
    if info.default is PydanticUndefined and info.default_factory is None:
        return "required"
    if info.default_factory is not None:
        value = info.default_factory()  # type: ignore[call-arg]
        if field == "image":
            return f"`{value}` (the Ray image matching the local Python and Ray)"
        return f"`{value!r}`"
    return f"`{info.default!r}`"


def _checked_example(model: type[BaseModel], field: str) -> str:
    if field not in EXAMPLES:
        raise KeyError(f"docs/_gen/generate.py: no example for {model.__name__}.{field}; add one to EXAMPLES")
    value = EXAMPLES[field]
    kwargs: dict[str, Any] = {**_COMPANIONS.get(field, {}), field: value}
    if model is ClusterConfiguration and field != "name":
        kwargs.setdefault("name", "demo")
    if model is WorkerGroup and field != "name":
        kwargs.setdefault("name", "gpu")
    model(**kwargs)  # raises (and fails the build) when the example is not valid
    shown = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    return f"`{model.__name__}({shown})`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def model_table(model: type[BaseModel]) -> str:
    """The Markdown table of every field of ``model``: name, type, default, allowed values, example."""
    rows = ["| field | type | default | allowed values | example |", "|---|---|---|---|---|"]
    for field, info in model.model_fields.items():
        rows.append(
            "| "
            + " | ".join(
                (
                    f"`{field}`",
                    f"`{_cell(type_name(info.annotation))}`",
                    _cell(default_text(model, field)),
                    _cell(info.description or ""),
                    _cell(_checked_example(model, field)),
                )
            )
            + " |"
        )
    return "\n".join(rows)


def configuration_page() -> str:
    """The configuration reference page (Markdown)."""
    parts = [
        "# Configuration reference",
        "",
        "Generated from the pydantic models at every build of this site (`docs/_gen/generate.py`): every",
        "field, its type, its default, the values it allows (the same words the model's `ConfigError` uses)",
        "and an example that the build checks by constructing the model with it. Memory given as a number",
        "means gigabytes (`8` is `8G`), CPU as a number means cores, as in codeflare-sdk.",
        "",
    ]
    for model in MODELS:
        doc = (model.__doc__ or "").strip().split("\n\n")[0]
        parts += [f"## {model.__name__}", "", " ".join(doc.split()), "", model_table(model), ""]
    return "\n".join(parts)


def _subparsers(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


def _help(parser: argparse.ArgumentParser) -> str:
    with contextlib.redirect_stdout(io.StringIO()):
        os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal: fix it so the page is stable
        return parser.format_help()


def cli_commands() -> list[tuple[str, str]]:
    """Every command of ``rayqueue`` as ``(command line, help text)``, walked from the real parser."""
    out: list[tuple[str, str]] = []
    root = build_parser()
    out.append(("rayqueue", _help(root)))

    def walk(prefix: str, parser: argparse.ArgumentParser) -> None:
        for name, sub in _subparsers(parser):
            line = f"{prefix} {name}"
            out.append((line, _help(sub)))
            walk(line, sub)

    for group, sub in _subparsers(root):
        if group in BUILTIN_GROUPS:
            full = dict(_subparsers(build_parser(group)))[group]
            out.append((f"rayqueue {group}", _help(full)))
            walk(f"rayqueue {group}", full)
        else:
            out.append((f"rayqueue {group}", _help(sub)))
            walk(f"rayqueue {group}", sub)
    return out


def exit_code_table() -> str:
    """The exit codes as a Markdown table: code, meaning, error classes (from ``EXIT_CODES``)."""
    classes: dict[int, list[str]] = {}
    for cls, code in EXIT_CODES.items():
        classes.setdefault(code, []).append(cls.__name__)
    rows = ["| code | meaning | error classes |", "|---|---|---|"]
    for code, meaning in sorted(MEANINGS.items()):
        names = ", ".join(f"[`{n}`](../troubleshooting.md#{n.lower()})" for n in classes.get(code, []))
        rows.append(f"| {code} | {_cell(meaning)} | {names} |")
    return "\n".join(rows)


def cli_page() -> str:
    """The CLI reference page (Markdown)."""
    parts = [
        "# CLI reference",
        "",
        "Generated from the `rayqueue` parser (`rayqueue_sdk.cli.main.build_parser`) at every build.",
        "",
        "## Exit codes",
        "",
        "A pipeline branches on these (the most specific error class wins; any other `RayQueueError` is 1):",
        "",
        exit_code_table(),
        "",
        "## Commands",
        "",
    ]
    for line, text in cli_commands():
        anchor = re.sub(r"[^a-z0-9]+", "-", line.lower()).strip("-")
        parts += [f"### `{line}` {{#{anchor}}}", "", "```text", text.rstrip(), "```", ""]
    return "\n".join(parts)


def _built_from_mixins(obj: object) -> bool:
    """A class whose methods come from one module per concept (``Cluster``, ``RayJob``): its page lists the
    inherited methods too, as they are its own to a user."""
    return isinstance(obj, type) and any(base.__name__.endswith("Mixin") for base in obj.__mro__[1:])


def api_page() -> str:
    """The API reference page: one mkdocstrings block per public name, grouped by defining module."""
    parts = [
        "# API reference",
        "",
        "Generated from the docstrings (mkdocstrings) of every name in `rayqueue_sdk.__all__` and",
        "`rayqueue_local.__all__`; the examples in them run as doctests in CI.",
        "",
    ]
    for package in (rayqueue_sdk, rayqueue_local):
        parts += [f"## {package.__name__}", ""]
        by_module: dict[str, list[str]] = {}
        for name in package.__all__:
            obj = getattr(package, name)
            module = getattr(obj, "__module__", None) or package.__name__
            if not isinstance(obj, type | types.FunctionType) or not module.startswith(package.__name__):
                module = package.__name__  # a constant: documented where the package exports it
            elif getattr(obj, "__name__", name) != name:
                # an alias (CodeFlareClusterStatus is ClusterPhase): documented where it is bound
                module = getattr(package, "_EXPORTS", {}).get(name, package.__name__)
            by_module.setdefault(module, []).append(name)
        for module, names in sorted(by_module.items()):
            parts += [f"### `{module}`", ""]
            for name in sorted(names):
                parts += [f"::: {module}.{name}", "    options:", "      heading_level: 4"]
                if _built_from_mixins(getattr(package, name)):
                    parts += ["      inherited_members: true"]
                parts += [""]
    return "\n".join(parts)


#: The generated pages: path under docs/ -> function producing the Markdown.
PAGES = {
    "reference/configuration.md": configuration_page,
    "reference/cli.md": cli_page,
    "reference/api.md": api_page,
}
