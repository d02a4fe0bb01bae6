#!/usr/bin/env bash
# The static checks CI runs before the tests (scripts/test.sh calls this; run it alone after
# `pip install -e ./local -e '.[dev]'`): ruff's lint over the whole tree (packages, tests, benchmarks,
# examples, the notebooks) and its format check over both packages and the tests, mypy over both
# packages (rayqueue_sdk's config/, manifests/ and admission/ at --strict, see pyproject), and the
# import contracts (layers, the two packages independent of each other, no cycles; see
# [tool.importlinter] in pyproject.toml). Every check runs; the script fails if any one failed.
set -uo pipefail
cd "$(dirname "$0")/.."

failed=()
run() {
  echo "+ $*"
  "$@" || failed+=("$*")
}

run ruff check .   # the whole tree: packages, tests, benchmarks, examples, docs/_gen, the notebooks
run ruff format --check src local/src tests
run mypy --strict src/rayqueue_sdk
run mypy local/src/rayqueue_local
run lint-imports --no-logo --no-cache

if ((${#failed[@]})); then
  printf 'lint failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "lint: all checks passed"
