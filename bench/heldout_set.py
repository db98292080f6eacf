"""The optimize benchmark's two sets, fixed before any tuning on code nobody here wrote.

- Held out: a seeded sample of the TritonBench-G kernel files that geak-eval ships
  (`geak_eval/data/TritonBench/data/TritonBench_G_v1/*.py`), each with its benchmark-size input
  script (`performance_metrics/perf_G/golden_metrics/<stem>_perf.py`). The sample is drawn from the
  sorted file names alone, so choosing it reads no kernel. Nobody tunes on these files: they are
  looked at only when the held-out figures are reported.
- The first and second draws were read when their figures were reported; `third_held_out()`
  (HELDOUT_DRAW=third) is the next measure's, drawn the same way from what they and the
  development sample left, before any further tuning.
- Development: liger-kernel's source distribution (kernels under `src/`, sizes from its
  `benchmark/` scripts), and the eight kernels of our own under bench/realworld_style_kernels/.

The corpus lives in a cache outside the repository (TRITONLENS_CORPUS, default
~/.cache/tritonlens-corpus), fetched with `pip download --no-deps --no-binary :all: geak-eval
liger-kernel` and unpacked under `sdist/`.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

SEED = 27
NEXT_SEED = 28  # the next measure's draw: the first was read when it was reported
HELD_OUT_SIZE = 24
CACHE = Path(os.environ.get("TRITONLENS_CORPUS", Path.home() / ".cache" / "tritonlens-corpus"))
TRITONBENCH = "geak_eval/data/TritonBench"


def tritonbench_root(cache: Path = CACHE) -> Path:
    found = sorted((cache / "sdist").glob(f"geak_eval-*/{TRITONBENCH}"))
    if not found:
        raise SystemExit(f"geak-eval is not unpacked under {cache / 'sdist'}: "
                         "pip download --no-deps --no-binary :all: geak-eval, then untar it there")
    return found[-1]


def paired_stems(root: Path) -> list[str]:
    """Kernel files that have a benchmark-size input script, by stem, sorted."""
    kernels = {p.stem for p in (root / "data" / "TritonBench_G_v1").glob("*.py")}
    perf = {p.name[: -len("_perf.py")] for p in (root / "performance_metrics" / "perf_G" / "golden_metrics")
            .glob("*_perf.py")}
    return sorted(kernels & perf)


def held_out(root: Path | None = None) -> list[str]:
    """The held-out stems: a seeded sample of the paired files, drawn from their names only."""
    stems = paired_stems(root or tritonbench_root())
    return sorted(random.Random(SEED).sample(stems, min(HELD_OUT_SIZE, len(stems))))


def next_held_out(root: Path | None = None) -> list[str]:
    """The next held-out stems: drawn the same way from the paired files the first draw left."""
    root = root or tritonbench_root()
    used = set(held_out(root))
    stems = [s for s in paired_stems(root) if s not in used]
    return sorted(random.Random(NEXT_SEED).sample(stems, min(HELD_OUT_SIZE, len(stems))))


DEV_SEED = 29


def development_sample(n: int = 20, root: Path | None = None) -> list[str]:
    """TritonBench-G files for development (read freely, run in the interpreter): drawn by seed from
    those neither held-out draw took. A later held-out draw must leave them out."""
    root = root or tritonbench_root()
    used = set(held_out(root)) | set(next_held_out(root))
    stems = [s for s in paired_stems(root) if s not in used]
    return sorted(random.Random(DEV_SEED).sample(stems, min(n, len(stems))))


THIRD_SEED = 30


def third_held_out(root: Path | None = None) -> list[str]:
    """The third measure's held-out stems, drawn by seed from the paired files that neither earlier
    draw nor the development sample took (both draws were read when they were reported)."""
    root = root or tritonbench_root()
    used = set(held_out(root)) | set(next_held_out(root)) | set(development_sample(root=root))
    stems = [s for s in paired_stems(root) if s not in used]
    return sorted(random.Random(THIRD_SEED).sample(stems, min(HELD_OUT_SIZE, len(stems))))


DRAWS = {"first": held_out, "next": next_held_out, "third": third_held_out}


def drawn(which: str | None = None) -> list[str]:
    """The held-out stems of a draw by name (HELDOUT_DRAW): "first" and "next" (both reported
    2026-11-27, now development data) or "third"."""
    which = which or os.environ.get("HELDOUT_DRAW", "first")
    if which not in DRAWS:
        raise SystemExit(f"HELDOUT_DRAW: one of {', '.join(DRAWS)}, got {which!r}")
    return DRAWS[which]()
