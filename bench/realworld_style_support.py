"""What bench/hand_variants_gpu.py and bench/optimize_realworld.py share about the kernels in
bench/realworld_style_kernels/: which there are, how to load an original, its hand variant or a
rewrite's text, and how two runs' outputs are compared on the full input.

Each kernel file there defines `tritonlens_cases()` (the first case is the real size on a GPU, a
small one on the CPU), `reference(*args)` (torch), `work(args, out)` (the fewest bytes it must
move, its FLOPs) and `BOUND`; its hand variant in hand/ defines a wrapper of the same name taking
launch settings as keywords, and `VARIANTS` (name -> keywords, the best first).
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL_DIR = os.path.join(HERE, "realworld_style_kernels")
# the row-wise kernels first, the matmul (the longest config search) last: a run cut short by its
# time budget loses the fewest of the kernels that start far from the roofline
KERNELS = ["rowwise_dequant", "embedding", "rope", "int8_quant", "logsumexp", "cross_entropy", "masked_select",
           "dequant_matmul"]

# h100.md, measured with do_bench on the H100 these benches run on: a 1 GiB copy, cuBLAS fp16 4096^3
H100_COPY_TB_S = 2.97
H100_FP16_TFLOPS = 714.0


def original_path(name: str) -> str:
    return os.path.join(KERNEL_DIR, f"{name}.py")


def load_path(path: str, module_name: str):
    spec = importlib.util.spec_from_file_location(module_name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = mod  # triton's jit looks its function's module up by name
    spec.loader.exec_module(mod)
    return mod


def load(name: str, hand: bool = False):
    folder = os.path.join(KERNEL_DIR, "hand") if hand else KERNEL_DIR
    return load_path(os.path.join(folder, f"{name}.py"), f"rw_{'hand_' if hand else ''}{name}")


def load_source(source: str, module_name: str):
    """A rewrite's text as a module: kept on disk until the process ends, since triton reads a
    kernel's source file again when it compiles it."""
    fd, path = tempfile.mkstemp(suffix=".py", prefix=f"{module_name}_")
    with os.fdopen(fd, "w") as fh:
        fh.write(source)
    return load_path(path, module_name)


def cases(mod) -> list:
    return [tuple(c) for c in mod.tritonlens_cases()]


def as_list(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def max_error(ref, out, int_slack: int = 0) -> float:
    """Worst disagreement over every output: integers and booleans must match to within `int_slack`
    (1.0 when they do not), floats as max |a - b| / max |ref| (NaN or shape differences: inf)."""
    import torch

    worst = 0.0
    refs, outs = as_list(ref), as_list(out)
    if len(refs) != len(outs):
        return float("inf")
    for r, o in zip(refs, outs):
        if not isinstance(r, torch.Tensor):
            worst = max(worst, 0.0 if r == o else float("inf"))
            continue
        if r.shape != o.shape or r.dtype != o.dtype:
            return float("inf")
        if not r.dtype.is_floating_point:
            same = torch.equal(r, o) if not int_slack else bool(((r.long() - o.long()).abs() <= int_slack).all())
            worst = max(worst, 0.0 if same else 1.0)
            continue
        rf, of = r.float(), o.float()
        if torch.isnan(rf).any() or torch.isnan(of).any():
            return float("inf")
        scale = float(rf.abs().max()) if rf.numel() else 1.0
        worst = max(worst, float((rf - of).abs().max()) / max(scale, 1e-12) if rf.numel() else 0.0)
    return worst


def vs_reference(mod, args, out) -> float:
    """The original's outputs against torch's: a module whose integer outputs torch cannot round
    exactly as Triton does says so in REFERENCE_INT_SLACK."""
    return max_error(mod.reference(*args), out, int_slack=getattr(mod, "REFERENCE_INT_SLACK", 0))


def tolerance(mod) -> float:
    """Relative error two correct runs may differ by: fp16 outputs and tl.dot (fp16 inputs) round
    at about 1e-3; fp32 reductions in another order at about 1e-6."""
    return 2e-2 if getattr(mod, "BOUND", "") == "compute" else 5e-3


def interleaved(sides: dict, timer, rounds: int) -> dict:
    """Median per side of `rounds` rounds, each timing every side once, the order rotated each
    round so no side always runs first (on a cooler GPU) or last."""
    names = list(sides)
    times = {k: [] for k in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for k in order:
            times[k].append(timer(sides[k]))
    return {k: {"ms": statistics.median(v), "rounds_ms": v} for k, v in times.items()}


def pct_of_roofline(mod, args, out, ms: float, copy_tb_s: float, dot_tflops: float) -> dict:
    w = mod.work(args, out)
    if getattr(mod, "BOUND", "memory") == "compute" and w.get("flops"):
        tflops = w["flops"] / (ms * 1e-3) / 1e12
        return {"pct": 100.0 * tflops / dot_tflops, "tflops": tflops, "versus": f"{dot_tflops:.0f} TFLOP/s"}
    tb_s = w["bytes"] / (ms * 1e-3) / 1e12
    return {"pct": 100.0 * tb_s / copy_tb_s, "tb_s": tb_s, "versus": f"copy {copy_tb_s:.2f} TB/s"}
