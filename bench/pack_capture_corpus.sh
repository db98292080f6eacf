#!/usr/bin/env bash
# Copy capture projects from the corpus cache into .corpus/gpu (git-ignored) so the device tool can
# carry them to a GPU host for bench/realworld_capture_gpu.sh: each project's source tree, tests and
# all, without files over 1 MB (pictures, data) that no test imports.
#
#     bash bench/pack_capture_corpus.sh NAME...   # names as in the cache's capture/src
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=${TRITONLENS_CORPUS:-$HOME/.cache/tritonlens-corpus}/capture/src
DST=$ROOT/.corpus/gpu
[ "$#" -gt 0 ] || { echo "usage: $0 NAME..." >&2; exit 2; }
mkdir -p "$DST"
for name in "$@"; do
  [ -d "$SRC/$name" ] || { echo "$name: not in $SRC" >&2; exit 1; }
  rm -rf "${DST:?}/$name"
  (cd "$SRC" && find "$name" -type f -size -1024k ! -path '*/__pycache__/*' ! -path '*/.git/*' -print0 |
    tar --null -T - -cf -) | tar -xf - -C "$DST"
done
echo "packed $# projects into .corpus/gpu ($(du -sm "$DST" | cut -f1) MB)"
