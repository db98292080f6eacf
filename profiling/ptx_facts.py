"""Facts read off a compiled kernel's IR: which source line each IR line belongs to, how each
`tl.dot` was lowered, whether global loads were pipelined and vectorised, instructions and spill
traffic per source line.

Pure text parsing (no triton import) so the server can mark IR lines for "Show IR" cheaply.
Source lines are 1-based lines of the kernel's file; code inlined from a helper counts for the line
of the kernel that called it (the outermost call site), which is where the user can act.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

# ---------------------------------------------------------------------------------------------
# Source-line attribution per IR language


def _same_file(a: str, b: str | None) -> bool:
    if not b:
        return False
    return a == b or os.path.normpath(a) == os.path.normpath(b) or os.path.basename(a) == b


_QUOTED_PY = re.compile(r'"([^"]+\.py)"')


def source_path_in(text: str, path: str) -> str:
    """The name `text` (PTX, SASS, MLIR, LLVM IR) uses for the kernel file `path`.

    Compiled artifacts are cached by kernel source, not location (ours and Triton's own cache),
    so a kernel identical to one compiled from another file comes back naming that other file:
    then the one non-Triton source file the text names is the kernel's file.
    """
    names = {n for n in _QUOTED_PY.findall(text)}
    names |= {os.path.join(d, n) for n, d in re.findall(r'\.file\s+\d+\s+"([^"]+\.py)"\s+"([^"]+)"', text)}
    if any(_same_file(path, n) or _same_file(n, path) for n in names):
        return path
    user = {os.path.normpath(n) for n in names if f"{os.sep}triton{os.sep}" not in os.path.normpath(n)}
    return next(iter(user)) if len(user) == 1 else path


_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"')
_PTX_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:.*?inlined_at\s+(\d+)\s+(\d+)\s+(\d+))?")


def ptx_line_map(ptx: str, path: str) -> list[int | None]:
    """Source line (of `path`) of every PTX line, following `.loc` directives."""
    files = {}
    for line in ptx.splitlines():
        m = _PTX_FILE.match(line)
        if m:
            files[m.group(1)] = m.group(2)
    out: list[int | None] = []
    current = None
    in_asm = frozen = False
    for line in ptx.splitlines():
        if "// begin inline asm" in line:
            in_asm, frozen = True, False
        elif "// end inline asm" in line:
            in_asm = False
        m = _PTX_LOC.match(line)
        if m and in_asm and frozen:
            # LLVM numbers the lines of an inline-asm string as if they were source lines
            # (17, 18, 19, ... for one tl.load at line 17): only the block's first .loc is real.
            out.append(None)
            continue
        if m:
            frozen = in_asm
            fid, ln = m.group(1), int(m.group(2))
            if m.group(4) and _same_file(path, files.get(m.group(4))):
                current = int(m.group(5))  # inlined: the kernel's call site
            elif _same_file(path, files.get(fid)):
                current = ln
            elif ln == 0:
                current = None
            out.append(None)  # the directive itself belongs to no instruction
            continue
        stripped = line.strip()
        if stripped.startswith(("}", ".visible", ".entry", ".func", "//")) or not stripped:
            out.append(None if not stripped or stripped.startswith("//") else current)
            continue
        out.append(current)
    return out


_SASS_LOC = re.compile(r'//##\s+File\s+"([^"]*)",\s+line\s+(\d+)(.*)$')
_SASS_INLINED = re.compile(r'inlined at\s+"([^"]*)",\s+line\s+(\d+)')
_SASS_INSN = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")


def inline_asm_phantoms(ptx: str, path: str) -> dict[int, int]:
    """{phantom line: real line} for the lines LLVM invented inside inline-asm blocks, where the
    phantom line has no real code of its own; ptxas copies them into the SASS line table."""
    real, phantom = set(), {}
    files = {m.group(1): m.group(2) for m in map(_PTX_FILE.match, ptx.splitlines()) if m}
    in_asm, first = False, None
    for line in ptx.splitlines():
        if "// begin inline asm" in line:
            in_asm, first = True, None
            continue
        if "// end inline asm" in line:
            in_asm = False
            continue
        m = _PTX_LOC.match(line)
        if not m or m.group(4) or not _same_file(path, files.get(m.group(1))):
            continue
        ln = int(m.group(2))
        if in_asm and first is not None:
            if ln != first:
                phantom.setdefault(ln, first)
        else:
            real.add(ln)
            if in_asm:
                first = ln
    return {ln: to for ln, to in phantom.items() if ln not in real}


def sass_line_map(sass: str, path: str, phantoms: dict[int, int] | None = None) -> list[int | None]:
    """Source line of every line of `nvdisasm -gi` output (phantoms: see inline_asm_phantoms)."""
    phantoms = phantoms or {}
    out: list[int | None] = []
    current = None
    for line in sass.splitlines():
        m = _SASS_LOC.search(line)
        if m:
            found = None
            chain = _SASS_INLINED.findall(m.group(3))
            for fname, ln in reversed(chain):  # outermost call site first
                if _same_file(path, fname):
                    found = int(ln)
                    break
            if found is None and _same_file(path, m.group(1)):
                found = int(m.group(2))
            if found is not None:
                current = phantoms.get(found, found)
            out.append(None)
            continue
        out.append(current if _SASS_INSN.match(line) else None)
    return out


_MLIR_LOCDEF = re.compile(r"^(#loc\d*)\s*=\s*loc\((.*)\)\s*$")
_MLIR_FILELOC = re.compile(r'^"([^"]*)":(\d+):(\d+)')
_MLIR_USE = re.compile(r"loc\((#loc\d*|\"[^\"]*\":\d+:\d+)\)\s*$")


def _mlir_resolver(text: str, path: str):
    table = {}
    for line in text.splitlines():
        m = _MLIR_LOCDEF.match(line.strip())
        if m:
            table[m.group(1)] = m.group(2)
    memo: dict[str, tuple[int, int] | None] = {}

    def resolve_expr(expr: str, depth: int = 0):
        expr = expr.strip()
        if depth > 50:
            return None
        if expr.startswith("#loc"):
            if expr in memo:
                return memo[expr]
            memo[expr] = None
            res = resolve_expr(table.get(expr, "unknown"), depth + 1)
            memo[expr] = res
            return res
        m = _MLIR_FILELOC.match(expr)
        if m:
            # MLIR columns count from 1; ours from 0
            return (int(m.group(2)), max(int(m.group(3)) - 1, 0)) if _same_file(path, m.group(1)) else None
        if expr.startswith("callsite("):
            inner = expr[len("callsite("):-1]
            callee, _, caller = inner.rpartition(" at ")
            return resolve_expr(caller, depth + 1) or resolve_expr(callee, depth + 1)
        if expr.startswith("fused"):
            for ref in re.findall(r"#loc\d*|\"[^\"]*\":\d+:\d+", expr):
                r = resolve_expr(ref, depth + 1)
                if r:
                    return r
            return None
        m = re.match(r'^"[^"]*"\((.*)\)$', expr)  # a named location: loc("acc"(#loc12))
        if m:
            return resolve_expr(m.group(1), depth + 1)
        return None

    return resolve_expr


def mlir_positions(text: str, path: str) -> list[tuple[int, int] | None]:
    """(1-based line, 0-based column) of every line of TTIR/TTGIR text (the op's trailing `loc(...)`)."""
    resolve = _mlir_resolver(text, path)
    out = []
    for line in text.splitlines():
        if line.startswith("#loc"):
            out.append(None)
            continue
        m = _MLIR_USE.search(line)
        out.append(resolve(m.group(1)) if m else None)
    return out


def line_map(stage: str, text: str, path: str, ptx: str | None = None) -> list[int | None]:
    path = source_path_in(text, path)
    """Source line of every line of `text` (an IR of `stage`); for SASS, pass the PTX it came from
    so that lines invented inside inline asm map back to their real line."""
    if stage == "ptx":
        return ptx_line_map(text, path)
    if stage == "sass":
        return sass_line_map(text, path, inline_asm_phantoms(ptx, path) if ptx else None)
    if stage in ("ttir", "ttgir"):
        return [p[0] if p else None for p in mlir_positions(text, path)]
    if stage == "llir":
        return _llir_line_map(text, path)
    raise ValueError(f"unknown IR stage {stage!r}")


def _llir_line_map(text: str, path: str) -> list[int | None]:
    """LLVM IR: `!dbg !N` on instructions, `!N = !DILocation(line: L, ..., inlinedAt: !M)`."""
    locs, files, scopes = {}, {}, {}
    for line in text.splitlines():
        m = re.match(r"^(!\d+) = !DIFile\(filename: \"([^\"]*)\", directory: \"([^\"]*)\"", line)
        if m:
            files[m.group(1)] = os.path.join(m.group(3), m.group(2))
        m = re.match(r"^(!\d+) = distinct !DISubprogram\(.*?file: (!\d+)", line)
        if m:
            scopes[m.group(1)] = m.group(2)
        m = re.match(r"^(!\d+) = !DILocation\(line: (\d+).*?scope: (!\d+)(?:, inlinedAt: (!\d+))?", line)
        if m:
            locs[m.group(1)] = (int(m.group(2)), m.group(3), m.group(4))

    def resolve(ref, depth=0):
        if ref not in locs or depth > 30:
            return None
        ln, scope, inlined = locs[ref]
        if inlined:
            outer = resolve(inlined, depth + 1)
            if outer:
                return outer
        return ln if _same_file(path, files.get(scopes.get(scope))) else None

    out = []
    for line in text.splitlines():
        m = re.search(r"!dbg (!\d+)", line)
        out.append(resolve(m.group(1)) if m and not line.startswith("!") else None)
    return out


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
        m = _SASS_INSN.match(text_line)
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
