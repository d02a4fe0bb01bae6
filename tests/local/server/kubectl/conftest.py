"""Real kubectl against the suite's shared control plane (``cp``): the ``kubectl`` fixture.

kubectl is found with ``shutil.which``; scripts/test.sh installs Debian's ``kubernetes-client``
where none is present, so a missing kubectl fails the tests that need it (it is never skipped). Every
call uses the plane's own kubeconfig (``--kubeconfig``, never ``~/.kube/config``) and a discovery
and OpenAPI cache of its own (``--cache-dir``), so kubectl's cached documents are this plane's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest


@dataclass
class Kubectl:
    """Runs the real kubectl binary against one control plane."""

    binary: str
    kubeconfig: Path
    cache_dir: Path
    env: dict[str, str] = field(default_factory=dict)

    def run(
        self,
        *args: str,
        stdin: str | None = None,
        env: dict[str, str] | None = None,
        check: bool = True,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        """``kubectl <args>``; with ``check`` a non-zero exit fails the test with kubectl's output."""
        argv = [self.binary, "--kubeconfig", str(self.kubeconfig), "--cache-dir", str(self.cache_dir), *args]
        proc = subprocess.run(
            argv,
            input=stdin,
            capture_output=True,
            text=True,
            env={**self.env, **(env or {})},
            timeout=timeout,
            check=False,
        )
        if check and proc.returncode != 0:
            pytest.fail(f"kubectl {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
        return proc

    def json(self, *args: str) -> Any:
        """``kubectl <args> -o json``, decoded."""
        return json.loads(self.run(*args, "-o", "json").stdout)

    def fails(self, args: Sequence[str], stdin: str | None = None) -> str:
        """Run a command that must fail; returns its stderr."""
        proc = self.run(*args, stdin=stdin, check=False)
        assert proc.returncode != 0, f"kubectl {' '.join(args)} succeeded:\n{proc.stdout}"
        return proc.stderr


@pytest.fixture(scope="session")
def kubectl(cp: Any, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    """kubectl as the admin of ``cp``, with a private HOME and cache."""
    binary = shutil.which("kubectl")
    if binary is None:
        pytest.fail("kubectl is not installed: scripts/test.sh installs Debian's kubernetes-client")
    home = tmp_path_factory.mktemp("kubectl-home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")}
    env["HOME"] = str(home)
    return Kubectl(binary, Path(cp.kubeconfig_path), home / "cache", env)
