"""`tritonlens capture`: record the launches of a project's kernels into the project's records
(`.tritonlens/launches.jsonl`), which compile, profile and optimize then use as configurations.

    tritonlens capture src/pkg/ops/rms.py          # the tests that reach its kernels, until each is recorded
    tritonlens capture --all src/pkg/ops/rms.py    # all those tests, for every launch they make
    tritonlens capture -- pytest -k rms            # any command of the project
    tritonlens capture -- python train.py --steps 2
    tritonlens capture --backend ssh://gpu-box -- pytest tests/test_rms.py
    tritonlens capture --import-tritonparse trace.ndjson

Exit code 0 when at least one launch was recorded, 1 (with the reason) when none was.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def register(subparsers) -> None:
    p = subparsers.add_parser("capture", help="record kernel launches from the project's tests or any command "
                                              "(tritonlens capture -- pytest -k rms)")
    p.add_argument("path", nargs="?", default=".", help="a kernel file or a folder of the project (default: .)")
    p.add_argument("--tests", action="store_true", help="run the tests that reach PATH's kernels (the default "
                                                        "without a command)")
    p.add_argument("--all", dest="every_launch", action="store_true",
                   help="run every test found for PATH (default: stop once each of its kernels is recorded)")
    p.add_argument("--python", help="interpreter with torch + triton (+ pytest) to run the project in")
    p.add_argument("--backend", default="local", help="local (default) or ssh://[user@]host[:port]")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds the command may run (default 600)")
    p.add_argument("--import-tritonparse", metavar="TRACE", help="import a TritonParse trace file instead")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=run, cmd=[])
    parse = p.parse_known_args

    def split_command(args=None, namespace=None):
        # everything after the first "--" is the command, options included (`-- pytest -k rms`)
        args = list(sys.argv[1:] if args is None else args)
        cmd = []
        if "--" in args:
            at = args.index("--")
            args, cmd = args[:at], args[at + 1:]
        namespace, extra = parse(args, namespace)
        namespace.cmd = cmd
        return namespace, extra

    p.parse_known_args = split_command


def _summary(outcome) -> dict:
    res = outcome.result
    return {
        "root": str(outcome.root), "command": outcome.command, "origin": outcome.origin, "tests": outcome.tests,
        "mode": res.mode if res else None, "passed": res.passed if res else 0, "failed": res.failed if res else 0,
        "stopped": res.stopped if res else None,
        "kernels": outcome.kernels(), "recorded": len(outcome.recorded), "outside_project": outcome.outside,
        "kept": outcome.kept, "records": str(outcome.records_file), "error": outcome.error, "reason": outcome.reason,
        "cause": outcome.cause.to_json() if outcome.cause else None,
        "causes": [c.to_json() for c in outcome.causes],
    }


def _text(outcome) -> str:
    res = outcome.result
    lines = []
    if outcome.command:
        ran = f"ran `{' '.join(outcome.command)}`"
        if res is not None:
            ran += f" ({res.mode}"
            if res.passed or res.failed:
                ran += f"; {res.passed} passed, {res.failed} failed"
            ran += ")"
        lines.append(ran)
        if res is not None and res.stopped:
            lines.append(f"  stopped early: {res.stopped} (--all runs every test)")
    if outcome.error:
        lines.append(f"  worker: {outcome.error[:300]}")
    causes = outcome.causes
    if outcome.recorded and causes:
        lines.append(f"  tests that failed, and why ({len(causes)} file{'s' if len(causes) != 1 else ''}):")
        lines += [_cause_lines(c, "    ") for c in causes]
    elif res is not None and res.first_failure and outcome.recorded:
        lines.append(f"  first failure: {res.first_failure[:200]}")
    for name, count in sorted(outcome.kernels().items()):
        lines.append(f"  {name}: {count} distinct launch{'es' if count != 1 else ''}")
    if outcome.outside:
        lines.append(f"  {outcome.outside} launches of kernels outside the project were not kept")
    if outcome.recorded:
        n = len(outcome.recorded)
        lines.append(f"recorded {n} launch{'es' if n != 1 else ''}; {outcome.kept} kept in {outcome.records_file}")
    else:
        lines.append(f"nothing recorded: {outcome.reason}")
        if outcome.cause is not None and outcome.cause.fix and outcome.cause.fix not in outcome.cause.line:
            lines.append(f"  fix: {outcome.cause.fix}")
        others = [c for c in causes if outcome.cause is None or c.line != outcome.cause.line]
        if others:
            lines.append("  other failing test files:")
            lines += [_cause_lines(c, "    ") for c in others]
    return "\n".join(lines)


def _cause_lines(cause, indent: str) -> str:
    text = f"{indent}{cause.line}"
    if cause.fix and cause.fix not in cause.line:
        text += f"\n{indent}  fix: {cause.fix}"
    return text


def run(args) -> int:
    from tritonlens.profiling.project_capture import capture_command, capture_for_file

    if args.import_tritonparse:
        from tritonlens.profiling.tritonparse_import import TraceError, import_trace

        try:
            outcome = import_trace(args.import_tritonparse, Path(args.path))
        except TraceError as exc:
            print(f"tritonlens capture: {exc}", file=sys.stderr)
            return 1
    elif args.cmd:
        if args.tests or args.every_launch:
            print("tritonlens capture: --tests and --all run the tests found for PATH; give them or a command, "
                  "not both", file=sys.stderr)
            return 2
        outcome = capture_command(Path(args.path), args.cmd, python=args.python, backend=args.backend,
                                  timeout=args.timeout)
    else:
        if not Path(args.path).exists():
            print(f"tritonlens capture: no such file or folder: {args.path}", file=sys.stderr)
            return 2
        outcome = capture_for_file(args.path, python=args.python, backend=args.backend, timeout=args.timeout,
                                   every_launch=args.every_launch)
    if args.format == "json":
        print(json.dumps(_summary(outcome), indent=2))
    else:
        print(_text(outcome))
    return 0 if outcome.recorded else 1
