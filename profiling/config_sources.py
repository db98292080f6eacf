"""Where each compiled configuration came from, and the configurations of kernels no launch reached.

Sources, strongest first: "captured" (a recorded launch), "configs" (the caller's), "static" (the
static model's literal launch sites and autotune configs). `static_fallback` asks the static model
for the kernels no captured launch reached; `mark_sources` writes the source and the assumptions
of every configuration into the report, so that hover, JSON and text can name them.
"""

from __future__ import annotations

from tritonlens.profiling.worker.compile_report import CompileReport, KernelCompile
from tritonlens.profiling.worker.messages import CompileJob


def static_fallback(text: str, kernel: str | None, captured: set[str], errors: list, static) -> tuple[dict, dict]:
    from tritonlens.profiling.static_configs import static_configs_of_text

    wanted = {kernel} if kernel else None
    if static is not None:
        configs, info = static
        keep = [n for n in info if n not in captured and (wanted is None or n in wanted)]
        return {n: configs[n] for n in keep if n in configs}, {n: info[n] for n in keep}
    try:
        return static_configs_of_text(text, wanted, skip=captured)
    except Exception as exc:  # noqa: BLE001 - the fallback must never cost the captured facts
        errors.append(f"static configurations failed: {type(exc).__name__}: {exc}")
        return {}, {}


def _spec_for(kspec: dict, label: str | None) -> dict | None:
    """The CONFIG a compiled config came from (the worker appends autotune details to labels)."""
    cfgs = kspec.get("configs") or []
    return next((c for c in cfgs if c.get("label") == label), None) or \
        next((c for c in cfgs if label and label.startswith(str(c.get("label")) + ",")), None)


def mark_sources(result: CompileReport, job: CompileJob, static_info: dict, capture_errors: list, default: str) -> None:
    """Say where every configuration came from: "captured" (or "configs" from the caller) or
    "static", the latter with the assumptions its arguments rest on; kernels the static model could
    not configure either get an entry with a note, so the hover says why nothing compiled."""
    why = ""
    if capture_errors:
        why = f" (the harness raised before launching it: {str(capture_errors[0])[:300]})"
    specs = {k["name"]: k for k in job.kernels}
    for k in result.kernels:
        kspec = specs.get(k.name) or {}
        static = k.name in static_info
        k.source = "static" if static else default
        if static:
            k.note = (f"no launch of {k.name} was captured{why}; compiled from the static model's "
                      "configurations with assumed arguments")
        for facts in k.configs:
            spec = _spec_for(kspec, facts.label) or {}
            facts.source = spec.get("source", default)
            facts.assumed = list(spec.get("assumed") or [])
    present = {k.name for k in result.kernels}
    for name, entry in static_info.items():
        if name in present or not entry.note:
            continue
        result.kernels.append(KernelCompile(name=name, line=entry.line, source="static",
                                            note=f"no launch of {name} was captured{why}; {entry.note}: "
                                                 "nothing compiled"))
