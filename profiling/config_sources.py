"""Where each compiled configuration came from, and the configurations of kernels no launch reached.

Sources, strongest first: "captured" (a recorded launch), "configs" (the caller's), "static" (read
from the text: literal launch sites, autotune configs, defaults), "pinned" (set by the user:
config_pins.py) and "assumed" (representative values: assumed_values.py). `static_fallback` asks
the static model for the kernels no captured launch reached; `mark_sources` writes the source of
every configuration and of each of its values, the assumptions and the pins' problems into the
report, so that hover, JSON and text can name them.
"""

from __future__ import annotations

from tritonlens.profiling.assumed_values import notes_after_retry
from tritonlens.profiling.worker.compile_report import (
    CompileReport,
    ConfigFacts,
    KernelCompile,
)
from tritonlens.profiling.worker.messages import CompileJob


def static_fallback(text: str, kernel: str | None, captured: set[str], errors: list, static,
                    path=None) -> tuple[dict, dict]:
    from tritonlens.profiling.static_configs import static_configs_of_text

    wanted = {kernel} if kernel else None
    if static is not None:
        configs, info = static
        keep = [n for n in info if n not in captured and (wanted is None or n in wanted)]
        return {n: configs[n] for n in keep if n in configs}, {n: info[n] for n in keep}
    try:
        return static_configs_of_text(text, wanted, skip=captured, path=path)
    except Exception as exc:  # noqa: BLE001 - the fallback must never cost the captured facts
        errors.append(f"static configurations failed: {type(exc).__name__}: {exc}")
        return {}, {}


def _spec_for(kspec: dict, label: str | None) -> dict | None:
    """The CONFIG a compiled config came from (the worker appends autotune details to labels)."""
    cfgs = kspec.get("configs") or []
    return next((c for c in cfgs if c.get("label") == label), None) or \
        next((c for c in cfgs if label and label.startswith(str(c.get("label")) + ",")), None)


def _value_sources(facts: ConfigFacts, spec: dict, source: str) -> dict[str, str]:
    """Per value: the CONFIG's own record (static model), else `source` for what the CONFIG passed
    and "static" for what the worker took from the file (autotune configs, defaults)."""
    if spec.get("value_sources"):
        return dict(spec["value_sources"])
    given = set(spec.get("args") or {}) | set(spec.get("options") or {})
    names = [*facts.constexprs, "num_warps", "num_stages"]
    return {n: source if n in given or not spec else "static" for n in names}


def mark_sources(result: CompileReport, job: CompileJob, static_info: dict, capture_errors: list, default: str) -> None:
    """Say where every configuration and each of its values came from: "captured" (or "configs" from
    the caller), or the static model's static / pinned / assumed, with the assumptions its values
    and arguments rest on; kernels the static model could not configure either get an entry with a
    note, so the hover says why nothing compiled."""
    why = ""
    if capture_errors:  # its first line: a traceback belongs in the log, not in a hover
        why = f" (the harness raised before launching it: {str(capture_errors[0]).strip().splitlines()[0][:200]})"
    specs = {k["name"]: k for k in job.kernels}
    for k in result.kernels:
        kspec = specs.get(k.name) or {}
        entry = static_info.get(k.name)
        k.source = "static" if entry is not None else default
        if entry is not None:
            # Each configuration names its source; the note only adds why no launch was captured
            # (the harness raised) to what the worker said (decorators it compiled without).
            if why:
                k.note = f"no launch was captured{why}" + (f"; {k.note}" if k.note else "")
            k.pin_messages = list(entry.pin_messages)
        for facts in k.configs:
            spec = _spec_for(kspec, facts.label) or {}
            facts.source = spec.get("source", default)
            facts.value_sources = _value_sources(facts, spec, facts.source)
            compiled = {**facts.constexprs, "num_warps": facts.num_warps, "num_stages": facts.num_stages}
            facts.assumed = notes_after_retry(list(spec.get("assumed") or []), spec, compiled)
    present = {k.name for k in result.kernels}
    for name, entry in static_info.items():
        if name in present or not entry.note:
            continue
        result.kernels.append(KernelCompile(name=name, line=entry.line, source="static",
                                            pin_messages=list(entry.pin_messages),
                                            note=f"no launch of {name} was captured{why}; {entry.note}: "
                                                 "nothing compiled"))
