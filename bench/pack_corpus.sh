#!/usr/bin/env bash
# Copy the corpus files the GPU bench needs into .corpus/ (git-ignored) so the device tool can
# carry them: the held-out TritonBench-G kernel files and their perf scripts (bench/heldout_set.py),
# perf_G/performance_utils.py, and liger-kernel's src/liger_kernel tree. The layout mirrors the
# cache's (sdist/geak_eval-*/geak_eval/data/TritonBench/..., sdist/liger_kernel-*/src/...) without
# geak-eval's package __init__ files, so a kernel file is imported by its file name; the held-out
# names go to .corpus/heldout.txt. EXTRA_STEMS="a b" packs non-held-out stems too (for --stems).
#
#     bash bench/pack_corpus.sh            # then: export TRITONLENS_CORPUS=$PWD/.corpus
#     HELDOUT_DRAW=third bash bench/pack_corpus.sh  # the third measure's held-out draw (first, next: spent)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=${TRITONLENS_CORPUS:-$HOME/.cache/tritonlens-corpus}
DST=$ROOT/.corpus
PY=${PYTHON:-python3}
TB=$(ls -d "$SRC"/sdist/geak_eval-*/geak_eval/data/TritonBench | tail -1)
GEAK=$(basename "$(dirname "$(dirname "$(dirname "$TB")")")")
LIGER=$(ls -d "$SRC"/sdist/liger_kernel-*/src/liger_kernel | tail -1)
LIGER_SDIST=$(basename "$(dirname "$(dirname "$LIGER")")")
rm -rf "$DST"
OUT_TB=$DST/sdist/$GEAK/geak_eval/data/TritonBench
mkdir -p "$OUT_TB/data/TritonBench_G_v1" "$OUT_TB/performance_metrics/perf_G/golden_metrics"
(cd "$ROOT/bench" && TRITONLENS_CORPUS=$SRC "$PY" -c \
  "import heldout_set; print('\n'.join(heldout_set.drawn()))") > "$DST/heldout.txt"
[ "$(wc -l < "$DST/heldout.txt")" -eq 24 ] || { echo "expected 24 held-out stems"; exit 1; }
for stem in $(cat "$DST/heldout.txt") ${EXTRA_STEMS:-}; do
  cp "$TB/data/TritonBench_G_v1/$stem.py" "$OUT_TB/data/TritonBench_G_v1/"
  cp "$TB/performance_metrics/perf_G/golden_metrics/${stem}_perf.py" "$OUT_TB/performance_metrics/perf_G/golden_metrics/"
done
cp "$TB/performance_metrics/perf_G/performance_utils.py" "$OUT_TB/performance_metrics/perf_G/"
mkdir -p "$DST/sdist/$LIGER_SDIST/src"
(cd "$(dirname "$LIGER")" && tar --exclude=__pycache__ -cf - liger_kernel) | tar -xf - -C "$DST/sdist/$LIGER_SDIST/src"
SIZE=$(du -sm "$DST" | cut -f1)
echo "packed $(ls "$OUT_TB/data/TritonBench_G_v1" | wc -l) TritonBench-G files and liger_kernel into .corpus/ (${SIZE} MB)"
[ "$SIZE" -lt 20 ] || { echo "over 20 MB"; exit 1; }
