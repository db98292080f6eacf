#!/usr/bin/env bash
# The held-out optimize bench on every GPU of the host, one shard a GPU, then the merged table.
# Needs .corpus/ (bench/pack_corpus.sh) and, where tree-sitter is not installed, the wheels in .whl/
# installed first (the device command does it: pip install --target /tmp/site .whl/*.whl, then
# PYTHONPATH=/tmp/site). Everything lands in $OUT/heldout.tgz (shard JSON and logs, generated
# harnesses, bench/results-style optimize_heldout.json + .md); the table is printed last.
#
#     bash bench/optimize_heldout_gpu.sh [SETS]     # SETS: heldout,dev (default), heldout, dev
# env: DEADLINE_S (560: no shard runs past it), BUDGET_S (120: optimize's budget a kernel), ROUNDS (5),
#      STEMS (a,b: these TritonBench-G stems instead of SETS; pack them with EXTRA_STEMS),
#      PARTS/PART (1/0): split the sets into PARTS runs of one command each (about 3 kernels a GPU fit
#      in 560 s at BUDGET_S=120); run PART=0..PARTS-1, then merge all shard JSON files with
#      `python bench/optimize_heldout.py --merge shards/*.json` (no GPU needed).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
SETS=${1:-heldout,dev}
DEADLINE_S=${DEADLINE_S:-560}
BUDGET_S=${BUDGET_S:-120}
START=$(date +%s)
OUT=${OUT:-/tmp/tritonlens-heldout-out}
WORK=/tmp/tritonlens-heldout
rm -rf "$WORK"; mkdir -p "$WORK/shards" "$WORK/logs" "$WORK/results" "$OUT"
export TRITONLENS_CORPUS=$ROOT/.corpus
python3 -c "import tree_sitter, tree_sitter_python, torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" \
  || echo "tree-sitter missing: install the .whl wheels first"
NGPU=$(python3 -c "import torch; print(torch.cuda.device_count())")
[ -d .corpus ] || { echo "no .corpus/: run bench/pack_corpus.sh and carry .corpus"; exit 2; }
LEFT=$(( DEADLINE_S - ($(date +%s) - START) ))
echo "sets $SETS, part ${PART:-0} of ${PARTS:-1}, on $NGPU GPUs, ${LEFT} s left, optimize budget ${BUDGET_S} s a kernel"
PARTS=${PARTS:-1}; PART=${PART:-0}
if [ -n "${STEMS:-}" ]; then WHICH=(--stems "$STEMS"); else WHICH=(--set "$SETS"); fi
for ((i = 0; i < NGPU; i++)); do
  CUDA_VISIBLE_DEVICES=$i timeout -k 5 "$((LEFT + 5))" python3 bench/optimize_heldout.py "${WHICH[@]}" \
    --shard "$((PART * NGPU + i))/$((PARTS * NGPU))" --out "$WORK/shards" --work "$WORK/harnesses" --budget-s "$BUDGET_S" \
    --rounds "${ROUNDS:-5}" --deadline-s "$((LEFT - 10))" > "$WORK/logs/shard$i.log" 2>&1 &
done
wait
for ((i = 0; i < NGPU; i++)); do echo "-- shard $i: $(grep -c '^| ' "$WORK/logs/shard$i.log") rows, last line:"; tail -n 1 "$WORK/logs/shard$i.log" | cut -c1-300; done
python3 bench/optimize_heldout.py --merge "$WORK"/shards/*.json --results "$WORK/results" > "$WORK/table.md" 2>&1
tar -czf "$OUT/heldout.tgz" --exclude=./harnesses/inputs -C "$WORK" .
echo "elapsed $(( $(date +%s) - START )) s; $OUT/heldout.tgz $(du -k "$OUT/heldout.tgz" | cut -f1) KB"
cat "$WORK/table.md"
