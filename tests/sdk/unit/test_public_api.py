"""The public surface is exactly what rayqueue_sdk.__all__ lists, and every name resolves."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import rayqueue_sdk


def test_all_matches_export_table() -> None:
    assert sorted(rayqueue_sdk.__all__) == sorted(rayqueue_sdk._EXPORTS)
    assert len(rayqueue_sdk.__all__) == len(set(rayqueue_sdk.__all__))


def test_every_public_name_resolves_to_its_module() -> None:
    for name in rayqueue_sdk.__all__:
        obj = getattr(rayqueue_sdk, name)
        module = importlib.import_module(rayqueue_sdk._EXPORTS[name])
        assert getattr(module, name) is obj, name


def test_every_public_name_has_a_docstring_with_an_example() -> None:
    for name in rayqueue_sdk.__all__:
        doc = getattr(rayqueue_sdk, name).__doc__ or ""
        assert doc.strip(), f"{name} has no docstring"
        assert "Example" in doc or ">>>" in doc, f"{name}'s docstring has no example"


def test_unknown_attribute_raises_attribute_error() -> None:
    try:
        rayqueue_sdk.NoSuchThing  # noqa: B018
    except AttributeError as err:
        assert "NoSuchThing" in str(err)
    else:
        raise AssertionError("expected AttributeError")


def test_import_is_light() -> None:
    """Importing the package (and touching a public name) must not pull in heavy modules."""
    code = (
        "import sys, rayqueue_sdk; rayqueue_sdk.ConfigError; "
        "heavy = [m for m in ('ray', 'kubernetes', 'ipywidgets', 'pandas', 'rich') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


# What `from rayqueue_sdk import Cluster, ClusterConfiguration, RayJob` must leave unloaded (issue 29): the
# constructors need none of it. Third-party clients; the stdlib's asyncio (Ray's async log stream) and
# networking (the reaper agent's urllib); and our own paths that are loaded on first use (`# lazy:`).
_NOT_AT_CONSTRUCTOR_IMPORT = (
    "ray",
    "kubernetes",
    "ipywidgets",
    "IPython",
    "pandas",
    "rich",
    "yaml",
    "requests",
    "urllib3",
    "asyncio",
    "ssl",
    "urllib.request",
    "http.client",
    "rayqueue_sdk.scaling",  # the agent's source (shipped to the cluster) and the scale-to-zero code
    "rayqueue_sdk.kube",  # the API client, REST, watches
    "rayqueue_sdk.cluster.dashboard",
    "rayqueue_sdk.cluster.observe",
    "rayqueue_sdk.cluster.preflight",
    "rayqueue_sdk.cluster.wait",
    "rayqueue_sdk.queues.local_queues",
)


def test_the_three_classes_import_without_their_io_paths() -> None:
    """In a fresh interpreter, the classes of the first cell load none of :data:`_NOT_AT_CONSTRUCTOR_IMPORT`
    (a name covers its submodules), and the configuration's pydantic validator is not built yet
    (``defer_build``: it is built on first validation); building a Cluster and a RayJob offline keeps
    the I/O paths unloaded too."""
    code = (
        "import sys\n"
        "from rayqueue_sdk import Cluster, ClusterConfiguration, RayJob\n"
        f"names = {_NOT_AT_CONSTRUCTOR_IMPORT!r}\n"
        "def loaded():\n"
        "    return sorted(m for m in sys.modules if any(m == n or m.startswith(n + '.') for n in names))\n"
        "print(','.join(loaded()))\n"
        "print(ClusterConfiguration.__pydantic_complete__)\n"
        "Cluster(ClusterConfiguration(name='ws', local_queue='q')).to_dict()\n"
        "RayJob(job_name='j', entrypoint='python x.py', cluster_name='ws', namespace='ds').to_dict()\n"
        "print(','.join(loaded()))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    at_import, built, after_constructors = out.stdout.splitlines()
    assert at_import == "", f"imported with the three classes: {at_import}"
    assert built == "False", "ClusterConfiguration's validator was built at import (defer_build lost)"
    assert after_constructors == "", f"imported by the constructors: {after_constructors}"


def _type_checking_names() -> dict[str, str]:
    """Name -> module of the imports under ``if TYPE_CHECKING:`` in rayqueue_sdk/__init__.py."""
    tree = ast.parse(Path(rayqueue_sdk.__file__).read_text(encoding="utf-8"))
    names: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.module:
                    names.update({alias.name: stmt.module for alias in stmt.names})
    return names


def test_type_checkers_see_the_same_names_in_the_same_modules() -> None:
    assert _type_checking_names() == rayqueue_sdk._EXPORTS


def test_each_exported_module_imports_on_its_own() -> None:
    """The lazy facade hides no cycle: every module it names imports first, alone, in a fresh interpreter,
    and none of them imports the facade's lazy names back through ``rayqueue_sdk``."""
    for module in sorted(set(rayqueue_sdk._EXPORTS.values())):
        code = (
            f"import sys, {module}; facade = vars(sys.modules['rayqueue_sdk']); "
            "print(sorted(k for k in facade['_EXPORTS'] if k in facade))"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == "[]", (module, out.stdout)
