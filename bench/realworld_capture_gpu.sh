#!/usr/bin/env bash
# On the GPU host (device tool, carry [".whl", ".corpus"]): install tritonlens and its dependencies
# from .whl (here, first: `pip wheel --no-deps -w .whl .` beside the cp312 wheels), then run bench/realworld_capture_gpu.py on the projects in
# .corpus/gpu (their .py and config files, copied from the corpus cache by bench/pack_capture_corpus.sh)
# and leave the results in $OUT. Arguments go to the bench (--held-out, --out).
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
python3 bench/realworld_capture_gpu.py --corpus .corpus/gpu --out "$OUT/realworld_capture_gpu.json" "$@" 2>&1 | tee "$OUT/log.txt"
