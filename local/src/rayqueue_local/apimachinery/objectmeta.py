"""Object metadata checks the API server makes for every resource, with upstream's messages.

:func:`name_causes` checks ``metadata.name`` (DNS-1123 subdomain or label, DNS-1035 label);
:func:`metadata_causes` checks label keys and values, annotation keys and size, and ownerReferences.

Example:
    >>> name_causes("Bad")[0]["message"][:38]
    'Invalid value: "Bad": a lowercase RFC '
"""

from __future__ import annotations

import re
from typing import Any

from rayqueue_local.apimachinery.fielderrors import json_type_name

__all__ = ["MAX_ANNOTATIONS_BYTES", "NAME_RULES", "metadata_causes", "name_causes"]


_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")
#: Name formats by rule: ``{rule: (pattern, maximum length, upstream's message)}``.
NAME_RULES: dict[str, tuple[re.Pattern[str], int, str]] = {
    "subdomain": (
        _DNS1123_SUBDOMAIN,
        253,
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
        "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
        r"validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ),
    "label": (
        re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z"),
        63,
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
        "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ),
    "dns1035": (
        re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z"),
        63,
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
        "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
        "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    ),
}
_NAME_PART_TEXT = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_LABEL_VALUE_TEXT = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
    "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
MAX_ANNOTATIONS_BYTES = 256 * 1024  # total size of keys and values, as upstream


def name_causes(name: str, rule: str = "subdomain", *, prefix: bool = False) -> list[dict[str, Any]]:
    """Causes for an invalid ``metadata.name`` (rule: ``subdomain``, ``label`` or ``dns1035``).

    ``prefix=True`` checks a ``metadata.generateName`` instead: upstream's ``maskTrailingDash`` lets a
    prefix end in ``-`` (random characters follow it).

    Example:
        >>> name_causes("ok-name"), name_causes("Bad")[0]["field"]
        ([], 'metadata.name')
        >>> name_causes("worker-", prefix=True), name_causes("Bad_", prefix=True)[0]["field"]
        ([], 'metadata.generateName')
    """
    pattern, max_len, text = NAME_RULES[rule]
    checked = name[:-1] + "a" if prefix and len(name) > 1 and name.endswith("-") else name
    problems = []
    if len(name) > max_len:
        problems.append(f"must be no more than {max_len} characters")
    if not pattern.match(checked):
        problems.append(text)
    if not problems:
        return []
    return [
        {
            "reason": "FieldValueInvalid",
            "field": "metadata.generateName" if prefix else "metadata.name",
            "message": f'Invalid value: "{name}": ' + ", ".join(problems),
        }
    ]


def _qualified_name_problems(key: str) -> list[str]:
    prefix, slash, name = key.rpartition("/")
    problems = []
    if slash and (not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix)):
        problems.append("prefix part " + NAME_RULES["subdomain"][2])
    if not name:
        problems.append("name part must be non-empty")
    else:
        if len(name) > 63:
            problems.append("name part must be no more than 63 characters")
        if not _NAME_PART.match(name):
            problems.append(_NAME_PART_TEXT)
    return problems


def metadata_causes(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """Causes for invalid labels, annotation keys, finalizers and ownerReferences, worded as upstream.

    Raises ``TypeError`` for a label or annotation value that is not a string (upstream fails to
    decode the body: 400 BadRequest).

    Example:
        >>> metadata_causes({"labels": {"app": "ray head"}})[0]["message"][:36]
        'Invalid value: "ray head": a valid l'
    """
    causes: list[dict[str, Any]] = []
    for field in ("labels", "annotations"):
        values = meta.get(field)
        if values is None:
            continue
        if not isinstance(values, dict):
            raise TypeError(f"metadata.{field} must be a map of strings")
        for key, value in values.items():
            if not isinstance(value, str):
                raise TypeError(
                    f"json: cannot unmarshal {json_type_name(value)} into Go struct field "
                    f"ObjectMeta.metadata.{field} of type string"
                )
            for problem in _qualified_name_problems(key):
                causes.append(
                    {
                        "reason": "FieldValueInvalid",
                        "field": f"metadata.{field}",
                        "message": f'Invalid value: "{key}": {problem}',
                    }
                )
            if field == "labels" and (len(value) > 63 or not _LABEL_VALUE.match(value)):
                text = "must be no more than 63 characters" if len(value) > 63 else _LABEL_VALUE_TEXT
                causes.append(
                    {
                        "reason": "FieldValueInvalid",
                        "field": "metadata.labels",
                        "message": f'Invalid value: "{value}": {text}',
                    }
                )
        if field == "annotations":
            size = sum(len(k) + len(v) for k, v in values.items())
            if size > MAX_ANNOTATIONS_BYTES:
                causes.append(
                    {
                        "reason": "FieldValueTooLong",
                        "field": "metadata.annotations",
                        "message": f"Too long: must have at most {MAX_ANNOTATIONS_BYTES} bytes",
                    }
                )
    finalizers = meta.get("finalizers") or []
    if not isinstance(finalizers, list) or not all(isinstance(f, str) for f in finalizers):
        raise TypeError(
            "json: cannot unmarshal into Go struct field ObjectMeta.metadata.finalizers of type []string"
        )
    for i, finalizer in enumerate(finalizers):
        # Upstream's ValidateFinalizerName: a qualified name ("kubernetes" and "example.com/x" alike).
        for problem in _qualified_name_problems(finalizer):
            causes.append(
                {
                    "reason": "FieldValueInvalid",
                    "field": f"metadata.finalizers[{i}]",
                    "message": f'Invalid value: "{finalizer}": {problem}',
                }
            )
    refs = meta.get("ownerReferences") or []
    controllers = []
    for ref in refs:
        for part, what in (("apiVersion", "version"), ("kind", "kind"), ("name", "name"), ("uid", "uid")):
            if not (ref.get(part) if isinstance(ref, dict) else None):
                causes.append(
                    {
                        "reason": "FieldValueInvalid",
                        "field": f"metadata.ownerReferences.{part}",
                        "message": f'Invalid value: "": {what} must not be empty',
                    }
                )
        if isinstance(ref, dict) and ref.get("controller"):
            controllers.append(f"{ref.get('kind')}/{ref.get('name')}")
    if len(controllers) > 1:
        causes.append(
            {
                "reason": "FieldValueInvalid",
                "field": "metadata.ownerReferences",
                "message": "Invalid value: []v1.OwnerReference: Only one reference can have Controller "
                f'set to true. Found "true" in references for {controllers[0]} and {controllers[1]}',
            }
        )
    return causes
