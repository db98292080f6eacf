"""The table and summary of bench/optimize_heldout.py: one row per kernel file, merged from the
shards' JSON files.

Summary: improved (re-timed speedup >= 1.05x under the product's timer) over the kernels that start
below 40% of roofline; the geometric mean of the re-timed speedups over those and over all kernels
(a kernel with nothing accepted counts 1.0x); the slowest optimize; crashes; wrong accepts; files
with no harness.

    python bench/optimize_heldout.py --merge shard0.json shard1.json ... [--results bench/results]
"""

from __future__ import annotations

import json
import re
import math
import os

SLOW_START_PCT = 40.0
IMPROVED = 1.05


def geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def speedup(e: dict, timer: str) -> float | None:
    return ((e.get("timed") or {}).get(timer) or {}).get("speedup")


def _fmt(x, spec=".2f", suffix="") -> str:
    return "–" if x is None else f"{x:{spec}}{suffix}"


def row(e: dict) -> str:
    name = f"{e['kernel']} ({e.get('set', '')})"
    if e.get("skipped"):
        return f"| {name} | skipped: {e['skipped']} | | | | | | | |"
    if e.get("no_harness"):
        return f"| {name} | no harness: {' '.join(e['no_harness'].split())[:160]} | | | | | | | |"
    roof = e.get("roofline") or {}
    o = e.get("optimize") or {}
    crash = o.get("crash") or ""
    refused = o.get("refused") or ""
    err = e.get("error") or e.get("roofline_error") or ""
    best = (o.get("best") or {}).get("title") or ("–" if crash or refused else "none accepted")
    wrong = (e.get("outputs") or {}).get("wrong_accept")
    verdict = {True: "WRONG", False: "same", None: (e.get("outputs") or {}).get("note", "–")}[wrong] \
        if "wrong_accept" in (e.get("outputs") or {}) else "–"
    notes = "; ".join(x[:160] for x in (f"crash: {crash}" if crash else "", f"refused: {refused}" if refused else "",
                                         f"error: {err}" if err else "") if x)
    notes = " ".join(notes.split())  # a compiler's multi-line message would break the table's row
    return (f"| {name} | {_fmt(roof.get('pct'), '.0f', '%')} | {'yes' if roof.get('below40') else 'no' if roof else '–'} | "
            f"{_fmt(o.get('seconds'), '.0f', ' s')} | {best} | {_fmt((o.get('best') or {}).get('speedup'), '.2f', 'x')} | "
            f"{_fmt(speedup(e, 'product'), '.2f', 'x')} / {_fmt(speedup(e, 'do_bench'), '.2f', 'x')} | {verdict} | "
            f"{notes} |")


def summarise(kernels: list[dict]) -> dict:
    ran = [e for e in kernels if e.get("optimize")]
    slow = [e for e in ran if (e.get("roofline") or {}).get("below40")]

    def sp(e, timer="product"):
        if (e.get("outputs") or {}).get("wrong_accept"):
            return 1.0  # a wrong rewrite improves nothing: the user is left with the original
        return speedup(e, timer) or 1.0

    return {
        "kernels": len(kernels), "skipped": [e["kernel"] for e in kernels if e.get("skipped")],
        "no_harness": [e["kernel"] for e in kernels if e.get("no_harness")],
        "optimized": len(ran), "crashes": sum(1 for e in ran if e["optimize"].get("crash")),
        "originals_refused": [e["kernel"] for e in ran if e["optimize"].get("refused")],
        "errors": [e["kernel"] for e in kernels if e.get("error")],
        "wrong_accepts": [e["kernel"] for e in ran if (e.get("outputs") or {}).get("wrong_accept")],
        "max_optimize_s": max((e["optimize"]["seconds"] for e in ran), default=None),
        "below40": [e["kernel"] for e in slow],
        "improved_below40": sum(1 for e in slow if sp(e) >= IMPROVED),
        "improved_all": sum(1 for e in ran if sp(e) >= IMPROVED),
        "geomean_below40_product": geomean([sp(e) for e in slow]),
        "geomean_below40_do_bench": geomean([sp(e, "do_bench") for e in slow]),
        "geomean_all_product": geomean([sp(e) for e in ran]),
        "geomean_all_do_bench": geomean([sp(e, "do_bench") for e in ran]),
    }


HEADER = [("| kernel (set) | % of roofline | below 40% | optimize | best | product speedup | "
          "re-timed (product / do_bench) | full-input outputs | notes |"),
          "|---|---|---|---|---|---|---|---|---|"]


