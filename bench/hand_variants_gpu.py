#!/usr/bin/env python3
"""What the best hand-written variant of each real-world-style kernel gains on a GPU, at its real size.

For each kernel in bench/realworld_style_kernels/: the original and every hand variant in
hand/<name>.py (the best first, then variants that split its gain into structure and launch
settings), timed with triton.testing.do_bench (warmup 25 ms, rep --rep-ms, median) in --rounds
interleaved rounds, the order rotated each round; the figure is the median over rounds. Before
timing, every variant's outputs are compared with the original's on the full real-size input, and
the original's with torch's (reference()).

% of roofline: the fewest bytes the kernel must move against a 1 GiB device-to-device copy timed
with do_bench in the same run (h100.md: 2.97 TB/s on the H100); the matmul's FLOPs against
torch.matmul on fp16 inputs of the same shape, timed in the same rounds.

    python bench/hand_variants_gpu.py [--only rope,embedding] [--rounds 5] [--out bench/results]
    python bench/hand_variants_gpu.py --cpu-smoke    # interpreter, small cases, correctness only
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import os
import sys
import time

import realworld_style_support as rw

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def check(name: str, orig, hand, case) -> dict:
    """Errors of the original against torch and of each variant against the original, on `case`."""
    fn, args = case[0], case[1]
    out = fn(*args)
    result = {"vs_reference": rw.vs_reference(orig, args, out), "variants": {}}
    wrapper = getattr(hand, fn.__name__)
    for vname, kw in hand.VARIANTS.items():
        try:
            result["variants"][vname] = rw.max_error(out, wrapper(*args, **kw))
        except Exception as exc:  # noqa: BLE001 - one variant that does not compile loses nothing else
            result["variants"][vname] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    tol = rw.tolerance(orig)
    result["ok"] = (result["vs_reference"] <= tol and all(isinstance(e, float) and e <= tol
                                                          for e in result["variants"].values()))
    return result


def cpu_smoke(only: set) -> int:
    failed = 0
    for name in rw.KERNELS:
        if only and name not in only:
            continue
        orig, hand = rw.load(name), rw.load(name, hand=True)
        for i, case in enumerate(rw.cases(orig)):
            t0 = time.monotonic()
            res = check(name, orig, hand, case)
            failed += not res["ok"]
            print(f"{name} case {i}: {'ok' if res['ok'] else 'WRONG'} vs torch {res['vs_reference']:.2g}; variants "
                  + ", ".join(f"{k}: {v if isinstance(v, str) else f'{v:.2g}'}" for k, v in res["variants"].items())
                  + f" ({time.monotonic() - t0:.1f} s)", flush=True)
    return 1 if failed else 0


def copy_tb_s(do_bench) -> float:
    import torch

    src = torch.empty(1 << 28, dtype=torch.float32, device="cuda").normal_()
    dst = torch.empty_like(src)
    ms = do_bench(functools.partial(dst.copy_, src), warmup=25, rep=100, return_mode="median")
    del src, dst
    torch.cuda.empty_cache()
    return 2 * (1 << 28) * 4 / (ms * 1e-3) / 1e12


def gpu(opts) -> int:
    import torch
    import triton
    from triton.testing import do_bench

    only = {x for x in opts.only.split(",") if x}
    report = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0),
              "torch": torch.__version__, "triton": triton.__version__,
              "timer": f"triton.testing.do_bench(warmup=25, rep={opts.rep_ms}, return_mode='median'), "
                       f"median of {opts.rounds} interleaved rounds",
              "copy_tb_s": copy_tb_s(do_bench), "kernels": []}
    timer = functools.partial(lambda f, rep: do_bench(f, warmup=25, rep=rep, return_mode="median"), rep=opts.rep_ms)
    for name in rw.KERNELS:
        if only and name not in only:
            continue
        t0 = time.monotonic()
        entry = {"kernel": name}
        try:
            orig, hand = rw.load(name), rw.load(name, hand=True)
            case = rw.cases(orig)[0]
            fn, args = case[0], case[1]
            entry["shapes"] = [list(a.shape) if isinstance(a, torch.Tensor) else a for a in args]
            entry["check"] = check(name, orig, hand, case)
            out = fn(*args)
            wrapper = getattr(hand, fn.__name__)
            sides = {"original": functools.partial(fn, *args)}
            for vname, kw in hand.VARIANTS.items():
                if isinstance(entry["check"]["variants"].get(vname), float):
                    sides[vname] = functools.partial(wrapper, *args, **kw)
            if orig.BOUND == "compute":
                a, w, scale = args
                b16 = (w.float() * scale.float()[None, :]).half()
                sides["cuBLAS (torch.matmul, fp16)"] = functools.partial(torch.matmul, a, b16)
            timed = rw.interleaved(sides, timer, opts.rounds)
            dot = (2 * args[0].shape[0] * args[0].shape[1] * args[1].shape[1]
                   / (timed["cuBLAS (torch.matmul, fp16)"]["ms"] * 1e-3) / 1e12) if orig.BOUND == "compute" else None
            for t in timed.values():
                t.update(rw.pct_of_roofline(orig, args, out, t["ms"], report["copy_tb_s"], dot or rw.H100_FP16_TFLOPS))
                t["speedup"] = timed["original"]["ms"] / t["ms"]
            entry["timed"] = timed
            best = next(iter(hand.VARIANTS))
            entry.update(best_hand=best, structural=hand.STRUCTURAL, ok=entry["check"]["ok"],
                         speedup=timed["original"]["ms"] / timed[best]["ms"] if best in timed else None,
                         pct_before=timed["original"]["pct"], pct_after=timed[best]["pct"] if best in timed else None)
            config_only = [t["speedup"] for k, t in timed.items() if "config only" in k]
            entry["best_config_only_speedup"] = max(config_only) if config_only else None
            entry["structural_gain"] = (entry["speedup"] / max(1.0, entry["best_config_only_speedup"] or 1.0)
                                        if entry["speedup"] else None)
            del args, out, sides, case
        except Exception as exc:  # noqa: BLE001 - one kernel's failure must not lose the others' figures
            entry["error"] = f"{type(exc).__name__}: {exc}"
        entry["seconds"] = round(time.monotonic() - t0, 1)
        torch.cuda.empty_cache()
        report["kernels"].append(entry)
        print(row(entry), flush=True)
        os.makedirs(opts.out, exist_ok=True)
        with open(os.path.join(opts.out, "hand_variants_gpu.json"), "w") as fh:
            json.dump(report, fh, indent=2, default=str)
    print(render(report))
    return 0


def row(e: dict) -> str:
    if e.get("error"):
        return f"| {e['kernel']} | error: {e['error'][:200]} | | | | | |"
    t = e["timed"]
    best = e["best_hand"]
    sg = e.get("structural_gain")
    return (f"| {e['kernel']} | {t['original']['ms'] * 1e3:.1f} | {t[best]['ms'] * 1e3:.1f} ({best}) | "
            f"{e['speedup']:.2f}x | {e['pct_before']:.0f}% → {e['pct_after']:.0f}% of {t[best]['versus']} | "
            f"{'–' if sg is None else f'{sg:.2f}x'} | {'ok' if e['ok'] else 'OUTPUTS DIFFER'} |")


def render(report: dict) -> str:
    title = (f"# hand variants on {report['gpu']} ({report['date']}, torch {report['torch']}, "
             f"triton {report['triton']})")
    header = ("| kernel | original µs | best hand µs | speedup | % of roofline | gain over the best config-only "
              "variant | outputs |")
    lines = [title, "", f"Timer: {report['timer']}; copy {report['copy_tb_s']:.2f} TB/s.", "", header,
             "|---|---|---|---|---|---|---|"]
    lines += [row(e) for e in report["kernels"]]
    lines.append("")
    for e in report["kernels"]:
        for k, t in (e.get("timed") or {}).items():
            lines.append(f"- {e['kernel']} / {k}: {t['ms'] * 1e3:.1f} µs, {t['speedup']:.2f}x, {t['pct']:.0f}%")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rep-ms", type=int, default=60)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--cpu-smoke", action="store_true", help="interpreter, small cases, correctness only")
    opts = ap.parse_args()
    if opts.cpu_smoke:
        os.environ["TRITON_INTERPRET"] = "1"
        return cpu_smoke({x for x in opts.only.split(",") if x})
    import torch

    if not torch.cuda.is_available():
        print("no GPU: use --cpu-smoke for the correctness checks", file=sys.stderr)
        return 2
    return gpu(opts)


if __name__ == "__main__":
    sys.exit(main())
