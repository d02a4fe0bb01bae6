"""How the configuration models report errors: one ConfigError, never a pydantic ``ValidationError``.

``StrictModel`` is the strict base of every configuration model (an unknown field is an error). Its
constructor, field assignment, ``model_validate`` and ``model_validate_json`` turn pydantic's
``ValidationError`` into a :class:`~rayqueue_sdk.errors.ConfigError` naming the field by its path
(``worker_groups[0].cpu_requests``), the value and what is allowed (the field's description). An
unknown field gets the closest known name as a suggestion, and a hint for the peer SDK's fields; any
further problems are added as a note.

Example:
    >>> from rayqueue_sdk.config.models import WorkerGroup
    >>> WorkerGroup(name="g", cpu_request=2)
    Traceback (most recent call last):
    ...
    rayqueue_sdk.errors.ConfigError: cpu_request: unknown field (did you mean 'cpu_requests'?) ...
"""

from __future__ import annotations

import difflib
import re
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import ErrorDetails

from rayqueue_sdk.errors import ConfigError

__all__ = ["StrictModel"]

_HINTS = {
    "write_to_file": "a ClusterConfiguration field (Cluster(config).to_yaml() gives the manifest)",
    "accelerator_configs": "use extended_resource_mapping",
}


class StrictModel(BaseModel):
    """The strict base of every configuration model: unknown fields and bad values are a ConfigError.

    Example:
        >>> class Shape(StrictModel):
        ...     replicas: int = 1
        >>> Shape(replicas="two")
        Traceback (most recent call last):
        ...
        rayqueue_sdk.errors.ConfigError: replicas: ...
    """

    # defer_build: pydantic builds a model's validator when the model is first used, not when its class
    # is defined, so `from rayqueue_sdk import ClusterConfiguration` stays cheap (~0.1 s saved).
    model_config = ConfigDict(
        extra="forbid", validate_default=False, arbitrary_types_allowed=False, defer_build=True
    )

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
        # adopt the validated model's state through pydantic's own (pickle) protocol
        self.__setstate__(fresh.__getstate__())

    def _derive(self, name: str, value: Any) -> None:
        """Fill in field ``name`` with a value derived during validation from the validated fields (a limit
        that follows its request, the queue named by a label). The one place a validator writes a field:
        it is not marked as given, so an assignment re-validates from what the user gave and derives it
        again.
        """
        if name not in type(self).model_fields:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}")
        self.__dict__[name] = value

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
    # An unknown field first: it is usually a typo that also explains a "missing" one ("nmae: c").
    details = sorted(err.errors(), key=lambda d: d["type"] != "extra_forbidden")
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
