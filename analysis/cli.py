"""`tritonlens check`, `tritonlens rules`, `tritonlens rule ID`.

Exit codes (a contract other tools rely on): 0 nothing found, 1 findings, 2 usage errors.

`check` runs in pre-commit hooks on a few files at a time, so its start-up counts: the rules, the
engine and the grammar are imported only once a file that can hold a kernel is read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import gpus
from .file_walk import Walk, iter_python_files
from .prefilter import may_hold_kernels

MAX_FIX_PASSES = 5


def register(sub) -> None:
    p = sub.add_parser("check", help="analyze Triton kernels in files or folders")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    p.add_argument("--select", default="",
                   help="comma-separated rule ids or prefixes, or ALL (default: the rules `tritonlens rules` marks default)")
    p.add_argument("--ignore", default="", help="comma-separated rule ids or prefixes to skip")
    p.add_argument("--fix", action="store_true", help="apply the safe fixes in place")
    p.add_argument("--unsafe-fixes", action="store_true",
                   help="with --fix, also apply the fixes that change results or the launch (see each rule's page)")
    p.add_argument("--no-confirm", dest="confirm", action="store_false",
                   help="do not ask Triton's front end to confirm error findings; they print as unconfirmed warnings")
    p.add_argument("--gpu", default=gpus.DEFAULT_GPU, type=str.upper, choices=gpus.names(),
                   help="GPU the limits and estimates are judged against (default: %(default)s)")
    p.set_defaults(func=run_check)

    r = sub.add_parser("rules", help="list the rules")
    r.add_argument("--format", choices=("text", "json"), default="text")
    r.set_defaults(func=run_rules)

    d = sub.add_parser("rule", help="print the documentation of one rule")
    d.add_argument("code", metavar="ID")
    d.set_defaults(func=run_rule)


def _codes(text: str) -> list[str]:
    return [c.strip().upper() for c in text.split(",") if c.strip()]


def _validate(codes: list[str], flag: str) -> None:
    if not codes:
        return
    from .rules import RULES

    for c in codes:
        if c != "ALL" and not any(r.startswith(c) for r in RULES):
            raise SystemExit(f"tritonlens check: error: {flag} names unknown rule {c!r} (see `tritonlens rules`)")


def run_check(args: argparse.Namespace) -> int:
    select, ignore = _codes(args.select), _codes(args.ignore)
    try:
        _validate(select, "--select")
        _validate(ignore, "--ignore")
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return 2
    analyzer = None
    walk = Walk()
    errors = walk.errors
    results = []
    modules = {}  # path → model, for the files with error findings
    analyzed = 0
    for path in iter_python_files(args.paths, walk):
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            errors.append(f"{path}: not UTF-8 text, skipped")
            continue
        except OSError as exc:
            errors.append(f"{path}: cannot read ({exc.strerror or exc}), skipped")
            continue
        analyzed += 1
        if not may_hold_kernels(text):
            results.append((str(path), []))
            continue
        if analyzer is None:
            from .engine import Analyzer

            analyzer = Analyzer()
        result = analyzer.analyze(text, path=str(path), select=select, ignore=ignore, target=args.gpu)
        if args.fix:
            from .findings import apply_edits, fix_edits

            fixed = text
            for _ in range(MAX_FIX_PASSES):
                edits = fix_edits(result.findings, unsafe=args.unsafe_fixes)
                if not edits:
                    break
                fixed = apply_edits(fixed, edits)
                result = analyzer.analyze(fixed, path=str(path), select=select, ignore=ignore, target=args.gpu)
            hidden = sum(1 for f in result.findings if f.fix is not None and not f.fix.applicability.applies(args.unsafe_fixes))
            if hidden:
                print(f"{path}: {hidden} unsafe fix{'es' if hidden != 1 else ''} not applied (--unsafe-fixes applies them)",
                      file=sys.stderr)
            if fixed != text:
                try:
                    path.write_text(fixed, encoding="utf-8", newline="")
                    print(f"fixed {path}", file=sys.stderr)
                except OSError as exc:
                    errors.append(f"{path}: cannot write fixes ({exc.strerror or exc})")
        for e in result.errors:
            errors.append(f"{path}: internal error: {e}")
        results.append((str(path), result.findings))
        if any(f.severity.value == "error" for f in result.findings):
            modules[str(path)] = result.module
    if modules:
        results = _confirmed(results, modules, args.confirm)
    for e in errors:
        print(f"tritonlens: {e}", file=sys.stderr)
    if walk.skipped_line():
        print(f"tritonlens: {walk.skipped_line()}", file=sys.stderr)
    if analyzer is not None:  # rules ran: say which Triton API they read
        from .report import api_header

        print(f"tritonlens: {api_header()}", file=sys.stderr)
    if args.format != "text" or any(f for _, f in results):
        from .report import to_json, to_sarif, to_text
    if args.format == "json":
        print(to_json(results))
    elif args.format == "sarif":
        print(to_sarif(results, root=Path.cwd()))
    else:
        n = sum(len(f) for _, f in results)
        if n:
            print(to_text(results))
        print(f"{n} finding{'s' if n != 1 else ''} in {analyzed} file{'s' if analyzed != 1 else ''}", file=sys.stderr)
    if analyzed == 0 and errors:
        return 2
    return 1 if any(f for _, f in results) else 0


def _confirmed(results: list, modules: dict, confirm: bool) -> list:
    """Error findings put to Triton's front end, all files in one worker job: confirmed ones stay
    errors, refuted ones go, the others print as unconfirmed warnings (and so with --no-confirm)."""
    from tritonlens.profiling import confirm_errors as ce

    if not confirm:
        return [(p, ce.apply(fs, {}, default="not confirmed (--no-confirm)")) for p, fs in results]
    requests = {p: ce.prepare(fs, modules[p], p) for p, fs in results if p in modules}
    judged: dict = {}
    try:
        version, lowered = ce.lower_many(list(requests.values()))
        for request, answer in zip(requests.values(), lowered):
            judged.update(ce.judge(request, answer, version))
    except ce.LowerError as exc:
        for request in requests.values():
            judged.update(ce.judge(request, None, failure=f"Triton's front end could not be asked: {exc}"))
    finally:
        ce.shutdown()
    counts = {v: sum(1 for j in judged.values() if j.verdict is v) for v in ce.Verdict}
    if counts[ce.Verdict.REFUTED] or counts[ce.Verdict.INCONCLUSIVE]:
        print(f"tritonlens: Triton's front end confirmed {counts[ce.Verdict.CONFIRMED]} error finding(s), refuted "
              f"{counts[ce.Verdict.REFUTED]} (not shown) and could not decide {counts[ce.Verdict.INCONCLUSIVE]} "
              "(shown as unconfirmed warnings)", file=sys.stderr)
    return [(p, ce.apply(fs, judged, default="not confirmed") if p in modules else fs) for p, fs in results]


def run_rules(args: argparse.Namespace) -> int:
    from .rules import ALL_RULES, RULES

    if args.format == "json":
        import json

        print(json.dumps([{"id": r.id, "name": r.name, "severity": r.severity.value, "summary": r.summary,
                           "fix": r.fix_title, "doc": r.help_uri,
                           "fix_applicability": r.fix_applicability.value if r.fix_applicability else None,
                           "kind": "static" if r.id in RULES else "compile", "default": r.default,
                           "off_because": r.off_because or None}
                          for r in ALL_RULES.values()], indent=2))
        return 0
    for r in ALL_RULES.values():
        fix = f"  (fix: {r.fix_applicability.value})" if r.fix_applicability else ""
        why = f"; {r.off_because}" if r.off_because else ""
        off = "" if r.default else f"  (off by default: --select {r.id}{why})"
        print(f"{r.id}  {r.severity.value:<7}  {r.name:<34} {r.summary}{fix}{off}")
    return 0


def run_rule(args: argparse.Namespace) -> int:
    from .rules import ALL_RULES
    from .rules.rule_docs import page

    code = args.code.strip().upper()
    info = ALL_RULES.get(code)
    if info is None:
        print(f"tritonlens rule: unknown rule {args.code!r}; known: {', '.join(ALL_RULES)}", file=sys.stderr)
        return 2
    print(page(info), end="")
    return 0
