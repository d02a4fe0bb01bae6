"""What the troubleshooting page must cover, read from the code (so a new message fails a test, not a user):

* :func:`error_classes`: every public :class:`~rayqueue_sdk.errors.RayQueueError` subclass.
* :func:`sdk_templates`: every message the SDK writes when it explains a wait or raises, in the modules
  that show them (``admission/``, ``cluster/wait*``, ``cluster/status*``, ``job/``): each string or
  f-string given to an error class of :mod:`rayqueue_sdk.errors` or to the admission machine's ``out``.
* :func:`upstream_templates`: the Kueue, KubeRay and KEDA words the SDK passes on as they were written:
  every reason and message of the emulator's Kueue vocabulary (``rayqueue_local.controllers.kueue.messages``,
  worded as upstream Kueue), the KubeRay deployment statuses the admission machine reads, and the KEDA
  ScaledObject conditions.

Each template is a regular expression: the literal text, with ``.+?`` where a value goes.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import rayqueue_sdk
import rayqueue_sdk.errors as sdk_errors
from rayqueue_local.controllers.keda import scaledobject
from rayqueue_local.controllers.kueue import messages as kueue_messages
from rayqueue_sdk.admission import job as admission_job

SDK_SRC = Path(rayqueue_sdk.__file__).resolve().parent
SHOWING_MODULES = ("admission/*.py", "cluster/wait*.py", "cluster/status*.py", "job/*.py")
HOLE = ".+?"


def error_classes() -> list[type[sdk_errors.RayQueueError]]:
    """The public error classes (``rayqueue_sdk.errors.__all__``), base included."""
    found = [getattr(sdk_errors, n) for n in sdk_errors.__all__]
    return [c for c in found if isinstance(c, type) and issubclass(c, sdk_errors.RayQueueError)]


def _pattern(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return re.escape(node.value) if " " in node.value else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(re.escape(str(value.value)))
            elif not parts or parts[-1] != HOLE:
                parts.append(HOLE)
        text = "".join(parts)
        literal = re.sub(re.escape(HOLE), "", text)
        return text if re.search(r"[A-Za-z]{3}", literal) else None
    return None


def sdk_templates() -> list[tuple[str, str]]:
    """``(where, pattern)`` for every message template the SDK shows (see the module docstring)."""
    emitters = set(sdk_errors.__all__) | {"out"}
    out: list[tuple[str, str]] = []
    for glob in SHOWING_MODULES:
        for path in sorted(SDK_SRC.glob(glob)):
            for node in ast.walk(ast.parse(path.read_text())):
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                if name not in emitters:
                    continue
                for arg in node.args:
                    pattern = _pattern(arg)
                    if pattern:
                        out.append((f"{path.relative_to(SDK_SRC)}:{node.lineno}", pattern))
    return out


def _function_pattern(func: Callable[..., str]) -> str:
    """The pattern of a message function: called with sentinels, which become holes."""
    args = []
    for i, param in enumerate(inspect.signature(func).parameters.values()):
        marker = f"\x00{i}\x00"
        annotation = str(param.annotation)
        if "int" in annotation and "str" not in annotation:
            args.append(900001 + i)
        elif "Iterable" in annotation:
            args.append([marker])
        else:
            args.append(marker)
    text = func(*args)
    # a sentinel, or the "UNKNOWN" a lookup of a sentinel gives (preemption_message's reason), is a hole
    text = re.sub(r"\x00\d+\x00|90000\d|UNKNOWN", "\x01", text)
    return "\x01".join(re.escape(p) for p in text.split("\x01")).replace("\x01", HOLE)


def upstream_templates() -> Iterator[tuple[str, str]]:
    """``(source, pattern)`` for each Kueue, KubeRay and KEDA reason or message the SDK passes on."""
    for name in kueue_messages.__all__:
        value = getattr(kueue_messages, name)
        where = f"kueue: {name}"
        yield (where, re.escape(value)) if isinstance(value, str) else (where, _function_pattern(value))
    # KubeRay's RayJob jobDeploymentStatus values the admission machine reads.
    job_module = SDK_SRC / "admission" / "job.py"
    for node in ast.walk(ast.parse(job_module.read_text())):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "deployment":
            for const in ast.walk(node):
                if isinstance(const, ast.Constant) and isinstance(const.value, str) and const.value:
                    yield f"kuberay: jobDeploymentStatus {const.value}", re.escape(const.value)
    for status in admission_job._DEPLOYMENT_STARTING:
        if status:
            yield f"kuberay: jobDeploymentStatus {status}", re.escape(status)
    # KEDA's ScaledObject conditions, as the emulator writes them (worded as upstream KEDA).
    for text in (scaledobject._NOT_FOUND, scaledobject._NO_SCALE):
        yield "keda: ScaledObjectCheckFailed", re.escape(text)
    for reason in ("ScaledObjectReady", "ScaledObjectCheckFailed", "KEDAScalerFailed"):
        yield f"keda: {reason}", re.escape(reason)
