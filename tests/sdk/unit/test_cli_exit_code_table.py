"""The CLI's exit codes: one table keyed by error class, resolved through the MRO, covering every error."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import rayqueue_sdk
from rayqueue_sdk.cli.exit_codes import EXIT_CODES, MEANINGS, SUCCESS, code_for, exit_code
from rayqueue_sdk.errors import (
    ClusterNotFoundError,
    NotFoundError,
    PreemptedError,
    QueueNotFoundError,
    RayQueueError,
    TLSVerificationError,
    UnsupportedError,
)

README = Path(__file__).resolve().parents[3] / "README.md"


def _every_error_class() -> list[type[RayQueueError]]:
    for module in pkgutil.walk_packages(rayqueue_sdk.__path__, "rayqueue_sdk."):
        importlib.import_module(module.name)  # subclasses defined outside errors.py register themselves
    found: list[type[RayQueueError]] = []
    todo: list[type[RayQueueError]] = [RayQueueError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_every_rayqueue_error_maps_to_a_documented_failure_code() -> None:
    classes = _every_error_class()
    assert {"DashboardNotFoundError", "QueueNotFoundError", "JobFailedError"} <= {c.__name__ for c in classes}
    for cls in classes:
        code = code_for(cls)
        assert code in MEANINGS and code != SUCCESS, (cls, code)


def test_the_most_specific_class_wins() -> None:
    assert code_for(QueueNotFoundError) == code_for(ClusterNotFoundError) == EXIT_CODES[NotFoundError] == 3
    assert code_for(TLSVerificationError) == 7  # a ConnectionFailedError
    assert code_for(UnsupportedError) == code_for(RayQueueError) == 1  # no line of its own

    class Both(PreemptedError, NotFoundError):  # the MRO decides between two table entries
        pass

    assert code_for(Both) == 5
    assert exit_code(QueueNotFoundError("q", ["batch"])) == 3
    assert exit_code(KeyError("not ours")) == 1


def test_every_table_code_has_a_meaning_and_the_readme_agrees() -> None:
    assert set(EXIT_CODES.values()) <= set(MEANINGS)
    text = " ".join(README.read_text(encoding="utf-8").split())
    sentence = text[text.index("exit codes a pipeline can branch on") :].split(")")[0]
    documented = re.findall(r"(\d+) ([a-z ]+?)(?=[;,]|$)", sentence)
    assert len(documented) >= 5, sentence
    for code, words in documented:
        assert words.strip() in MEANINGS[int(code)], (code, words, MEANINGS.get(int(code)))


@pytest.mark.parametrize("code", sorted(MEANINGS))
def test_codes_fit_a_shell(code: int) -> None:
    assert 0 <= code < 256
