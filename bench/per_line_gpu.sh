#!/usr/bin/env bash
# On the GPU host (device tool, carry [".whl", ".corpus"]): install tritonlens and its dependencies
# from .whl (here, first: `pip wheel --no-deps -w .whl .` beside the cp312 wheels), run
# bench/per_line_gpu.py on the examples and the projects in .corpus/gpu, and pack what it wrote into $OUT.
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
mkdir -p "$OUT/per_line"
python3 bench/per_line_gpu.py --out "$OUT/per_line/per_line_gpu.json" --reports "$OUT/per_line/reports" "$@" 2>&1 \
  | tee "$OUT/per_line/log.txt"
(cd "$OUT" && tar czf per_line.tgz per_line && rm -rf per_line)
