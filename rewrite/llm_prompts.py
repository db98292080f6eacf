"""What the model is told: the task, the file and its figures, each round's verdicts."""

from __future__ import annotations

import json
import os

from tritonlens.analysis.python_ast import parse as parse_python
from tritonlens.profiling.worker.line_profile import stall_text
from tritonlens.profiling.worker.reports import ProfileReport

from .candidate import Verdict
from .context import ProposalContext
from .edits import kernels, launch_sites
from .hot_line_hints import HOT_LINES, MIN_SHARE

SYSTEM = """You are an expert in Triton GPU kernels. You rewrite a kernel file so that it runs faster \
on the given GPU while computing exactly the same function.
Rules (a strict verifier enforces them; breaking one wastes the round):
- Keep every public wrapper function's name and signature, and its outputs' shapes and dtypes.
- The work must stay in Triton kernels: no torch ops (matmul, softmax, sum, ...) doing it in the wrapper.
- Handle every shape: sizes that are not multiples of any block size must be masked.
- Do not change tritonlens_cases() or the tests, do not time anything, do not touch global state,
  files, processes or the environment; import only torch, triton, triton.language and math.
Answer with the complete rewritten file in ONE fenced ```python block (or a block holding only the
top-level functions you changed: they replace the functions of the same name), then at most three
sentences on what you changed and why it is faster. No diffs, no usage examples."""

ANSWER_AGAIN = "Answer again with the complete file (or the functions you change) in one ```python block."


def _profile_lines(profile: ProfileReport | None, kernel: str | None) -> list[str]:
    if not profile:
        return ["(no GPU profile taken)"]
    out = [f"mode: {profile.mode}, device: {(profile.device or {}).get('name', '?')}"]
    for k in profile.kernels:
        if kernel and k.name != kernel:
            continue
        for launch in k.launches[:3]:
            fields = {key: getattr(launch, key) for key in ("time_ms", "gbps", "tflops", "pct_of_peak", "bound",
                                                            "registers", "spills", "shared_bytes", "num_warps",
                                                            "num_stages", "grid", "constexprs")
                      if getattr(launch, key) is not None}
            out.append(f"{k.name}: " + json.dumps(fields))
            if launch.ncu:
                out.append("  ncu: " + json.dumps(launch.ncu.to_json() if hasattr(launch.ncu, "to_json")
                                                  else launch.ncu)[:800])
    return out


def _hot_lines(ctx: ProposalContext, kernel: str | None) -> list[str]:
    """The kernel's hottest lines, each with its code, share, what its warps wait on and its
    instruction classes; then what they suggest trying first (rewrite/hot_line_hints.py)."""
    sampled = ctx.hot_lines.get(kernel) if kernel else None
    hot = sampled.lines.hottest(HOT_LINES, MIN_SHARE) if sampled is not None else []
    if not hot:
        return []
    source = ctx.text.splitlines()
    out = [f"Hottest lines of {kernel} (share of the warp samples of one launch; what its warps wait on):"]
    for line in hot:
        code = source[line.line - 1].strip() if 0 < line.line <= len(source) else "?"
        load = f" (the load on line {line.waits_on[0]})" if line.waits_on else ""
        waits = ", ".join(f"{stall_text(st.reason)} {st.samples / line.samples:.0%}" + (load if st.reason == "long_sb" else "")
                          for st in line.stalls[:3] if line.samples)
        kinds = ", ".join(i.kind for i in line.instructions[:3])
        out.append(f"- line {line.line} ({line.share:.0%}): `{code}`" + (f" — {waits}" if waits else "")
                   + (f"; instructions: {kinds}" if kinds else "") + (f"; inlined from {line.via[0]}" if line.via else ""))
    out += [f"Suggested first: {h.reason}" for h in ctx.hints.get(kernel, [])[:2]]
    return out


