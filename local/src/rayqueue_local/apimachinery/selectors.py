"""Label and field selectors, parsed and matched as the Kubernetes API server does.

Label selectors (``labelSelector=``): equality ``a=b``, ``a==b``, ``a!=b``; set-based ``a in (x,y)``,
``a notin (x,y)``; existence ``a`` and ``!a``; requirements joined by commas are ANDed. ``a!=b`` and
``a notin (...)`` also match objects without the label, as upstream.

Field selectors (``fieldSelector=``): ``field=value``, ``field==value``, ``field!=value`` joined by
commas. Every resource supports ``metadata.name`` and ``metadata.namespace``; pods add
``status.phase`` and ``spec.nodeName``, events add ``involvedObject.*``, ``reason``, ``type`` and
``source``, secrets add ``type``. Any other field is rejected with upstream's
``field label not supported: <field>``.

Example:
    >>> sel = parse_label_selector("app=ray,tier in (head, worker),!legacy")
    >>> sel.matches({"app": "ray", "tier": "head"}), sel.matches({"app": "ray", "tier": "db"})
    (True, False)
    >>> parse_field_selector("metadata.name=x").matches("pods", {"metadata": {"name": "x"}})
    True
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rayqueue_local.errors import LocalControlPlaneError

__all__ = [
    "FieldSelector",
    "LabelSelector",
    "Requirement",
    "SelectorError",
    "match_selector_object",
    "parse_field_selector",
    "parse_label_selector",
]


class SelectorError(LocalControlPlaneError, ValueError):
    """A selector that does not parse (rendered as 400 BadRequest)."""


_KEY_RE = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?\Z"
)
_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")


@dataclass(frozen=True)
class Requirement:
    """One label requirement: ``key op values`` with op in ``= != in notin exists !``."""

    key: str
    op: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy this requirement."""
        present = self.key in labels
        if self.op == "exists":
            return present
        if self.op == "!":
            return not present
        if self.op in ("=", "in"):
            return present and labels[self.key] in self.values
        # "!=" and "notin" match a missing label too.
        return not present or labels[self.key] not in self.values


