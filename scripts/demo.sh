#!/usr/bin/env bash
# Install rayqueue_sdk on a fresh machine and run the main job: the quickstart against the local control plane
# (a team queue, a user token, seed 001's workspace cluster with a real local Ray head, ray.init and remote tasks,
# a job through the job client, down). This is the README first command.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q -e ./local -e .
# Piped into a log (CI, `| tee`), rich would lay its tables out at 80 columns and break every cell; the
# tests run the quickstart at 120, and so does the demo when its output is not a terminal.
[ -t 1 ] || export COLUMNS="${COLUMNS:-120}"
exec python3 examples/quickstart.py "$@"
