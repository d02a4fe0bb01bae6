#!/usr/bin/env python3
"""How much does ``import rayqueue_sdk`` add to a bare interpreter start? (target: <= 0.3 s)

Runs each command in a fresh interpreter, alternating them pair by pair (A B A B ...) so that drift in
the machine's speed hits both alike, and prints the medians, their difference and their ratio. For context
it also times ``import ray`` and ``import kubernetes`` (what the package must *not* import eagerly) and the
first use of the configuration classes (which loads pydantic).

With ``CODEFLARE_PYTHON`` set to an interpreter that has ``codeflare_sdk`` installed (e.g. a throwaway
venv: ``python3 -m venv /tmp/cfvenv && /tmp/cfvenv/bin/pip install codeflare-sdk==0.40.1``, or the one
tests/interop builds), it also runs the peer's imports and ours alternately (A B A B ...) and prints both
speed-ups side by side, each the median of the per-pair ratios, against its target: ``import`` >= 40x,
the three classes >= 15x.

Two things in the environment move these figures, and the output says which held:

- Bytecode. The children run without ``PYTHONDONTWRITEBYTECODE``, so the first (uncounted) run writes
  ``__pycache__`` for a source tree as ``pip install`` does for the peer; with that variable set and no
  bytecode, every run of ours would recompile ~50 modules (~30 ms) while the peer's wheel is compiled.
- Optional packages under the peer. Ray imports ``jsonschema``, which imports ``rfc3987_syntax`` when it is
  installed (Jupyter's ``jsonschema[format-nongpl]`` brings it); it builds a parser at import, seconds
  on a small machine. ``--peer-hide rfc3987_syntax`` runs the peer as if it were absent (``sys.modules``
  entry ``None``), so the ratio can be quoted both ways.

Usage:
    python3 benchmarks/bench_import.py [--runs 15] [--context-runs 5] [--peer-runs 10]
    CODEFLARE_PYTHON=/tmp/cfvenv/bin/python python3 benchmarks/bench_import.py --peer-only [--peer-hide M]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

BARE = "pass"
CANDIDATES = {
    "import rayqueue_sdk": "import rayqueue_sdk",
    "Cluster, ClusterConfiguration, RayJob": "from rayqueue_sdk import Cluster, ClusterConfiguration, RayJob",
}
# ray and kubernetes: what the package must not import eagerly; pydantic's BaseModel: the floor under
# the three classes (ClusterConfiguration is a pydantic model; its validator is built on first use).
CONTEXT = {
    "import kubernetes": "import kubernetes",
    "import ray": "import ray",
    "from pydantic import BaseModel": "from pydantic import BaseModel, Field",
}
# The children's environment: bytecode written and read as for an installed package (see above).
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def wall(code: str, python: str = sys.executable) -> float:
    start = time.perf_counter()
    quiet = subprocess.DEVNULL
    subprocess.run([python, "-c", code], check=True, stdout=quiet, stderr=quiet, env=CHILD_ENV)
    return time.perf_counter() - start


def hiding(code: str, modules: list[str]) -> str:
    """``code`` run as if ``modules`` were not installed (an import of one raises ImportError)."""
    if not modules:
        return code
    return f"import sys; sys.modules.update(dict.fromkeys({modules!r})); {code}"


# what: (ours, the peer's, the target speed-up)
PEER = {
    "import": ("import rayqueue_sdk", "import codeflare_sdk", 40.0),
    "Cluster, ClusterConfiguration, RayJob": (
        "from rayqueue_sdk import Cluster, ClusterConfiguration, RayJob",
        "from codeflare_sdk import Cluster, ClusterConfiguration, RayJob",
        15.0,
    ),
}


def against_peer(peer_python: str, runs: int, hide: list[str] | None = None) -> bool:
    """Ours and the peer's imports, all four commands interleaved run by run, so both ratios come from
    the same stretch of time; prints medians and the median per-pair speed-up of each, side by side.
    ``hide``: modules the peer runs without (see the module docstring). Returns whether every target
    was met."""
    hidden = f", the peer without {', '.join(hide)}" if hide else ""
    print(f"\nagainst codeflare_sdk ({peer_python}), {runs} interleaved runs of each{hidden}")
    for ours, theirs, _ in PEER.values():
        wall(ours), wall(hiding(theirs, hide or []), peer_python)  # warm the file cache, write bytecode
    times: dict[str, tuple[list[float], list[float]]] = {what: ([], []) for what in PEER}
    for _ in range(runs):
        for what, (ours, theirs, _) in PEER.items():
            times[what][0].append(wall(ours))
            times[what][1].append(wall(hiding(theirs, hide or []), peer_python))
    print(f"{'what':38} {'rayqueue_sdk':>13} {'codeflare_sdk':>14} {'speed-up':>9} {'target':>7}")
    met = True
    for what, (_, _, target) in PEER.items():
        a, b = times[what]
        speedup = statistics.median(y / x for x, y in zip(a, b, strict=True))
        met = met and speedup >= target
        print(
            f"{what:38} {statistics.median(a):12.3f}s {statistics.median(b):13.3f}s "
            f"{speedup:8.1f}x {target:6.0f}x {'met' if speedup >= target else 'MISSED'}"
        )
    return met


def paired(code: str, runs: int) -> tuple[float, float, float]:
    """Median seconds of ``code`` and of the bare interpreter, and the median of the per-pair ratios."""
    wall(code), wall(BARE)  # warm the file cache
    a, b = [], []
    for _ in range(runs):
        a.append(wall(code))
        b.append(wall(BARE))
    ratios = [x / y for x, y in zip(a, b, strict=True)]
    return statistics.median(a), statistics.median(b), statistics.median(ratios)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=15, help="paired runs for the package (default 15)")
    parser.add_argument("--context-runs", type=int, default=5, help="runs for ray/kubernetes (default 5)")
    parser.add_argument("--peer-runs", type=int, default=10, help="runs against codeflare_sdk (default 10)")
    parser.add_argument("--peer-only", action="store_true", help="only the comparison with codeflare_sdk")
    parser.add_argument(
        "--peer-hide",
        action="append",
        default=[],
        metavar="MODULE",
        help="run the peer as if MODULE were not installed (repeatable), e.g. rfc3987_syntax",
    )
    args = parser.parse_args()
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("(PYTHONDONTWRITEBYTECODE is set here; the children run without it, reading bytecode)")
    peer = os.environ.get("CODEFLARE_PYTHON")
    if args.peer_only:
        if not peer:
            parser.error("--peer-only needs CODEFLARE_PYTHON")
        return 0 if against_peer(peer, args.peer_runs, args.peer_hide) else 1
    print(f"python {sys.version.split()[0]}; wall seconds per fresh interpreter, medians of paired runs")
    print(f"{'command':40} {'median':>9} {'bare':>9} {'extra':>9} {'ratio':>7}  runs")
    rows = [(name, code, args.runs) for name, code in CANDIDATES.items()]
    rows += [(name, code, args.context_runs) for name, code in CONTEXT.items()]
    verdicts = []
    for name, code, runs in rows:
        med, bare, ratio = paired(code, runs)
        print(f"{name:40} {med:9.3f} {bare:9.3f} {med - bare:+9.3f} {ratio:6.2f}x  {runs}")
        if name == "import rayqueue_sdk":
            verdicts.append(f"import rayqueue_sdk adds {med - bare:.3f} s (target <= 0.300 s)")
    print("\n".join(verdicts))
    if peer:
        against_peer(peer, args.peer_runs, args.peer_hide)
    else:
        print("(set CODEFLARE_PYTHON to compare with codeflare_sdk side by side)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
