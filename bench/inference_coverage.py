"""Share of assignments inside kernels whose block shape is fully inferred (every dimension known,
in every resolved configuration), and whose dtype is known; with the time the analysis takes.

Corpora: the project's examples/; real-world kernels shipped inside installed packages (read in
place, never copied into the repository): torch/sparse/_triton_ops.py and
torch/_native/ops/bmm_outer_product/triton_kernels.py from the torch wheel (PyTorch's own Triton
kernels for block-sparse matmul and bmm), torch/_inductor/runtime/triton_helpers.py (Inductor's
jit helpers); and any folders or files given on the command line, one corpus each (Python files
that mention triton, read in place).

Run: python bench/inference_coverage.py [PATH ...] → table + bench/results/inference_coverage.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.shapes import assignment_targets, infer_kernel

ROOT = Path(__file__).resolve().parents[1]
REAL_WORLD = ["sparse/_triton_ops.py", "_native/ops/bmm_outer_product/triton_kernels.py", "_inductor/runtime/triton_helpers.py"]


def coverage(path: Path) -> dict:
    text = path.read_text(encoding="utf-8", errors="replace")
    t0 = time.perf_counter()
    result = Analyzer().analyze(text)  # every rule: TL016–TL018 and the estimates' rules run the engine
    t_rules = time.perf_counter() - t0
    total = shape = dtype = 0
    for k in result.module.kernels:
        shapes = infer_kernel(result.module, k)
        runs = shapes.per_config or [shapes.symbolic]
        for stmt, target, name in assignment_targets(k):
            if stmt.type != "assignment":
                continue
            total += 1
            vals = [r.targets.get((target.start_byte, name)) for r in runs]
            shape += all(v is not None and v.shape_known for v in vals)
            dtype += all(v is not None and (v.dtype is not None or v.kind in ("dtype", "tuple")) for v in vals)
    shown = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else _short(path)
    return {"file": shown, "kernels": len(result.module.kernels), "assignments": total, "shape_inferred": shape,
            "dtype_inferred": dtype, "ms": round((time.perf_counter() - t0) * 1e3, 1), "rules_ms": round(t_rules * 1e3, 1)}


def _short(path: Path) -> str:
    if "/torch/" in str(path):
        return "torch/" + str(path).split("/torch/", 1)[-1]
    return "/".join(path.parts[-3:])


def _real_world() -> list[Path]:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return []
    base = Path(next(iter(spec.submodule_search_locations)))
    return [base / p for p in REAL_WORLD if (base / p).is_file()]


def _triton_files(path: Path) -> list[Path]:
    files = [path] if path.is_file() else sorted(path.rglob("*.py"))
    return [f for f in files if "triton" in f.read_text(encoding="utf-8", errors="replace")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", type=Path, help="more corpora: folders or files, read in place")
    args = ap.parse_args(argv)
    corpora = {"examples": sorted((ROOT / "examples").glob("*.py")), "real-world (torch wheel)": _real_world()}
    for p in args.paths:
        corpora[p.name or str(p)] = _triton_files(p)
    out = {}
    print(f"{'corpus':28} {'files':>5} {'kernels':>7} {'assigns':>7} {'shape %':>8} {'dtype %':>8} {'seconds':>8}")
    for name, files in corpora.items():
        rows = [coverage(f) for f in files]
        a = sum(r["assignments"] for r in rows)
        s = sum(r["shape_inferred"] for r in rows)
        d = sum(r["dtype_inferred"] for r in rows)
        k = sum(r["kernels"] for r in rows)
        secs = sum(r["ms"] for r in rows) / 1e3
        out[name] = {"files": rows, "assignments": a, "shape_share": s / a if a else None,
                     "dtype_share": d / a if a else None, "seconds": round(secs, 2)}
        print(f"{name:28} {len(rows):>5} {k:>7} {a:>7} {100 * s / max(a, 1):>7.1f}% {100 * d / max(a, 1):>7.1f}% "
              f"{secs:>8.2f}")
    res = ROOT / "bench" / "results"
    res.mkdir(parents=True, exist_ok=True)
    (res / "inference_coverage.json").write_text(json.dumps(out, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
