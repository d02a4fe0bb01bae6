"""CRD ``pattern`` strings (Go RE2 syntax and meaning) as Python regular expressions.

Example:
    >>> import re
    >>> re.search(go_pattern("^[a-z]+$"), "abc\\n") is None
    True
"""

from __future__ import annotations

import re

__all__ = ["go_pattern"]

_INLINE_FLAGS = re.compile(r"\(\?([imsU]+)\)")


def go_pattern(pattern: str) -> str:
    """A Go (RE2) pattern in Python's syntax, with RE2's meaning.

    Inline flag groups such as ``^(?i)`` move to the front. An unescaped ``$`` outside a character
    class becomes ``\\Z``: in RE2 (without the ``m`` flag) ``$`` matches only at the end of the
    text, while Python's ``$`` also matches before a final newline, so ``^[a-z]+$`` would let the
    name ``"abc\\n"`` through.

    Example:
        >>> go_pattern("^(?i)[a-z]+$")
        '(?i)^[a-z]+\\\\Z'
        >>> go_pattern(r"^[$a]\\$$")
        '^[$a]\\\\$\\\\Z'
    """
    flags = "".join(m.group(1) for m in _INLINE_FLAGS.finditer(pattern)).replace("U", "")
    if flags:
        pattern = f"(?{''.join(sorted(set(flags)))})" + _INLINE_FLAGS.sub("", pattern)
    if "m" in flags or "$" not in pattern:
        return pattern
    out: list[str] = []
    escaped = in_class = False
    for ch in pattern:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "$":
            out.append("\\Z")
            continue
        out.append(ch)
    return "".join(out)
