"""`tritonlens optimize FILE`: propose rewrites, verify them in a worker, print or apply the best."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tritonlens.profiling.worker.reports import OptimizeReport


def register(subparsers) -> None:
    from tritonlens.profiling import plot_option

    from .llm_client import SYSTEM_ROLES, LLMSettings
    from .options import DEFAULT_BUDGET_S

    p = subparsers.add_parser("optimize", help="propose and verify faster rewrites of a kernel file",
                              description=__doc__)
    p.add_argument("file")
    p.add_argument("--kernel", help="only this kernel (default: every kernel of the file)")
    p.add_argument("--proposers", default="config,rules", help="comma list of config, rules, llm (default: config,rules)")
    p.add_argument("--llm-base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--llm-model", default="gpt-4o")
    p.add_argument("--llm-api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key")
    d = LLMSettings()
    p.add_argument("--llm-timeout", type=float, default=d.timeout, help=f"seconds per LLM request (default {d.timeout:g})")
    p.add_argument("--llm-candidates", type=int, default=d.candidates,
                   help=f"rewrites asked for concurrently each round, all verified, the best kept (default {d.candidates})")
    p.add_argument("--llm-max-tokens", type=int, default=0, help="token limit of one reply (default 0: the server's)")
    p.add_argument("--llm-token-budget", type=int, default=d.token_budget,
                   help=f"tokens one optimize may spend, 0 for no limit (default {d.token_budget})")
    p.add_argument("--llm-time-budget", type=float, default=d.time_budget_s,
                   help=f"seconds the LLM rounds may take, 0 for no limit (default {d.time_budget_s:g})")
    p.add_argument("--llm-system-role", choices=SYSTEM_ROLES, default=d.system_role,
                   help="auto: fold the system message into the user's when the server refuses it; "
                        "user: always fold; system: never (default auto)")
    p.add_argument("--llm-temperature", type=float, default=d.temperature)
    p.add_argument("--rounds", type=int, default=3,
                   help="LLM propose→verify rounds; after an accept each round tries to beat the best (default 3)")
    p.add_argument("--backend", default="local", help="local | ssh://[user@]host[:port] | ray | ray://HOST:PORT")
    p.add_argument("--python", help="interpreter that runs the kernels (needs torch + triton)")
    p.add_argument("--harness", help="FILE.py::FUNC yielding (fn, args) cases (default: the file's tritonlens_cases)")
    p.add_argument("--seeds", type=int, default=3, help="random inputs per shape (at least 3)")
    p.add_argument("--budget", type=float, default=DEFAULT_BUDGET_S, metavar="S",
                   help=f"seconds the whole optimize may take, the best rewrite proven by then is kept; the llm "
                        f"proposer's --llm-time-budget is added (default {DEFAULT_BUDGET_S:g}; 0: no limit)")
    p.add_argument("--lines-from", metavar="PROFILE.json",
                   help="per-line stall samples to guide the proposers and the LLM: the JSON of "
                        "`tritonlens profile FILE --lines --format json` (ignored, with a note, for a kernel edited since)")
    p.add_argument("--apply", action="store_true", help="write the best rewrite to FILE, when one was proven faster on a GPU")
    p.add_argument("--format", choices=("text", "json"), default="text")
    plot_option.add_argument(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from tritonlens.profiling import plot_option
    from tritonlens.profiling.cli import harness_path

    from .api import OptimizeError, optimize_file, proven
    from .options import OptimizeOptions, OptionsError

    proposers = [x.strip() for x in args.proposers.split(",") if x.strip()]
    llm = None
    if "llm" in proposers:
        if not args.llm_base_url and not os.environ.get(args.llm_api_key_env):
            print(f"tritonlens optimize: the llm proposer needs --llm-base-url or ${args.llm_api_key_env}",
                  file=sys.stderr)
            return 2
        llm = {"base_url": args.llm_base_url, "model": args.llm_model, "api_key_env": args.llm_api_key_env,
               "timeout": args.llm_timeout, "candidates": args.llm_candidates, "max_tokens": args.llm_max_tokens,
               "token_budget": args.llm_token_budget, "time_budget_s": args.llm_time_budget,
               "system_role": args.llm_system_role, "temperature": args.llm_temperature}
    for flag, value, least in (("--rounds", args.rounds, 1), ("--llm-candidates", args.llm_candidates, 1),
                               ("--llm-max-tokens", args.llm_max_tokens, 0),
                               ("--llm-token-budget", args.llm_token_budget, 0),
                               ("--llm-time-budget", args.llm_time_budget, 0)):
        if value < least:
            print(f"tritonlens optimize: {flag} must be at least {least}", file=sys.stderr)
            return 2

    def progress(message, fraction):
        if args.format == "text":
            print(f"  … {message}", file=sys.stderr)

    try:
        options = OptimizeOptions(proposers=tuple(proposers), kernel=args.kernel, llm=llm, rounds=args.rounds,
                                  backend=args.backend, python=args.python, harness=harness_path(args.harness),
                                  seeds=args.seeds, budget_s=args.budget)
    except OptionsError as exc:
        print(f"tritonlens optimize: {exc}", file=sys.stderr)
        return 2
    try:
        plot = plot_option.target(args.file, args.plot)
    except plot_option.PlotError as exc:
        print(f"tritonlens optimize: {exc}", file=sys.stderr)
        return 2
    hot_lines = []
    if args.lines_from:
        from .hot_lines import from_report, read_report

        try:
            hot_lines = from_report(read_report(args.lines_from), args.kernel)
        except ValueError as exc:
            print(f"tritonlens optimize: --lines-from: {exc}", file=sys.stderr)
            return 2
    try:
        result = optimize_file(args.file, options, progress=progress, hot_lines=hot_lines)
    except OptimizeError as exc:
        print(f"tritonlens optimize: {exc}", file=sys.stderr)
        usage = ("unknown proposer", "no kernel named", "needs settings", "bad llm settings")
        return 2 if any(u in str(exc) for u in usage) else 1
    profile = None  # the original's, for the picture: profiled before --apply rewrites the file
    if plot is not None:
        profile = plot_option.profile_original(result, "tritonlens optimize", kernel=args.kernel, backend=args.backend,
                                               python=args.python, harness=harness_path(args.harness))
    applied = False
    if args.apply and proven(result.best):
        with open(args.file, "w", encoding="utf-8") as fh:
            fh.write(result.best.source)
        applied = True
    elif args.apply:  # only a rewrite proven faster is written; the summary line says why not
        print(f"tritonlens optimize: {args.file} left as it is", file=sys.stderr)
    if args.format == "json":
        print(json.dumps({**result.to_json(), "applied": applied}, indent=2, default=str))
    else:
        print(render_text(result, applied))
    if plot is not None:
        return plot_option.write(plot, "tritonlens optimize", profile, [result])
    return 0


def render_text(result: OptimizeReport, applied: bool = False) -> str:
    from .api import summary

    out = [f"{os.path.basename(result.path)}: kernel {result.kernel} on {result.device} ({result.mode})"]
    if result.baseline_ms:
        out.append(f"baseline: {result.baseline_ms:.4g} ms")
    if result.mode == "interpreter":
        out.append("no GPU: candidates were checked for correctness only, not timed")
    for c in result.candidates:
        mark = "ACCEPTED" if c.accepted else "refused "
        speed = f"{c.speedup:.2f}x" if c.speedup else "  -  "
        err = f"{c.max_rel_error:.2g}" if c.max_rel_error not in (None, float("inf")) else "-"
        out.append(f"  [{mark}] {c.proposer:<6} {speed:>7}  err {err:<8} {c.title}")
        out.append(f"             {c.reason}")
    if result.best:
        best = result.best
        # nothing timed: the verdict's own words (on launch records: "correct, not timed: ...")
        out.append(f"best: {best.quick_fix_title}" if best.speedup else f"best: {best.title} — {best.reason}")
        out.append(result.best.diff.rstrip("\n"))
        if applied:
            out.append(f"applied to {result.path}")
    else:
        out.append("no rewrite accepted")
    if result.time_line:
        out.append(result.time_line)
    if result.seconds is not None:
        limit = f" of a {result.budget_s:g} s budget" if result.budget_s else ""
        out.append(f"took {result.seconds:g} s{limit}")
    for note in result.notes:
        out.append(f"note: {note}")
    out.append(f"result: {summary(result)}")  # last: the line a reader or a script looks for
    return "\n".join(out)
