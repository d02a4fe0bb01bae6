"""The field checks the API server makes on the built-in kinds' own data: ConfigMaps and Secrets.

Custom resources are checked against their CRD schemas; built-ins have Go types instead, whose decoding
and ``Validate...`` functions refuse what this module refuses, worded as upstream:

* a value of the wrong JSON type fails to decode: 400 BadRequest, ``json: cannot unmarshal ...``
  (raised here as ``TypeError``);
* a Secret's ``data`` value that is not base64: 400 BadRequest, ``illegal base64 data at input byte N``;
* a key that is not a config key (``[-._a-zA-Z0-9]+``, at most 253 characters), a key given in both
  ``data`` and ``binaryData``, or more than 1 MiB in all: 422 Invalid causes
  (k8s.io/kubernetes/pkg/apis/core/validation: ``ValidateConfigMap``, ``ValidateSecret``).

Example:
    >>> builtin_causes("configmaps", {"data": {"bad key": "v"}})[0]["field"]
    'data[bad key]'
    >>> try:
    ...     builtin_causes("configmaps", {"data": {"k": 1}})
    ... except TypeError as err:
    ...     print(err)
    json: cannot unmarshal number into Go struct field ConfigMap.data of type string
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from rayqueue_local.apimachinery.fielderrors import json_type_name

__all__ = ["MAX_DATA_BYTES", "builtin_causes"]

#: Upstream's ``TotalAnnotationSizeLimitB``'s sibling for ConfigMaps and Secrets: 1 MiB of data.
MAX_DATA_BYTES = 1024 * 1024
_CONFIG_KEY = re.compile(r"[-._a-zA-Z0-9]+\Z")
_CONFIG_KEY_TEXT = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name', "
    "or 'KEY_NAME', or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
)
#: kind key -> (Go type name, the map fields of string values, the fields holding base64).
_DATA_FIELDS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "configmaps": ("ConfigMap", ("data", "binaryData"), ("binaryData",)),
    "secrets": ("Secret", ("data", "stringData"), ("data",)),
}


def _json_type(value: Any) -> str:
    """Go's name for a JSON value's type in an unmarshal error."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return {"list": "array", "dict": "object"}.get(type(value).__name__, json_type_name(value))


def _decode_base64(value: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        bad = next((i for i, ch in enumerate(value) if not (ch.isalnum() or ch in "+/=")), len(value))
        raise TypeError(f"illegal base64 data at input byte {bad}") from None


def builtin_causes(key: str, obj: dict[str, Any]) -> list[dict[str, Any]]:
    """Causes for a ConfigMap's or Secret's data (other kinds: none); ``TypeError`` when it cannot decode."""
    if key not in _DATA_FIELDS:
        return []
    go_type, fields, encoded = _DATA_FIELDS[key]
    causes: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    total = 0
    for field in fields:
        values = obj.get(field)
        if values is None:
            continue
        if not isinstance(values, dict):
            raise TypeError(
                f"json: cannot unmarshal {_json_type(values)} into Go struct field "
                f"{go_type}.{field} of type map[string]{'[]uint8' if field in encoded else 'string'}"
            )
        for name, value in values.items():
            if not isinstance(value, str):
                raise TypeError(
                    f"json: cannot unmarshal {_json_type(value)} into Go struct field "
                    f"{go_type}.{field} of type string"
                )
            total += len(_decode_base64(value)) if field in encoded else len(value.encode())
            if len(name) > 253 or not _CONFIG_KEY.match(name):
                text = "must be no more than 253 characters" if len(name) > 253 else _CONFIG_KEY_TEXT
                causes.append(
                    {
                        "reason": "FieldValueInvalid",
                        "field": f"{field}[{name}]",
                        "message": f'Invalid value: "{name}": {text}',
                    }
                )
            if key == "configmaps" and name in seen and seen[name] != field:
                causes.append(
                    {
                        "reason": "FieldValueInvalid",
                        "field": f"{field}[{name}]",
                        "message": f'Invalid value: "{name}": duplicate of key present in {seen[name]}',
                    }
                )
            seen.setdefault(name, field)
    if total > MAX_DATA_BYTES:
        causes.append(
            {
                "reason": "FieldValueTooLong",
                "field": "data",
                "message": f"Too long: must have at most {MAX_DATA_BYTES} bytes",
            }
        )
    return causes
