"""The import graph of both packages: no cycle among modules, and no import inside a function except a
lazy import of a heavy third-party module, marked ``# lazy: why``.

``lint-imports`` (``[tool.importlinter]`` in pyproject.toml) checks the layers, the two packages'
independence and cycles between sibling packages; this test adds what those contracts cannot see: a cycle
that runs through a package's own ``__init__`` (``a -> a.b -> a``), and imports hidden inside functions,
which is how a cycle is usually dodged. ``TYPE_CHECKING`` imports never run and are not counted.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import grimp
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {
    "rayqueue_sdk": REPO_ROOT / "src" / "rayqueue_sdk",
    "rayqueue_local": REPO_ROOT / "local" / "src" / "rayqueue_local",
}
# Modules heavy enough to import only when first needed (a name covers its submodules). Cold import times
# measured on the project's machine: ray (seconds), kubernetes.client ~300 ms, ipywidgets ~340 ms,
# IPython.display ~310 ms, requests ~90 ms and urllib3 ~50 ms (kubernetes' transport), jsonschema ~65 ms
# and cryptography.x509 ~50 ms (rayqueue_local's schema checks and TLS), rich.console ~30 ms, yaml ~15 ms;
# and one stdlib module, importlib.metadata ~13 ms (email, zipfile, csv), read once for a version string.
LAZY_ALLOWED = frozenset(
    {
        "ray",
        "kubernetes",
        "ipywidgets",
        "IPython",
        "rich",
        "yaml",
        "requests",
        "urllib3",
        "jsonschema",
        "cryptography",
        "importlib.metadata",
        "kube_authkit",  # optional, the user's own: imported only to turn their AuthConfig into a client
    }
)
LAZY_MARK = "# lazy:"
# Own-module imports kept lazy for a command's start-up time, each named with its reason. Not a cycle
# dodge: the imported module does not import the importer.
START_UP_LAZY = {
    # `rayqueue` imports rayqueue_local.cli (its entry point) to list `local` in every invocation,
    # `rayqueue --help` included; the control plane (~0.2 s) loads only when `local up` runs.
    ("rayqueue_local/cli.py", "rayqueue_local.serve"),
    ("rayqueue_local/cli.py", "rayqueue_local.usercli"),
}


def _graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, exclude_type_checking_imports=True)


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # Iterative, so a deep graph cannot hit the recursion limit.
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges.get(node, ()):
                    found.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return found


def test_cycle_finder_finds_a_cycle() -> None:
    """The finder itself: a three-module loop and a self-import are found, a chain is not."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"a"}}) == [["a"]]
    assert _cycles({"a": {"b"}, "b": {"c"}}) == []


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_cycles(package: str) -> None:
    graph = _graph()
    modules = {m for m in graph.modules if m == package or m.startswith(package + ".")}
    edges = {m: {i for i in graph.find_modules_directly_imported_by(m) if i in modules} for m in modules}
    cycles = _cycles(edges)
    lines = []
    for component in cycles:
        lines.append("cycle: " + " <-> ".join(component))
        members = set(component)
        for importer in component:
            for imported in sorted(edges[importer] & members):
                for detail in graph.get_import_details(importer=importer, imported=imported):
                    lines.append(f"    {importer}:{detail['line_number']}  {detail['line_contents']}")
    assert not cycles, f"{len(cycles)} import cycle(s) in {package}:\n" + "\n".join(lines)


def _nested_imports(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, list[str], str]]:
    """Every import statement under a function or class body: the statement, the modules it names
    (``"."`` for a relative import) and the name of the outermost function or class around it."""

    def names(node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        return ["." if node.level else node.module or ""]

    def walk(node: ast.AST, outer: str) -> Iterator[tuple[ast.Import | ast.ImportFrom, list[str], str]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                continue  # never runs
            if outer and isinstance(child, ast.Import | ast.ImportFrom):
                yield child, names(child), outer
            scope = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            yield from walk(child, outer or (child.name if scope else ""))  # type: ignore[attr-defined]

    yield from walk(tree, "")


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _marked_lazy(lines: list[str], lineno: int) -> bool:
    """``# lazy:`` on the import's line, or on a line of the comment/import block right above it."""
    i = lineno - 1
    if LAZY_MARK in lines[i]:
        return True
    i -= 1
    while i >= 0:
        text = lines[i].strip()
        if not text.startswith(("#", "import ", "from ")):
            return False
        if LAZY_MARK in text:
            return True
        i -= 1
    return False


def _allowed(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in LAZY_ALLOWED)


def function_level_offenders(root: Path, package: str) -> list[str]:
    """``path:line  statement  (why)`` for each import inside a function or class that is not allowed.

    Allowed: a marked import of a module in :data:`LAZY_ALLOWED`; and, in a package's ``__init__.py``, a
    marked import of the package's own modules inside the module's ``__getattr__`` (PEP 562): the lazy
    facade that keeps ``import package`` cheap.
    """
    offenders = []
    for path in sorted(root.rglob("*.py")):
        source = path.read_text()
        lines = source.splitlines()
        for node, names, outer in _nested_imports(ast.parse(source, str(path))):
            where = f"{package}/{path.relative_to(root)}:{node.lineno}  {lines[node.lineno - 1].strip()}"
            facade = path.name == "__init__.py" and outer == "__getattr__"
            rel = f"{package}/{path.relative_to(root)}"
            unwanted = [
                n
                for n in names
                if not _allowed(n)
                and not (facade and n.split(".")[0] == package)
                and (rel, n) not in START_UP_LAZY
            ]
            if unwanted:
                offenders.append(f"{where}  (not a heavy third-party module: {', '.join(unwanted)})")
            elif not _marked_lazy(lines, node.lineno):
                offenders.append(f"{where}  (no '{LAZY_MARK} ...' comment)")
    return offenders


def test_offender_finder_tells_allowed_from_not(tmp_path: Path) -> None:
    """The checker: a marked ray import passes; an unmarked one, a stdlib one and an internal one fail."""
    (tmp_path / "m.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from pkg.other import X\n"
        "def ok():\n"
        "    # lazy: ray costs seconds\n"
        "    import ray\n"
        "    from ray import job_submission\n"
        "def unmarked():\n"
        "    import yaml\n"
        "def stdlib():\n"
        "    import json  # lazy: no\n"
        "    import importlib.metadata  # lazy: allowed\n"
        "    from importlib import import_module  # lazy: no\n"
        "def internal():\n"
        "    from pkg.other import Y  # lazy: no\n"
        "    from . import sibling\n"
        "def __getattr__(name):\n"
        "    from pkg.other import Z  # lazy: a facade only in __init__.py\n"
    )
    (tmp_path / "__init__.py").write_text(
        "def __getattr__(name):\n    from pkg.other import Z  # lazy: the facade\n    return Z\n"
    )
    found = function_level_offenders(tmp_path, "pkg")
    assert [line.split()[0] for line in found] == [
        "pkg/m.py:9",
        "pkg/m.py:11",
        "pkg/m.py:13",
        "pkg/m.py:15",
        "pkg/m.py:16",
        "pkg/m.py:18",
    ]


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_imports_inside_functions_are_marked_lazy_heavy_modules(package: str) -> None:
    offenders = function_level_offenders(PACKAGES[package], package)
    assert not offenders, f"{len(offenders)} import(s) inside functions in {package}:\n" + "\n".join(
        offenders
    )
