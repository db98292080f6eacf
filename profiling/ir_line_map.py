"""Which source line each line of a kernel's IR (TTIR, TTGIR, LLIR, PTX, SASS) was compiled from.

Pure text parsing (no triton import) so the server can mark IR lines for "Show IR" cheaply.
Source lines are 1-based lines of the kernel's file; code inlined from a helper counts for the line
of the kernel that called it (the outermost call site), which is where the user can act.
"""

from __future__ import annotations

import os
import re


def _same_file(a: str, b: str | None) -> bool:
    if not b:
        return False
    return a == b or os.path.normpath(a) == os.path.normpath(b) or os.path.basename(a) == b


_QUOTED_PY = re.compile(r'"([^"]+\.py)"')


def source_path_in(text: str, path: str) -> str:
    """The name `text` (PTX, SASS, MLIR, LLVM IR) uses for the kernel file `path`.

    Compiled artifacts are cached by kernel source, not location (ours and Triton's own cache),
    so a kernel identical to one compiled from another file comes back naming that other file:
    then the one non-Triton source file the text names is the kernel's file (of several, where
    helpers were inlined from other files, the one with the kernel file's name).
    """
    names = {n for n in _QUOTED_PY.findall(text)}
    names |= {os.path.join(d, n) for n, d in re.findall(r'\.file\s+\d+\s+"([^"]+\.py)"\s+"([^"]+)"', text)}
    if any(_same_file(path, n) or _same_file(n, path) for n in names):
        return path
    user = {os.path.normpath(n) for n in names if f"{os.sep}triton{os.sep}" not in os.path.normpath(n)}
    if len(user) > 1:  # helpers inlined from other project files: the kernel's file has the copy's name
        user = {n for n in user if os.path.basename(n) == os.path.basename(path)}
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
SASS_INSN = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")


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
        out.append(current if SASS_INSN.match(line) else None)
    return out


def sass_locations(sass: str) -> list[tuple[int, str, str | None, int | None]]:
    """(offset, instruction, file, line) of every instruction of `nvdisasm -gi` output, at the
    innermost location its line table gives (a helper's line for inlined code)."""
    out = []
    file = line = None
    for text in sass.splitlines():
        m = _SASS_LOC.search(text)
        if m:
            file, line = m.group(1), int(m.group(2))
            continue
        insn = SASS_INSN.match(text)
        offset = _SASS_OFFSET.match(text)
        if insn and offset:
            out.append((int(offset.group(1), 16), insn.group(1).strip(), file, line))
    return out


_SASS_OFFSET = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/")


def ptx_call_sites(ptx: str, path: str) -> dict[tuple[str, int], set[int]]:
    """{(helper file, helper line): the lines of `path` it was inlined at}, from the PTX's `.loc ...
    inlined_at` chains, followed through nested helpers. A SASS line table without inlining
    information (ptxas leaves it out) is resolved to call sites through this."""
    files = {m.group(1): m.group(2) for m in map(_PTX_FILE.match, ptx.splitlines()) if m}
    edges: dict[tuple[str, int], set[tuple[str, int]]] = {}
    for m in map(_PTX_LOC.match, ptx.splitlines()):
        if m and m.group(4) and files.get(m.group(1)) and files.get(m.group(4)):
            edges.setdefault((files[m.group(1)], int(m.group(2))), set()).add((files[m.group(4)], int(m.group(5))))

    def resolve(node, seen) -> set[int]:
        if _same_file(path, node[0]):
            return {node[1]}
        if node in seen:
            return set()
        seen.add(node)
        return set().union(*(resolve(up, seen) for up in edges.get(node, ())))

    return {node: sites for node in edges if not _same_file(path, node[0]) and (sites := resolve(node, set()))}


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


def mlir_call_sites(text: str, path: str) -> dict[tuple[str, int], set[int]]:
    """{(helper file, helper line): the lines of `path` it was inlined at}, from TTIR/TTGIR
    `callsite(callee at caller)` locations (Triton's PTX carries no inlining chain)."""
    table = {m.group(1): m.group(2) for m in map(_MLIR_LOCDEF.match, (ln.strip() for ln in text.splitlines())) if m}
    resolve = _mlir_resolver(text, path)

    def innermost(expr: str, depth: int = 0) -> tuple[str, int] | None:
        expr = expr.strip()
        if depth > 50:
            return None
        if expr.startswith("#loc"):
            return innermost(table.get(expr, "unknown"), depth + 1)
        m = _MLIR_FILELOC.match(expr)
        if m:
            return m.group(1), int(m.group(2))
        if expr.startswith("callsite("):
            return innermost(expr[len("callsite("):-1].rpartition(" at ")[0], depth + 1)
        m = re.match(r'^"[^"]*"\((.*)\)$', expr)
        return innermost(m.group(1), depth + 1) if m else None

    out: dict[tuple[str, int], set[int]] = {}
    for expr in table.values():
        if not expr.startswith("callsite("):
            continue
        callee, caller = innermost(expr), resolve(expr)
        if callee and caller and not _same_file(path, callee[0]):
            out.setdefault(callee, set()).add(caller[0])
    return out


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
