"""Facts read off a compiled kernel's IR: how each `tl.dot` was lowered, whether global loads were
pipelined and vectorised, instructions and spill traffic per source line (which source line an IR
line belongs to: ir_line_map.py). Pure text parsing, no triton import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tritonlens.profiling.ir_line_map import (
    SASS_INSN,
    mlir_positions,
    ptx_line_map,
    sass_line_map,
)

# ---------------------------------------------------------------------------------------------
# Per-line statistics


def _is_ptx_instruction(stripped: str) -> bool:
    return bool(stripped) and not stripped.startswith((".", "//", "{", "}", "$", ")", "(")) \
        and not stripped.endswith(":")


def ptx_line_stats(ptx: str, path: str) -> dict[int, int]:
    """{line: PTX instructions} (directives, labels and braces are not instructions)."""
    out: dict[int, int] = {}
    for text_line, src in zip(ptx.splitlines(), ptx_line_map(ptx, path)):
        if src is not None and _is_ptx_instruction(text_line.strip()):
            out[src] = out.get(src, 0) + 1
    return out



_SPILL = re.compile(r"^(?:@!?U?P\w+\s+)?(LDL|STL)(\.[A-Z0-9.]+)?\s")


def _access_bytes(suffix: str | None) -> int:
    size = 4
    for part in (suffix or "").split("."):
        if part in ("64",):
            size = 8
        elif part == "128":
            size = 16
        elif part in ("U8", "S8"):
            size = 1
        elif part in ("U16", "S16"):
            size = 2
    return size


def sass_line_stats(sass: str, path: str, phantoms: dict[int, int] | None = None) -> dict[int, dict]:
    """{line: {"instructions", "spill_bytes", "spill_instructions"}} from `nvdisasm -gi` output.
    spill_bytes is the local-memory traffic one thread issues in the straight-line code (each
    LDL/STL counted once, whatever the loop trip count)."""
    stats: dict[int, dict] = {}
    for text_line, src in zip(sass.splitlines(), sass_line_map(sass, path, phantoms)):
        if src is None:
            continue
        m = SASS_INSN.match(text_line)
        if not m:
            continue
        s = stats.setdefault(src, {"instructions": 0, "spill_bytes": 0, "spill_instructions": 0})
        s["instructions"] += 1
        sm = _SPILL.match(m.group(1))
        if sm:
            s["spill_bytes"] += _access_bytes(sm.group(2))
            s["spill_instructions"] += 1
    return stats


# ---------------------------------------------------------------------------------------------
# Dots: how each tl.dot was lowered (TTGIR), with its shapes and precision


@dataclass
class Dot:
    line: int | None
    column: int | None
    lowering: str  # "wgmma" | "mma.sync" | "tcgen05" | "fma"
    m: int | None
    n: int | None
    k: int | None
    a_dtype: str | None
    b_dtype: str | None
    input_precision: str | None

    def as_dict(self) -> dict:
        return dict(self.__dict__)


_PRECISIONS = {0: "tf32", 1: "tf32x3", 2: "ieee", 3: "bf16x3", 4: "bf16x6"}
_SHAPE = re.compile(r"(?:tensor|!ttg\.memdesc)<(\d+)x(\d+)x(\w+)")
_RESULT = re.compile(r"->\s*tensor<(\d+)x(\d+)x(\w+)(?:,\s*#([\w.]+))?")


def dots(ttgir: str, path: str) -> list[Dot]:
    encodings = {}
    for line in ttgir.splitlines():
        m = re.match(r"^#(\w+)\s*=\s*#ttg\.(\w+)<(.*)>\s*$", line)
        if m:
            encodings[m.group(1)] = (m.group(2), m.group(3))
    positions = mlir_positions(ttgir, path)
    out, seen = [], set()
    for line, pos in zip(ttgir.splitlines(), positions):
        op = re.search(r"=\s*(tt\.dot|ttng\.warp_group_dot|ttng\.tc_gen5_mma|tt\.dot_scaled)\b", line)
        if not op and "ttng.tc_gen5_mma " not in line:
            continue
        name = op.group(1) if op else "ttng.tc_gen5_mma"
        shapes = _SHAPE.findall(line)
        res = _RESULT.search(line)
        if name == "ttng.warp_group_dot":
            lowering = "wgmma"
        elif name == "ttng.tc_gen5_mma":
            lowering = "tcgen05"
        else:
            enc = encodings.get(res.group(4)) if res and res.group(4) else None
            if enc and enc[0] == "nvidia_mma":
                major = re.search(r"versionMajor\s*=\s*(\d+)", enc[1])
                lowering = "wgmma" if major and major.group(1) == "3" else "mma.sync"
            else:
                lowering = "fma"
        prec = re.search(r"inputPrecision\s*=\s*(\w+)(?:\s*:\s*i32)?", line)
        precision = None
        if prec:
            precision = _PRECISIONS.get(int(prec.group(1)), prec.group(1)) if prec.group(1).isdigit() else prec.group(1)
        a = shapes[0] if shapes else None
        b = shapes[1] if len(shapes) > 1 else None
        key = (pos, lowering)
        if key in seen:
            continue  # the pipeliner may clone a dot into a prologue/epilogue
        seen.add(key)
        out.append(Dot(line=pos[0] if pos else None, column=pos[1] if pos else None, lowering=lowering,
                       m=int(res.group(1)) if res else None, n=int(res.group(2)) if res else None,
                       k=int(a[1]) if a else None, a_dtype=a[2] if a else None, b_dtype=b[2] if b else None,
                       input_precision=precision))
    return out


def mma_summary(dot_list: list[Dot]) -> str | None:
    kinds = sorted({d.lowering for d in dot_list})
    if not kinds:
        return None
    return kinds[0] if len(kinds) == 1 else "+".join(kinds)


# ---------------------------------------------------------------------------------------------
# Global loads: pipelining and vector width per source line (PTX)


_LD_GLOBAL = re.compile(r"\bld\.global(?:\.[a-z0-9_:]+)*?(?:\.v(\d))?\.[bfsu](\d+)\b")
_CP_ASYNC = re.compile(r"\bcp\.async\.(?:ca|cg)\.shared\.global(?:\.[a-z0-9:]+)*\s+\[[^\]]*\],\s*\[[^\]]*\],\s*(0x[0-9a-fA-F]+|\d+)")
_TMA = re.compile(r"\bcp\.async\.bulk\.tensor\b")
_BULK = re.compile(r"\bcp\.async\.bulk\b")


def global_loads(ptx: str, path: str) -> dict[int, dict]:
    """{line: {"widest": bytes, "narrowest": bytes, "instructions": n, "kinds": set}} for lines that
    read global memory: ld.global (with its vector width), cp.async (its copy size), TMA."""
    out: dict[int, dict] = {}
    for text_line, src in zip(ptx.splitlines(), ptx_line_map(ptx, path)):
        width, kind = None, None
        if _TMA.search(text_line):
            width, kind = 128, "tma"
        elif _BULK.search(text_line):
            width, kind = 128, "bulk"
        else:
            m = _CP_ASYNC.search(text_line)
            if m:
                width, kind = int(m.group(1), 0), "cp.async"
            else:
                m = _LD_GLOBAL.search(text_line)
                if m:
                    width, kind = int(m.group(1) or 1) * int(m.group(2)) // 8, "ld.global"
        if width is None or src is None:
            continue
        s = out.setdefault(src, {"widest": 0, "narrowest": 1 << 30, "instructions": 0, "kinds": set()})
        s["widest"] = max(s["widest"], width)
        s["narrowest"] = min(s["narrowest"], width)
        s["instructions"] += 1
        s["kinds"].add(kind)
    return out


def pipelining(loads: dict[int, dict]) -> str | None:
    """"tma" | "cp.async" | "none" | None (no global loads at all)."""
    kinds = set().union(*(s["kinds"] for s in loads.values())) if loads else set()
    if not kinds:
        return None
    if "tma" in kinds or "bulk" in kinds:
        return "tma"
    if "cp.async" in kinds:
        return "cp.async"
    return "none"


def vectorized(loads: dict[int, dict]) -> bool | None:
    """True when every source line's global loads use vector accesses (wider than 4 bytes)."""
    if not loads:
        return None
    return all(s["widest"] > 4 for s in loads.values())
