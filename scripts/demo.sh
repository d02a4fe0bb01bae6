#!/usr/bin/env bash
# Install rayqueue_sdk on a fresh machine and run the main job: the seed configurations rendered offline (until the
# local control plane lands, then the quickstart against it). This is the README first command.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q -e .
exec python3 examples/render_seeds.py "$@"