def build_messages(ctx: ProposalContext, kernel: str | None) -> list[dict]:
    tree = parse_python(ctx.text)
    names = [k.name for k in kernels(tree)]
    target = kernel or (names[0] if names else None)
    wrappers = sorted({s.function.name for s in launch_sites(tree, target) if s.function is not None}) if target else []
    findings = [f"line {f.range.start.line + 1}: {f.code} {f.severity.value}: {f.message}"
                for f in ctx.findings() if f.kernel in (None, target)]
    tried = [f"- {v.candidate.proposer}: {v.candidate.title} → {'accepted' if v.accepted else 'refused'}: {v.reason}"
             for v in ctx.history]
    device = ctx.device or {}
    parts = [
        f"Device: {device.get('name', 'unknown')} (mode: {device.get('mode', 'unknown')}).",
        f"Kernel to optimize: {target}; launched by: {', '.join(wrappers) or '?'}.",
        "", "Diagnostics:", *(findings or ["(none)"]),
        "", "Profile:", *_profile_lines(ctx.profile, target), *_hot_lines(ctx, target),
        "", "Tried before (do not repeat what was refused):", *(tried or ["(nothing yet)"]),
        "", f"The file ({os.path.basename(ctx.path)}):", "```python", ctx.text.rstrip("\n"), "```",
    ]
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(parts)}]


def _verdict_details(verdict: Verdict) -> list[str]:
    ev = verdict.evidence or {}
    lines = []
    failing = next((c for c in ev.get("checks") or [] if not c.get("ok")), None)
    if failing:
        lines.append(f"Failing check: {failing.get('label')} with inputs {failing.get('shapes')} "
                     f"(seed {failing.get('seed')}): {failing.get('reason')}")
    err = ev.get("error") or {}
    if isinstance(err, dict) and err.get("traceback"):
        lines.append("Traceback (end):\n" + err["traceback"][-1500:])
    if ev.get("static"):
        lines.append("Static check: " + "; ".join(ev["static"][:5]))
    return lines


def feedback_message(verdict: Verdict, round_no: int, others: list[Verdict] = ()) -> dict:
    """Round `round_no` had no accepted candidate: why `verdict` (the answer kept in the conversation)
    was refused, and in one line each, why the round's other candidates were."""
    lines = [f"Round {round_no} was refused by the verifier: {verdict.reason}", *_verdict_details(verdict)]
    if others:
        lines.append("Other candidates of this round, refused too:")
        lines += [f"- {v.reason}" for v in others]
    lines.append("Fix this and answer again with the complete file in one ```python block.")
    return {"role": "user", "content": "\n".join(lines)}


def figures_of(verdict: Verdict) -> list[str]:
    """The verifier's own numbers about an accepted rewrite: time against the original's."""
    if verdict.speedup is None:
        return [f"correct on {verdict.seeds} seeds × {verdict.shapes} shapes; not timed"]
    line = f"speedup over the original: {verdict.speedup:.3g}x"
    if verdict.orig_ms is not None and verdict.cand_ms is not None:
        line += f" (time {verdict.cand_ms:.4g} ms against the original's {verdict.orig_ms:.4g} ms)"
    return [line]


def improve_message(round_no: int, best: Verdict, figures: list[str], gain: float | None) -> dict:
    """After an accept: the best rewrite so far becomes the base the model improves on."""
    head = f"Round {round_no}: accepted by the verifier ({best.reason})."
    if gain is not None:
        head += f" It is {gain:.1%} faster than the best before it."
    lines = [head, "It is now the best version so far: the file below, with its figures.",
             *[f"- {f}" for f in figures],
             "", ("Make it faster still, computing exactly the same function. A round that gains less than 2% "
                  "over this version ends the search. Keep what made it faster; look at the figures for what "
                  "bounds it now (memory or compute, occupancy from registers, spills)."),
             "", "The best version so far:", "```python", best.candidate.source.rstrip("\n"), "```",
             "", ANSWER_AGAIN]
    return {"role": "user", "content": "\n".join(lines)}