def render(merged: dict) -> str:
    lines = [f"# tritonlens optimize (config,rules) on held-out and development kernels, {merged.get('gpu')}", "",
             (f"{merged.get('date')}, torch {merged.get('torch')}, triton {merged.get('triton')}; "
              f"budget {merged.get('budget_s')} s a kernel; {merged.get('rounds')} interleaved rounds. % of roofline: "
              "the sum of the performance case's tensor arguments and returned tensors (an estimate of the fewest "
              "bytes it must move) against a 1 GiB copy, and for tl.dot files the perf script's FLOPs against "
              "torch.matmul, both under the product's timer.")]
    for name, s in merged["summaries"].items():
        ks = [e for e in merged["kernels"] if e.get("set") == name]
        lines += ["", f"## {name}", "", *HEADER, *[row(e) for e in ks], "",
                  (f"- improved (re-timed >= {IMPROVED}x, product timer): {s['improved_below40']} of "
                   f"{len(s['below40'])} below {SLOW_START_PCT:.0f}% of roofline; {s['improved_all']} of "
                   f"{s['optimized']} optimized"),
                  (f"- geomean re-timed speedup: below 40% {_fmt(s['geomean_below40_product'], '.2f', 'x')} (product), "
                   f"{_fmt(s['geomean_below40_do_bench'], '.2f', 'x')} (do_bench); all "
                   f"{_fmt(s['geomean_all_product'], '.2f', 'x')} (product), "
                   f"{_fmt(s['geomean_all_do_bench'], '.2f', 'x')} (do_bench)"),
                  (f"- slowest optimize {_fmt(s['max_optimize_s'], '.0f', ' s')}; crashes {s['crashes']}; originals "
                   f"it refused to verify {len(s.get('originals_refused', []))} "
                   f"{', '.join(s.get('originals_refused', []))}; wrong "
                   f"accepts {len(s['wrong_accepts'])} {', '.join(s['wrong_accepts'])}; errors "
                   f"{', '.join(s['errors']) or 'none'}; no harness {len(s['no_harness'])} of {s['kernels']}; skipped "
                   f"(deadline) {len(s['skipped'])}")]
    return "\n".join(lines) + "\n"


def scrub(entry: dict) -> dict:
    """What the results folder may keep of a kernel's entry: no rewritten source (the kernel is a
    third party's) and no path of the machine that ran it."""
    harness = entry.get("harness")
    if isinstance(harness, str) and "/" in harness:
        entry["harness"] = "bench/generated harness: " + os.path.basename(harness)
    o = entry.get("optimize") or {}
    if str(o.get("crash") or "").startswith("OptimizeError: "):  # shards from before run_optimize told them apart
        o["refused"], o["crash"] = o["crash"][len("OptimizeError: "):], None
    o.pop("best_source", None)
    if isinstance(o.get("best"), dict):
        o["best"].pop("diff", None)
    return _scrub_text(entry)


_PATHS = [(re.compile(r"/[\w./-]*/site-packages/"), "<site-packages>/"), (re.compile(r"/tmp/[\w.-]+"), "<tmp>")]


def _scrub_text(value):
    if isinstance(value, str):
        for pattern, repl in _PATHS:
            value = pattern.sub(repl, value)
        return value
    if isinstance(value, dict):
        return {k: _scrub_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub_text(v) for v in value]
    return value


def merge(paths: list[str], results: str) -> int:
    merged, kernels = {}, []
    for p in paths:
        try:
            with open(p) as fh:
                shard = json.load(fh)
        except (OSError, ValueError) as exc:
            print(f"skipped {p}: {exc}")
            continue
        for k in ("date", "gpu", "torch", "triton", "budget_s", "rounds", "product_timer"):
            merged.setdefault(k, shard.get(k))
        merged.setdefault("ceilings", {})[shard.get("shard", p)] = shard.get("ceilings")
        kernels += [scrub(e) for e in shard.get("kernels", [])]
    order = {"dev": 0, "tritonbench": 1, "heldout": 2}
    merged["kernels"] = sorted(kernels, key=lambda e: (order.get(e.get("set"), 3), e["kernel"]))
    sets = sorted({e.get("set") for e in kernels}, key=lambda s: order.get(s, 3))
    merged["summaries"] = {s: summarise([e for e in kernels if e.get("set") == s]) for s in sets}
    os.makedirs(results, exist_ok=True)
    with open(os.path.join(results, "optimize_heldout.json"), "w") as fh:
        json.dump(merged, fh, indent=2, default=str)
    text = render(merged)
    with open(os.path.join(results, "optimize_heldout.md"), "w") as fh:
        fh.write(text)
    print(text)
    return 0
