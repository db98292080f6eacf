#!/usr/bin/env bash
# Set up everything the tests need on a fresh machine, then run the whole suite.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bash "$repo/scripts/setup.sh"
venv=${TRITONLENS_VENV:-$repo/.venv}
cd "$repo"
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider --durations=25 "$@"
