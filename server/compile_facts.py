"""What the latest compile of a document says about its kernels: the argument dtypes its captured
launches saw (for shape inference) and the "compiled for sm_90" section of a kernel's hover."""

from __future__ import annotations

from dataclasses import dataclass

from .diagnostics import kernel_hash


@dataclass
class Compiled:
    """The latest compile answer for a document: valid for `text`, per kernel while its source holds."""

    seq: int
    version: int | None
    text: str
    target: str
    python: str
    result: dict
    kernel_hashes: dict[str, str]
    seconds: float

    def kernel_entry(self, kernel: str) -> dict | None:
        return next((e for e in self.result.get("kernels") or [] if e.get("name") == kernel), None)


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
        for c in (entry or {}).get("configs") or []:
            for name, ty in (c.get("signature") or {}).items():
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
        origin = ("static model: literal launch sites and autotune configs, assumed arguments"
                  if entry.get("source") == "static" else latest.result.get("source") or "configurations")
        head = (f"**Compiled for {latest.target}** (Triton {latest.result.get('triton_version')}, "
                f"{origin})" + (" · _before the last edit_" if stale else ""))
        configs = entry.get("configs") or []
        ok = [c for c in configs if not c.get("error") and c.get("registers") is not None]
        parts = [head]
        if entry.get("note"):
            parts.append(f"_{entry['note']}_")
        assumed = list(dict.fromkeys(a for c in configs for a in c.get("assumed") or []))
        if assumed:
            parts.append("Assumed (no captured launch):\n" + "\n".join(f"- {a}" for a in assumed[:6]))
        if ok:
            parts.append("| configuration | registers | spills | shared memory | occupancy (limiter) | MMA | pipelined "
                         "| vectorised |\n|---|---|---|---|---|---|---|---|\n" + "\n".join(_config_row(c) for c in ok[:8]))
            if len(ok) > 8:
                parts.append(f"_{len(ok) - 8} more configurations not shown._")
        errors = [c for c in configs if c.get("error")]
        for c in errors[:4]:
            e = c["error"]
            where = f" at line {e['line']}" if e.get("line") else ""
            parts.append(f"- {c.get('label')}: compile error{where}: {e.get('message')}")
        if entry.get("error"):
            parts.append(f"- {entry['error'].get('message') if isinstance(entry['error'], dict) else entry['error']}")
        if not configs and not entry.get("error") and not entry.get("note"):
            parts.append("_No launch of this kernel was captured: nothing compiled._")
        return "\n\n".join(parts)


def _size(n) -> str:
    return "?" if n is None else f"{n:,} B"


def _config_row(c: dict) -> str:
    label = c.get("label") or "configuration"
    opts = ", ".join(f"{k}={c[k]}" for k in ("num_warps", "num_stages") if c.get(k) is not None)
    consts = ", ".join(f"{k}={v}" for k, v in (c.get("constexprs") or {}).items())
    name = label + (f" ({consts}; {opts})" if consts and opts else f" ({consts or opts})" if consts or opts else "")
    spills = "none" if not c.get("spill_bytes") else _size(c["spill_bytes"])
    occ = c.get("occupancy")
    occupancy = "?" if occ is None else f"{occ:g}%" + (f" ({c['limiter']})" if c.get("limiter") else "")
    pipelined = {True: f"yes ({c.get('pipeline')})", False: "no", None: "no global loads"}[c.get("pipelined")]
    vectorised = {True: "yes", False: "no", None: "no global loads"}[c.get("vectorized")]
    return (f"| {name} | {c.get('registers')} | {spills} | {_size(c.get('shared_bytes'))} | {occupancy} | "
            f"{c.get('mma') or 'no tl.dot'} | {pipelined} | {vectorised} |")
