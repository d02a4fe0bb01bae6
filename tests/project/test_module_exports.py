"""Every module's ``__all__`` is honest, in both packages.

For each module (found with :mod:`pkgutil`): every public name it defines (a top-level function, class or
assignment whose name has no leading underscore) is in its ``__all__``; every name in ``__all__`` exists;
and every name it exports is documented: a function or class by its own docstring, a constant by a comment
(on its line, or heading its block of assignments), a string right below it, or its mention in the
module's docstring. A module's logger and type variables are plumbing, not public names. A name the module
imports and re-exports is documented where it is defined. The package facade ``rayqueue_sdk.__all__`` is
checked more closely in tests/sdk/unit/test_public_api.py.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest
from project_modules import all_modules

MODULES = all_modules()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The module's own statements, looking into top-level ``if``/``try`` (not ``if TYPE_CHECKING``)."""
    out: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                out += _top_level(node.body) + _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            out += _top_level(node.body) + _top_level(node.orelse) + _top_level(node.finalbody)
            for handler in node.handlers:
                out += _top_level(handler.body)
        else:
            out.append(node)
    return out


def _plumbing(node: ast.stmt) -> bool:
    """``log = logging.getLogger(...)`` and ``T = TypeVar(...)``: module plumbing, never exported."""
    value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return called in {"getLogger", "TypeVar", "ParamSpec"}


def _definitions(tree: ast.Module) -> dict[str, ast.stmt]:
    """Names the module binds itself (not by import), each with the statement that binds it; loggers and
    type variables left out."""
    found: dict[str, ast.stmt] = {}
    for node in _top_level(tree.body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        found[name.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found[node.target.id] = node
    return {name: node for name, node in found.items() if not _plumbing(node)}


def _documented_constant(name: str, node: ast.stmt, tree: ast.Module, lines: list[str]) -> bool:
    """A comment on the line or heading the block of assignments it stands in, a string right after it,
    or its name in the module's docstring."""
    if "#" in lines[node.lineno - 1]:
        return True
    i = node.lineno - 2
    while i >= 0 and lines[i].strip():
        text = lines[i].strip()
        if text.startswith("#"):
            return True
        if text.startswith(("def ", "class ", "@")):
            break
        i -= 1
    body = _top_level(tree.body)
    index = body.index(node) if node in body else -1
    if 0 <= index < len(body) - 1:
        following = body[index + 1]
        if isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant):
            return isinstance(following.value.value, str)
    return name in (ast.get_docstring(tree) or "")


def export_problems(name: str) -> list[str]:
    """What is wrong with module ``name``'s ``__all__`` (empty when nothing is)."""
    module = importlib.import_module(name)
    path = Path(inspect.getfile(module))
    source = path.read_text()
    tree = ast.parse(source, str(path))
    lines = source.splitlines()
    defined = _definitions(tree)
    public = sorted(n for n in defined if not n.startswith("_"))
    exported = getattr(module, "__all__", None)
    if exported is None:
        return [f"{name} defines {public} but has no __all__"] if public else []
    problems = []
    if len(set(exported)) != len(exported):
        problems.append(f"{name}.__all__ lists a name twice")
    missing = [n for n in public if n not in exported]
    if missing:
        problems.append(f"{name} defines public names not in __all__: {missing}")
    for export in exported:
        if not hasattr(module, export):
            problems.append(f"{name}.__all__ names {export!r}, which does not exist")
            continue
        node = defined.get(export)
        if node is None:
            continue  # imported and re-exported: documented where it is defined
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            documented = bool(ast.get_docstring(node))
        else:
            documented = _documented_constant(export, node, tree, lines)
        if not documented:
            problems.append(f"{name}.{export} has no docstring (or comment, for a constant)")
    return problems


def test_checker_finds_each_kind_of_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checker itself, over a module with one of each problem."""
    (tmp_path / "h4_exports_sample.py").write_text(
        '"""Sample. Mentions DOCUMENTED_IN_MODULE."""\n'
        "import logging\n"
        "from os import sep\n"
        '__all__ = ["f", "sep", "GOOD", "DOCUMENTED_IN_MODULE", "UNDOCUMENTED", "ghost", "C"]\n'
        "def f():\n"
        '    """Doc."""\n'
        "def g():\n"
        '    """Public, not exported."""\n'
        "def _private():\n"
        "    pass\n"
        "log = logging.getLogger(__name__)\n"
        "#: Documented constant.\n"
        "GOOD = 1\n"
        "\n"
        "DOCUMENTED_IN_MODULE = 2\n"
        "\n"
        "UNDOCUMENTED = 3\n"
        "class C:\n"
        "    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    problems = export_problems("h4_exports_sample")
    assert problems == [
        "h4_exports_sample defines public names not in __all__: ['g']",
        "h4_exports_sample.UNDOCUMENTED has no docstring (or comment, for a constant)",
        "h4_exports_sample.__all__ names 'ghost', which does not exist",
        "h4_exports_sample.C has no docstring (or comment, for a constant)",
    ]


@pytest.mark.parametrize("name", MODULES)
def test_module_all_is_honest(name: str) -> None:
    problems = export_problems(name)
    assert not problems, "\n".join(problems)