@dataclass(frozen=True)
class LabelSelector:
    """A parsed label selector (all requirements must hold).

    Example:
        >>> parse_label_selector("").matches({})
        True
    """

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Whether an object with ``labels`` is selected."""
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    @property
    def empty(self) -> bool:
        """True when the selector selects everything."""
        return not self.requirements


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise SelectorError(f"unable to parse requirement: unbalanced parenthesis in {text!r}")
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    if depth:
        raise SelectorError(f"unable to parse requirement: unbalanced parenthesis in {text!r}")
    parts.append("".join(current))
    return parts


_SET_RE = re.compile(r"^\s*(\S+)\s+(in|notin)\s*\((.*)\)\s*\Z")
_EQ_RE = re.compile(r"^\s*([^=!\s]+)\s*(==|!=|=)\s*(\S*)\s*\Z")


def _check_key(key: str) -> str:
    if not _KEY_RE.match(key) or len(key.rpartition("/")[2]) > 63:
        raise SelectorError(
            f"unable to parse requirement: values[0][{key}]: Invalid value: {key!r}: name part must "
            "consist of "
            "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
        )
    return key


def _check_value(value: str) -> str:
    if len(value) > 63 or not _VALUE_RE.match(value):
        raise SelectorError(
            f"unable to parse requirement: values[0][{value}]: Invalid value: {value!r}: a valid "
            "label must be an "
            "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and "
            "end with an "
            "alphanumeric character"
        )
    return value


def parse_label_selector(text: str | None) -> LabelSelector:
    """Parse a label selector string; raises :class:`SelectorError` on bad syntax.

    Example:
        >>> parse_label_selector("a!=b").matches({})
        True
    """
    if not text or not text.strip():
        return LabelSelector()
    reqs: list[Requirement] = []
    for part in _split_top_level(text):
        part = part.strip()
        if not part:
            raise SelectorError(f"unable to parse requirement: found '', expected: identifier in {text!r}")
        m = _SET_RE.match(part)
        if m:
            values = tuple(
                _check_value(v.strip()) for v in m.group(3).split(",") if v.strip() or m.group(3).strip()
            )
            if not values:
                raise SelectorError(
                    "unable to parse requirement: for 'in', 'notin' operators, values set can't be empty"
                )
            reqs.append(Requirement(_check_key(m.group(1)), m.group(2), values))
            continue
        m = _EQ_RE.match(part)
        if m:
            op = "!=" if m.group(2) == "!=" else "="
            reqs.append(Requirement(_check_key(m.group(1)), op, (_check_value(m.group(3)),)))
            continue
        if part.startswith("!"):
            reqs.append(Requirement(_check_key(part[1:].strip()), "!"))
            continue
        if " " not in part:
            reqs.append(Requirement(_check_key(part), "exists"))
            continue
        raise SelectorError(f"unable to parse requirement: couldn't parse the selector string {text!r}")
    return LabelSelector(tuple(reqs))


def match_selector_object(selector: Mapping[str, Any] | None, labels: Mapping[str, str] | None) -> bool:
    """Match a ``metav1.LabelSelector`` object (``matchLabels`` + ``matchExpressions``).

    ``None`` selects nothing; ``{}`` selects everything (upstream semantics).

    Example:
        >>> expr = {"key": "t", "operator": "In", "values": ["a"]}
        >>> match_selector_object({"matchExpressions": [expr]}, {"t": "a"})
        True
    """
    if selector is None:
        return False
    labels = labels or {}
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}
    for expr in selector.get("matchExpressions") or []:
        req = Requirement(expr["key"], ops[expr["operator"]], tuple(expr.get("values") or ()))
        if not req.matches(labels):
            return False
    return True


# -- field selectors ------------------------------------------------------------------------------------

_COMMON_FIELDS = ("metadata.name", "metadata.namespace")
_EXTRA_FIELDS: dict[str, tuple[str, ...]] = {
    "pods": (
        "status.phase",
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "status.podIP",
        "status.nominatedNodeName",
    ),
    "events": (
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    ),
    "secrets": ("type",),
    "namespaces": ("status.phase",),
}


def _field_value(key: str, obj: Mapping[str, Any], field: str) -> str:
    if key == "events" and field == "source":
        return str((obj.get("source") or {}).get("component", ""))
    cur: Any = obj
    for part in field.split("."):
        cur = cur.get(part) if isinstance(cur, Mapping) else None
        if cur is None:
            return ""
    return str(cur)


@dataclass(frozen=True)
class FieldSelector:
    """A parsed field selector: ``(field, op, value)`` terms, all of which must hold.

    Example:
        >>> FieldSelector((("metadata.name", "!=", "a"),)).matches("pods", {"metadata": {"name": "b"}})
        True
    """

    terms: tuple[tuple[str, str, str], ...] = ()

    def matches(self, key: str, obj: Mapping[str, Any]) -> bool:
        """Whether ``obj`` (of resource ``key``) is selected."""
        for field, op, value in self.terms:
            actual = _field_value(key, obj, field)
            if (actual == value) != (op == "="):
                return False
        return True

    def check_supported(self, key: str) -> None:
        """Raise :class:`SelectorError` for a field the resource does not index."""
        allowed = _COMMON_FIELDS + _EXTRA_FIELDS.get(key, ())
        for field, _op, _value in self.terms:
            if field not in allowed:
                raise SelectorError(f"field label not supported: {field}")

    def equals(self, field: str) -> str | None:
        """The value an ``=`` term requires for ``field``, if any (lets callers narrow a scan)."""
        for f, op, value in self.terms:
            if f == field and op == "=":
                return value
        return None

    @property
    def empty(self) -> bool:
        """True when the selector selects everything."""
        return not self.terms


def parse_field_selector(text: str | None, key: str | None = None) -> FieldSelector:
    """Parse a field selector; with ``key``, also reject fields that resource does not support.

    Example:
        >>> parse_field_selector("status.phase==Running", "pods").terms
        (('status.phase', '=', 'Running'),)
        >>> parse_field_selector("spec.foo=1", "pods")
        Traceback (most recent call last):
        ...
        rayqueue_local.apimachinery.selectors.SelectorError: field label not supported: spec.foo
    """
    if not text or not text.strip():
        return FieldSelector()
    terms: list[tuple[str, str, str]] = []
    for part in text.split(","):
        part = part.strip()
        m = _EQ_RE.match(part)
        if not m:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
        terms.append((m.group(1), "!=" if m.group(2) == "!=" else "=", m.group(3)))
    sel = FieldSelector(tuple(terms))
    if key is not None:
        sel.check_supported(key)
    return sel
