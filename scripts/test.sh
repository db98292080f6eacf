#!/usr/bin/env bash
# Set up everything the tests need on a fresh machine, then run the whole suite.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bash "$repo/scripts/setup.sh"
venv=${TRITONLENS_VENV:-$repo/.venv}
cd "$repo"
# Two workers (pytest-xdist), each test file whole on one of them: the module-scoped servers and
# clusters start once per file, and the two cores both work. TRITONLENS_TEST_WORKERS=0 runs them
# in this process, one after another.
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider --durations=25 \
  -n "${TRITONLENS_TEST_WORKERS:-2}" --dist loadfile "$@"
