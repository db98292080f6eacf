"""`tritonlens profile FILE`: profile a file's kernels (text table per kernel, or JSON)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING

from . import plot_option

if TYPE_CHECKING:
    from tritonlens.profiling.worker.reports import ProfileReport


def register(sub) -> None:
    p = sub.add_parser("profile", help="profile the Triton kernels of a file (GPU, or interpreter without one)",
                       description="Run the file's harness (--harness, tritonlens_cases(), the launches "
                                   "recorded by `tritonlens capture`, test_* functions or its __main__ block) "
                                   "in a worker process, record every kernel launch and time it on the GPU; "
                                   "without a GPU, run Triton's interpreter and report no timings.")
    p.add_argument("file")
    p.add_argument("--kernel", help="only this kernel")
    p.add_argument("--backend", default="local", help="local (default), ssh://[user@]host[:port], ray, ray://HOST:PORT")
    p.add_argument("--ncu", action="store_true", help="also run Nsight Compute (ncu must be on the worker's PATH)")
    p.add_argument("--lines", action="store_true",
                   help="also sample where each kernel stalls, per source line (GPU and ncu needed; a separate "
                        "replay after the timing, its cost reported)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--harness", help="FILE.py::FUNCTION returning the cases to run")
    p.add_argument("--python", help="interpreter for the worker (needs torch + triton); default: this one")
    p.add_argument("--timeout", type=float, default=120, help="seconds per job (default 120)")
    plot_option.add_argument(p)
    p.set_defaults(func=run_profile)


def _fmt(value, spec="{:.3g}", none="-"):
    if value is None:
        return none
    return spec.format(value) if not isinstance(value, str) else value


def _time(ms):
    if ms is None:
        return "-"
    return f"{ms * 1000:.1f} us" if ms < 1 else f"{ms:.3f} ms"


def format_text(report: ProfileReport) -> str:
    dev = report.device or {}
    ceil = report.ceilings or {}
    lines = [f"{report.file}  backend={report.backend}  mode={report.mode}  device={dev.get('name', '?')}"]
    if ceil:
        lines.append(f"ceilings: copy {ceil.get('copy_gbps')} GB/s, matmul {ceil.get('matmul_tflops')} TFLOP/s"
                     f" (tf32 {ceil.get('matmul_tf32_tflops')})")
    if report.mode == "interpreter":
        lines.append("no GPU: kernels ran in Triton's interpreter; no timings (an interpreter time means nothing)")
    if report.source == "records":
        lines.append(f"no harness: replayed {len(report.cases)} recorded launch(es) on fresh data "
                     "(recorded shapes, dtypes, strides, grid and constexprs), the largest first")
    if report.error:
        lines.append(f"error: {report.error}")
    for case in report.cases:
        if not case.ok:
            lines.append(f"case failed: {case.label}: {case.error}")
    header = ("grid", "warps", "stages", "constexprs", "time", "GB/s", "TFLOP/s", "%peak", "bound", "regs",
              "spills", "smem")
    for k in report.kernels:
        lines.append("")
        lines.append(f"{k.name} (line {k.line})" + (f": {k.error}" if k.error else ""))
        if not k.launches:
            continue
        rows = [header]
        for launch in k.launches:
            grid = "x".join(str(g) for g in launch.grid) if launch.grid else "-"
            cx = ",".join(f"{a}={b}" for a, b in (launch.constexprs or {}).items()) or "-"
            rows.append((grid, _fmt(launch.num_warps, "{}"), _fmt(launch.num_stages, "{}"), cx,
                         _time(launch.time_ms), _fmt(launch.gbps, "{:.0f}"),
                         _fmt(launch.tflops, "{:.1f}"), _fmt(launch.pct_of_peak, "{:.0f}%"),
                         _fmt(launch.bound, "{}"), _fmt(launch.registers, "{}"),
                         _fmt(launch.spills, "{}"), _fmt(launch.shared_bytes, "{}")))
        widths = [max(len(str(r[i])) for r in rows) for i in range(len(header))]
        for r in rows:
            lines.append("  " + "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
        for launch in k.launches:
            if launch.more.get("tuning"):
                lines.append(f"  {launch.more['tuning']}")
            if launch.more.get("traffic"):
                lines.append(f"  GB/s not known: {launch.more['traffic']}")
            if launch.error:
                lines.append(f"  launch {launch.more.get('signature', '')}: {launch.error}")
            n = launch.ncu
            if n and n.error is None:
                stalls = ", ".join(f"{s.reason} {s.cycles_per_issue:.1f}" for s in n.stalls[:3])
                lines.append(f"  ncu: DRAM {_fmt(n.sol.dram_pct)}%  SM {_fmt(n.sol.sm_pct)}%  "
                             f"occupancy {_fmt(n.occupancy.achieved_pct)}% (limit: {n.occupancy.limiter})  "
                             f"regs {_fmt(n.registers_per_thread, '{:.0f}')}  "
                             f"tensor pipe {_fmt(n.tensor_pipe_pct)}%  stalls: {stalls or '-'}")
            elif n:
                lines.append(f"  ncu: {n.error.type}: {n.error.message}")
            lines.extend(line_samples_text(launch.lines))
    return "\n".join(lines)


def line_samples_text(profile) -> list[str]:
    """The hottest lines of a launch, under its table."""
    if profile is None:
        return []
    if profile.error is not None:
        return [f"  lines: {profile.error.type}: {profile.error.message}"]
    cost = f", sampling took {profile.cost_s:.1f} s" if profile.cost_s is not None else ""
    out = [f"  lines ({profile.total_samples} samples{cost}):"]
    for s in profile.hottest(5, 0.02):
        what = ", ".join(f"{i.kind} {100 * i.samples / s.samples:.0f}%" for i in s.instructions[:2])
        via = f"; inlined from {', '.join(s.via)}" if s.via else ""
        out.append(f"    line {s.line}: {s.label()} [{what}{via}]")
    return out


def harness_path(spec: str | None) -> str | None:
    """FILE.py::FUNC with FILE made absolute against the caller's folder: the worker that loads it
    runs in a folder of its own."""
    if not spec:
        return spec
    hfile, sep, func = spec.rpartition("::")
    if not sep or not hfile:
        return spec  # the worker says what is wrong with it
    return f"{os.path.abspath(os.path.expanduser(hfile))}::{func}"


def run_profile(args: argparse.Namespace) -> int:
    from tritonlens.profiling.api import ProfileError, profile_file

    try:
        plot = plot_option.target(args.file, args.plot)
    except plot_option.PlotError as exc:
        print(f"tritonlens profile: {exc}", file=sys.stderr)
        return 2
    try:
        result = profile_file(args.file, kernel=args.kernel, backend=args.backend, ncu=args.ncu,
                              python=args.python, harness=harness_path(args.harness), timeout=args.timeout,
                              lines=args.lines)
    except ProfileError as exc:
        print(f"tritonlens profile: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps(result.to_json(), indent=2, default=str))
    else:
        print(format_text(result))
    if args.lines and result.mode != "gpu":
        print("tritonlens profile: --lines samples on a GPU only; these kernels ran in Triton's interpreter, "
              "so no line was sampled", file=sys.stderr)
    if plot is not None and plot_option.write(plot, "tritonlens profile", result):
        return 2
    failed = result.error is not None or all(k.error for k in result.kernels)
    return 1 if failed else 0
