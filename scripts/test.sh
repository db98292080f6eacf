#!/usr/bin/env bash
# Set up everything the tests need on a fresh machine, then run the whole suite.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bash "$repo/scripts/setup.sh"
venv=${TRITONLENS_VENV:-$repo/.venv}
cd "$repo"
# Two workers (pytest-xdist), each test file whole on one of them, so that both cores work; then
# the code-server tests alone on the machine, one after another: a browser driving code-server
# beside the other worker's load misses its waits. With arguments: those tests, on two workers.
# TRITONLENS_TEST_WORKERS=0 runs in one process.
workers=${TRITONLENS_TEST_WORKERS:-2}
pytest=("$venv/bin/python" -m pytest -q -p no:cacheprovider --durations=25)
if [ "$#" -gt 0 ]; then
  exec "${pytest[@]}" -n "$workers" --dist loadfile "$@"
fi
status=0
"${pytest[@]}" -n "$workers" --dist loadfile --ignore=tests/vscode || status=$?
"${pytest[@]}" tests/vscode || status=$?
exit "$status"
