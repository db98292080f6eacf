"""What the latest compile of a document says about its kernels: the argument dtypes its captured
launches saw (for shape inference) and the "compiled for sm_90" section of a kernel's hover."""

from __future__ import annotations

from dataclasses import dataclass

from tritonlens.profiling.worker.compile_report import CompileReport, ConfigFacts, KernelCompile

from .diagnostics import kernel_hash


@dataclass
class Compiled:
    """The latest compile answer for a document: valid for `text`, per kernel while its source holds."""

    seq: int
    version: int | None
    text: str
    target: str
    python: str
    result: CompileReport
    kernel_hashes: dict[str, str]
    seconds: float

    def kernel_entry(self, kernel: str) -> KernelCompile | None:
        return self.result.kernel(kernel)


@dataclass(frozen=True)
class CompileFacts:
    """A read-only view of one document's latest compile (or of none)."""

    compiled: Compiled | None = None

    def arg_dtypes(self, kernel: str) -> dict[str, str]:
        """Argument dtypes the captured launches' signatures give, e.g. {"a_ptr": "*fp16",
        "stride_am": "i32"}: what shape inference needs to type loads and pointer arithmetic.
        A parameter whose dtype differs between configurations is left out (unknown stays unknown)."""
        entry = self.compiled.kernel_entry(kernel) if self.compiled is not None else None
        seen: dict[str, set] = {}
        # Only launches that ran say what the tensors were: a static configuration's pointer types are
        # mostly stand-ins (fp32 where the kernel names no type), which hints would show as facts.
        for c in (c for c in entry.configs if c.source == "captured") if entry is not None else []:
            for name, ty in (c.signature or {}).items():
                if isinstance(ty, str) and ty != "constexpr":  # pointers and scalars ("*fp16", "i32")
                    seen.setdefault(name, set()).add(ty)
        return {name: next(iter(tys)) for name, tys in seen.items() if len(tys) == 1}

    def hover_section(self, k) -> str | None:
        """The kernel card's "compiled for sm_90" section."""
        latest = self.compiled
        entry = latest.kernel_entry(k.name) if latest is not None else None
        if entry is None:
            return None
        stale = latest.kernel_hashes.get(k.name) != kernel_hash(k.text)
        origin = ("from the text: launch sites, autotune configs, pins, assumed values"
                  if entry.source == "static" else latest.result.source or "configurations")
        head = (f"**Compiled for {latest.target}** (Triton {latest.result.triton_version}, "
                f"{origin})" + (" · _before the last edit_" if stale else ""))
        configs = entry.configs
        ok = [c for c in configs if c.compiled]
        parts = [head]
        if entry.reason:
            parts.append(f"**No compile facts:** {entry.reason}")
        if entry.note and entry.note != entry.reason:
            parts.append(f"_{entry.note}_")
        parts.extend(f"- pin: {m}" for m in entry.pin_messages[:4])
        # The assumed values first (each says how to pin it), then the argument stand-ins.
        assumed = sorted(dict.fromkeys(a for c in configs for a in c.assumed), key=lambda a: not a.startswith("assumed "))
        if assumed:
            parts.append("Assumed (no captured launch):\n" + "\n".join(f"- {a}" for a in assumed[:6]))
        if ok:
            parts.append("| configuration | registers | spills | shared memory | occupancy (limiter) | MMA | pipelined "
                         "| vectorised |\n|---|---|---|---|---|---|---|---|\n" + "\n".join(_config_row(c) for c in ok[:8]))
            if len(ok) > 8:
                parts.append(f"_{len(ok) - 8} more configurations not shown._")
        errors = [c for c in configs if c.error is not None]
        for c in errors[:4]:
            e = c.error
            where = f" at line {e.line}" if e.line else ""
            parts.append(f"- {c.label}: compile error{where}: {e.message}")
        if entry.error is not None:
            parts.append(f"- {entry.error.message}")
        if not configs and entry.error is None and not entry.note:
            parts.append("_No launch of this kernel was captured: nothing compiled._")
        return "\n\n".join(parts)


def _size(n) -> str:
    return "?" if n is None else f"{n:,} B"


def _config_row(c: ConfigFacts) -> str:
    label = c.label or "configuration"
    opts = ", ".join(f"{k}={v}" for k, v in (("num_warps", c.num_warps), ("num_stages", c.num_stages)) if v is not None)
    consts = ", ".join(f"{k}={v}" + (f" _{c.value_sources[k]}_" if c.value_sources.get(k) in ("pinned", "assumed")
                                     else "") for k, v in c.constexprs.items())
    name = label + (f" ({consts}; {opts})" if consts and opts else f" ({consts or opts})" if consts or opts else "")
    spills = "none" if not c.spill_bytes else _size(c.spill_bytes)
    occ = c.occupancy
    occupancy = "?" if occ is None else f"{occ:g}%" + (f" ({c.limiter})" if c.limiter else "")
    pipelined = {True: f"yes ({c.pipeline})", False: "no", None: "no global loads"}[c.pipelined]
    vectorised = {True: "yes", False: "no", None: "no global loads"}[c.vectorized]
    return (f"| {name} | {c.registers} | {spills} | {_size(c.shared_bytes)} | {occupancy} | "
            f"{c.mma or 'no tl.dot'} | {pipelined} | {vectorised} |")
