"""The ``x-kubernetes-validations`` (CEL) rules evaluated by their exact text.

There is no CEL interpreter here (out of scope for a test double). The rules the SDK's workflows can
meet are recognised by their text (:data:`KNOWN_RULES`, :data:`KNOWN_TRANSITION_RULES`, and
``self in ['a', ...]``) and evaluated as Python predicates; every other rule is skipped.
:func:`known_rules` finds them in a schema; :func:`check_rules` turns failures into causes.

Example:
    >>> KNOWN_TRANSITION_RULES["self == oldSelf"]("a", "b")
    False
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from rayqueue_local.apimachinery.fielderrors import field_path, json_type_name

__all__ = [
    "KNOWN_RULES",
    "KNOWN_TRANSITION_RULES",
    "Pred",
    "Rule",
    "TransitionPred",
    "check_rules",
    "known_rules",
]


# -- x-kubernetes-validations: the known rules ----------------------------------------------------------
#
# A rule is found at a structural path; "[]" steps stand for every element of a list (or value of a
# map). Transition rules (those reading oldSelf) run on updates only, and only where the path has no
# "[]" step (upstream correlates list elements by key; this does not).

#: A rule's check of one value (``self``).
Pred = Callable[[Any], bool]
#: A transition rule's check of (``self``, ``oldSelf``).
TransitionPred = Callable[[Any, Any], bool]


def _has(obj: Any, field: str) -> bool:
    return isinstance(obj, dict) and field in obj


def _cq_borrowing(spec: Any) -> bool:
    if _has(spec, "cohortName") or not _has(spec, "resourceGroups"):
        return True
    return all(
        not _has(r, "borrowingLimit")
        for rg in spec["resourceGroups"] or []
        for f in (rg or {}).get("flavors") or []
        for r in (f or {}).get("resources") or []
    )


#: rule text -> predicate on ``self`` (or on ``(self, oldSelf)`` for transition rules)
KNOWN_RULES: dict[str, Pred | TransitionPred] = {
    "!has(self.cohortName) && has(self.resourceGroups) ? self.resourceGroups.all(rg, rg.flavors.all(f, "
    "f.resources.all(r, !has(r.borrowingLimit)))) : true": _cq_borrowing,
    "!has(self.minReplicaCount) || self.minReplicaCount <= (has(self.maxReplicaCount) ? "
    "self.maxReplicaCount : 100)": lambda s: (
        not _has(s, "minReplicaCount")
        or s["minReplicaCount"] <= (s["maxReplicaCount"] if _has(s, "maxReplicaCount") else 100)
    ),
    "!has(self.priorityClassRef) || has(self.priority)": lambda s: (
        not _has(s, "priorityClassRef") or _has(s, "priority")
    ),
}
KNOWN_TRANSITION_RULES: dict[str, TransitionPred] = {
    "self == oldSelf": lambda s, o: bool(s == o),
    "!has(oldSelf.clusterName) || !has(self.clusterName) || oldSelf.clusterName == self.clusterName": (
        lambda s, o: (
            not _has(o, "clusterName") or not _has(s, "clusterName") or o["clusterName"] == s["clusterName"]
        )
    ),
}
_IN_LIST = re.compile(r"^self in \[((?:\s*'[^']*'\s*,?)*)\]\Z")


class Rule:
    """One evaluable ``x-kubernetes-validations`` rule at a structural path."""

    def __init__(self, path: tuple[str, ...], message: str, check: Any, transition: bool) -> None:
        self.path, self.message, self.check, self.transition = path, message, check, transition


def _rule_for(rule: dict[str, Any], path: tuple[str, ...]) -> Rule | None:
    text = " ".join(str(rule.get("rule", "")).split())
    message = rule.get("message") or f"failed rule: {text}"
    if text in KNOWN_TRANSITION_RULES:
        return Rule(path, message, KNOWN_TRANSITION_RULES[text], True) if "[]" not in path else None
    if text in KNOWN_RULES:
        return Rule(path, message, KNOWN_RULES[text], False)
    m = _IN_LIST.match(text)
    if m:
        allowed = re.findall(r"'([^']*)'", m.group(1))
        return Rule(path, message, lambda s, allowed=tuple(allowed): s in allowed, False)
    return None


def known_rules(schema: Any) -> list[Rule]:
    """The evaluable rules of a schema, with their structural paths.

    Example:
        >>> immutable = {"rule": "self == oldSelf", "message": "field is immutable"}
        >>> rules = known_rules({"properties": {"spec": {"properties": {"queue": {"type": "string",
        ...     "x-kubernetes-validations": [immutable]}}}}})
        >>> [(r.path, r.message, r.transition) for r in rules]
        [(('spec', 'queue'), 'field is immutable', True)]
    """
    found: list[Rule] = []

    def walk(node: Any, path: tuple[str, ...]) -> None:
        if not isinstance(node, dict):
            return
        for rule in node.get("x-kubernetes-validations") or ():
            compiled = _rule_for(rule, path)
            if compiled is not None:
                found.append(compiled)
        for name, sub in (node.get("properties") or {}).items():
            walk(sub, (*path, name))
        if isinstance(node.get("items"), dict):
            walk(node["items"], (*path, "[]"))
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], (*path, "[]"))

    walk(schema, ())
    return found


def _values_at(obj: Any, path: tuple[str, ...], where: tuple[Any, ...] = ()) -> Any:
    """``(concrete path, value)`` for every value at a structural path."""
    if not path:
        yield where, obj
        return
    step, rest = path[0], path[1:]
    if step == "[]":
        if isinstance(obj, list):
            for i, item in enumerate(obj):
                yield from _values_at(item, rest, (*where, i))
        elif isinstance(obj, dict):
            for k, item in obj.items():
                yield from _values_at(item, rest, (*where, k))
    elif isinstance(obj, dict) and step in obj:
        yield from _values_at(obj[step], rest, (*where, step))


def check_rules(rules: list[Rule], obj: dict[str, Any], old: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The causes (upstream's 422 entries) of the ``rules`` that ``obj`` breaks; transition rules only on an
    update (``old`` given).

    Example:
        >>> check_rules([], {"spec": {}}, None)
        []
    """
    causes: list[dict[str, Any]] = []
    for rule in rules:
        if rule.transition and old is None:
            continue
        for where, value in _values_at(obj, rule.path):
            try:
                if rule.transition:
                    found = [v for _w, v in _values_at(old, rule.path)]
                    ok = not found or rule.check(value, found[0])
                else:
                    ok = rule.check(value)
            except (TypeError, KeyError, AttributeError):
                ok = True  # a shape the rule does not expect: the schema check reports it
            if not ok:
                field = field_path(where)
                causes.append(
                    {
                        "reason": "FieldValueInvalid",
                        "field": field,
                        "message": f'Invalid value: "{json_type_name(value)}": {rule.message}',
                    }
                )
    return causes
