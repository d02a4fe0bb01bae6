"""Which Python the plane's processes run: always the plane's own interpreter *with its environment*.

A Ray head, an emulated pod's container and a job's ``python train.py`` must see the packages of the
environment that started the plane (a notebook's venv), whether that venv is activated or not.
Python finds its venv from the ``pyvenv.cfg`` next to (or one folder above) the path it was started
by, so a ``python`` *symlink* in another folder starts the base interpreter without the venv's
packages. Hence:

- :func:`write_python_shims` writes ``python`` and ``python3`` as tiny exec scripts
  (``exec /abs/venv/bin/python "$@"``): the interpreter starts by its own path and finds its venv;
- :func:`interpreter_path` puts them first on a ``PATH``, then the interpreter's own directory
  (``pip``, the venv's console scripts), then the inherited ``PATH``;
- :func:`ray_command` runs Ray's CLI with this interpreter (``python -m ray.scripts.scripts``),
  never a ``ray`` found on ``PATH`` (which may belong to another Python, e.g. the base one under a
  ``--system-site-packages`` venv), so Ray's workers run this interpreter too.

Example:
    >>> import subprocess, tempfile
    >>> path = interpreter_path(Path(tempfile.mkdtemp()) / "bin", "/usr/bin")
    >>> ask = ["python", "-c", "import sys; print(sys.prefix)"]
    >>> subprocess.run(ask, env={"PATH": path}, capture_output=True, text=True).stdout.strip() == sys.prefix
    True
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys
from pathlib import Path

from rayqueue_local.runtime.processes import ProcessStartError

__all__ = ["RayNotInstalledError", "interpreter_path", "ray_command", "write_python_shims"]

_SHIM_NAMES = ("python", "python3")


class RayNotInstalledError(ProcessStartError):
    """Ray cannot be imported by the plane's interpreter, so no local Ray head can start.

    Example:
        >>> str(RayNotInstalledError("/venv/bin/python"))
        "Ray is not installed for /venv/bin/python (pip install 'ray[default]')"
    """

    def __init__(self, interpreter: str) -> None:
        self.interpreter = interpreter
        super().__init__(f"Ray is not installed for {interpreter} (pip install 'ray[default]')")


def write_python_shims(bin_dir: Path) -> Path:
    """Write ``python`` and ``python3`` into ``bin_dir``: exec scripts that run *this* interpreter.

    Not symlinks: a link in another folder would start the base interpreter without the venv.
    Returns ``bin_dir``.

    Example:
        >>> import subprocess, tempfile
        >>> shims = write_python_shims(Path(tempfile.mkdtemp()) / "bin")
        >>> (shims / "python").is_symlink()
        False
        >>> ask = [str(shims / "python3"), "-c", "import sys; print(sys.prefix)"]
        >>> subprocess.run(ask, capture_output=True, text=True).stdout.strip() == sys.prefix
        True
    """
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n'
    for name in _SHIM_NAMES:
        shim = bin_dir / name
        if not shim.is_symlink() and shim.is_file() and shim.read_text() == script:
            continue
        partial = bin_dir / f".{name}.{os.getpid()}"
        partial.write_text(script)
        partial.chmod(0o755)
        # atomic, and replaces a link itself (not its target): nothing ever sees half a script
        partial.replace(shim)
    return bin_dir


def interpreter_path(bin_dir: Path, path: str) -> str:
    """``PATH`` for a process of the plane: the python shims, this interpreter's directory, ``path``.

    A job whose entrypoint says ``python train.py`` then runs this interpreter with its environment
    (a notebook's venv), activated or not; ``pip`` and the venv's scripts come next.

    Example:
        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp()) / "bin"
        >>> interpreter_path(d, "/usr/bin").split(os.pathsep) == [
        ...     str(d), str(Path(sys.executable).parent), "/usr/bin"]
        True
    """
    write_python_shims(bin_dir)
    return os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), path])


def ray_command() -> list[str]:
    """Ray's CLI run by this interpreter: ``[sys.executable, "-m", "ray.scripts.scripts"]``.

    Raises:
        RayNotInstalledError: this interpreter cannot import ``ray``.

    Example:
        >>> ray_command()[0] == sys.executable, ray_command()[1:]
        (True, ['-m', 'ray.scripts.scripts'])
    """
    if importlib.util.find_spec("ray") is None:
        raise RayNotInstalledError(sys.executable)
    return [sys.executable, "-m", "ray.scripts.scripts"]
