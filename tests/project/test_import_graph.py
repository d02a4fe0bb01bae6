"""The import graph of both packages: no cycle among modules, and no import inside a function unless it is
marked ``# lazy: <reason>`` with a reason: a heavy third-party module (:data:`LAZY_ALLOWED`), or one of the
package's own modules that is first used on a path most sessions never take (issue 29: the dashboard, the
scale-to-zero code and the job-log path load on first use, so ``from rayqueue_sdk import Cluster`` stays
cheap).

``lint-imports`` (``[tool.importlinter]`` in pyproject.toml) checks the layers, the two packages'
independence and cycles between sibling packages; this test adds what those contracts cannot see: a cycle
that runs through a package's own ``__init__`` (``a -> a.b -> a``), and imports hidden inside functions.
A lazy import is still an edge: grimp reads the imports inside functions too, so the cycle check below and
import-linter's layers see every lazy import (tested), and a lazy import cannot hide a cycle or a layer
breach. ``TYPE_CHECKING`` imports never run and are not counted.
"""

from __future__ import annotations

import ast
import sys
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
# and two stdlib modules, importlib.metadata ~13 ms (email, zipfile, csv), read once for a version string,
# and asyncio ~10 ms (issue 29), for following a job's logs.
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
        "asyncio",  # ~10 ms with ssl and socket: only where a job's logs are followed
        "kube_authkit",  # optional, the user's own: imported only to turn their AuthConfig into a client
        "matplotlib",  # optional (the plot extra), ~300 ms: only when a chart is drawn (display/charts.py)
        "moto",  # optional (the test extra): the S3 store of rayqueue_local.runtime.objectstore
        "werkzeug",  # moto's server, same
        "boto3",  # same: the store's bucket
    }
)
LAZY_MARK = "# lazy:"


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


def _lazy_reason(lines: list[str], node: ast.Import | ast.ImportFrom) -> str | None:
    """The reason after ``# lazy:`` on the import's own lines (a wrapped import's first or last line), or
    on a comment line of the comment/import block right above it (a reason too long for the line); ``None``
    where there is no mark, ``""`` where the mark names no reason."""

    def reason(text: str) -> str:
        return text.split(LAZY_MARK, 1)[1].strip()

    for i in range(node.lineno - 1, (node.end_lineno or node.lineno)):
        if LAZY_MARK in lines[i]:
            return reason(lines[i])
    i = node.lineno - 2
    while i >= 0:
        text = lines[i].strip()
        if not text.startswith(("#", "import ", "from ")):
            return None
        if text.startswith("#") and LAZY_MARK in text:
            return reason(text)  # a mark at the end of the import above covers that import only
        i -= 1
    return None


def _allowed(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in LAZY_ALLOWED)


def function_level_offenders(root: Path, package: str) -> list[str]:
    """``path:line  statement  (why)`` for each import inside a function or class that is not allowed.

    Allowed, each marked ``# lazy: <reason>`` with a non-empty reason: an import of a module in
    :data:`LAZY_ALLOWED`; an import of one of the package's own modules (absolute: a relative import is
    never lazy-loaded here); and, in a package's ``__init__.py``, an import of the package's own modules
    inside the module's ``__getattr__`` (PEP 562: the lazy facade that keeps ``import package`` cheap).
    """
    offenders = []
    for path in sorted(root.rglob("*.py")):
        source = path.read_text()
        lines = source.splitlines()
        for node, names, _outer in _nested_imports(ast.parse(source, str(path))):
            where = f"{package}/{path.relative_to(root)}:{node.lineno}  {lines[node.lineno - 1].strip()}"
            unwanted = [n for n in names if not _allowed(n) and n.split(".")[0] != package]
            reason = _lazy_reason(lines, node)
            if unwanted:
                offenders.append(
                    f"{where}  (neither a heavy third-party module nor our own: {', '.join(unwanted)})"
                )
            elif reason is None:
                offenders.append(f"{where}  (no '{LAZY_MARK} <reason>' comment)")
            elif not reason:
                offenders.append(f"{where}  ('{LAZY_MARK}' names no reason)")
    return offenders


def test_offender_finder_tells_allowed_from_not(tmp_path: Path) -> None:
    """The checker: a marked ray import and a reasoned import of our own module pass; an unmarked one, a
    mark with no reason, a stdlib one and a relative one fail."""
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
        "    from pkg.other import Y  # lazy: the dashboard path, first used once a cluster runs\n"
        "    from . import sibling  # lazy: relative\n"
        "    from pkg.other import Z\n"
        "    from pkg.other import W  # lazy:\n"
        "    from pkg.other import (  # lazy: wrapped, the mark on its first line\n"
        "        V,\n"
        "    )\n"
        "def __getattr__(name):\n"
        "    from pkg.other import Z  # lazy: a facade\n"
    )
    (tmp_path / "__init__.py").write_text(
        "def __getattr__(name):\n    from pkg.other import Z  # lazy: the facade\n    return Z\n"
    )
    found = function_level_offenders(tmp_path, "pkg")
    assert [line.split()[0] for line in found] == [
        "pkg/m.py:9",
        "pkg/m.py:11",
        "pkg/m.py:13",
        "pkg/m.py:16",
        "pkg/m.py:17",
        "pkg/m.py:18",
    ]
    assert "names no reason" in found[-1] and "no '# lazy: <reason>' comment" in found[-2]


def test_lazy_imports_are_edges_of_the_graph() -> None:
    """grimp counts an import inside a function as an edge, so the cycle check and import-linter's
    layers see lazy imports: ``Cluster`` loads the scale-to-zero code and the dashboard only on first
    use, and the graph still has both edges."""
    graph = _graph()
    for imported in ("rayqueue_sdk.scaling.policy", "rayqueue_sdk.cluster.dashboard"):
        assert graph.direct_import_exists(importer="rayqueue_sdk.cluster.cluster", imported=imported)
    assert graph.direct_import_exists(
        importer="rayqueue_sdk.scaling.policy", imported="rayqueue_sdk.scaling.agent"
    )


def test_cycle_check_sees_a_cycle_through_a_lazy_import(tmp_path: Path) -> None:
    """A cycle closed only by an import inside a function is still a cycle."""
    pkg = tmp_path / "lazycyc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from lazycyc import b\n")
    (pkg / "b.py").write_text("def f():\n    from lazycyc import a  # lazy: hides nothing\n")
    sys.path.insert(0, str(tmp_path))
    try:
        graph = grimp.build_graph("lazycyc", exclude_type_checking_imports=True, cache_dir=None)
    finally:
        sys.path.remove(str(tmp_path))
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    assert _cycles(edges) == [["lazycyc.a", "lazycyc.b"]]


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_imports_inside_functions_are_marked_lazy_heavy_modules(package: str) -> None:
    offenders = function_level_offenders(PACKAGES[package], package)
    assert not offenders, f"{len(offenders)} import(s) inside functions in {package}:\n" + "\n".join(
        offenders
    )
