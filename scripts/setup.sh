#!/usr/bin/env bash
# One-shot set-up for a fresh machine: a virtual environment with tritonlens and every extra,
# then the system pieces the tests use (scripts/setup.d/*.sh, each idempotent and cached
# outside the repository).
#   TRITONLENS_VENV   where the environment lives (default: .venv in the repository)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
venv=${TRITONLENS_VENV:-$repo/.venv}
py=${PYTHON:-python3}

if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
fi
# torch first, pinned: an unpinned torch pulls several GB of CUDA packages.
"$venv/bin/python" -c 'import torch' 2>/dev/null || "$venv/bin/python" -m pip install -q torch==2.13.0
# setuptools prints an information-only notice for every editable install with a path finder, as a
# warning; it says nothing about this project's configuration.
PYTHONWARNINGS="ignore:Editable installation" "$venv/bin/python" -m pip install -q -e "$repo[test]"

export TRITONLENS_VENV=$venv
for step in "$repo"/scripts/setup.d/*.sh; do
  [ -e "$step" ] || continue
  if [ "${TRITONLENS_SETUP_MINIMAL:-0}" = 1 ]; then break; fi
  echo "setup: $(basename "$step")"
  bash "$step"
done
echo "setup: environment ready in $venv"
