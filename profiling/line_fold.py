"""Fold a launch's sampled SASS instructions (the "lines" job's `SassSamples`) onto the lines of the
kernel's file: the `LineProfile` a profile keeps. Pure: no GPU, no triton import.

Each instruction goes to the line the compiled kernel's line table (`nvdisasm -gi`, read by the
same ir_line_map the IR view uses) gives its offset. That table names the innermost line: code
inlined from a jit helper, Triton's own reductions included, names the helper's line, and ptxas
keeps no inlining chain. The TTGIR's `callsite(...)` locations (and the PTX's `inlined_at`, where
a Triton writes them) say where each helper line was inlined in the kernel, so it counts for the kernel's line that called it, the line the user can act
on, and the helper's line is kept in `via`. Where a helper line was inlined at several lines, the
kernel line the instructions before it had decides, if it is one of them. Without a line table,
ncu's own correlation (also innermost) is used the same way.

A warp stalled on a long scoreboard waits for a load issued earlier: ncu samples the instruction
that waits, not the load. So each line also names the lines of the global loads whose registers
its stalled instructions read (`waits_on`), found by a backward walk over the SASS listing.
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict

from .ir_line_map import mlir_call_sites, ptx_call_sites, sass_locations, source_path_in
from .worker.line_profile import (
    LineInstructions,
    LineProfile,
    LineSamples,
    LineStall,
    SassSamples,
    instruction_kind,
)

_REG = re.compile(r"\bR(\d+)\b")
_WIDTH = {"64": 2, "128": 4}
_LOAD_KINDS = ("global load",)
# a stall that waits for a load's data: the load is the line to blame beside the one that waits
_WAITING_ON_LOADS = ("long_sb",)
LISTED_STALLS = 4
LISTED_KINDS = 4


def _same_file(a: str | None, b: str) -> bool:
    if not a:
        return False
    return os.path.normpath(a) == os.path.normpath(b) or os.path.basename(a) == os.path.basename(b)


def listing(line_table: str, resolver: CallSites) -> list[tuple[int, str, int | None, str | None]]:
    """(offset, instruction, kernel-file line, helper "file:line" or None) for every instruction
    of `nvdisasm -gi` output."""
    out = []
    for offset, insn, file, line in sass_locations(line_table):
        kernel_line, helper = resolver.line(file, line)
        out.append((offset, insn, kernel_line, helper))
    return out


def call_sites(raw: SassSamples, path: str) -> dict[tuple[str, int], set[int]]:
    """{(helper file, helper line): the kernel's lines it was inlined at}, from the IRs' locations,
    each read under the name it gives the kernel's file (a compile reused from Triton's cache
    names the file it was first compiled from)."""
    sites = ptx_call_sites(raw.ptx_locs, source_path_in(raw.ptx_locs, path)) if raw.ptx_locs else {}
    if raw.ir_locs:
        for node, lines in mlir_call_sites(raw.ir_locs, source_path_in(raw.ir_locs, path)).items():
            sites.setdefault(node, set()).update(lines)
    return sites


class CallSites:
    """Innermost (file, line) → the kernel's line, remembering the last kernel line seen."""

    def __init__(self, sites: dict[tuple[str, int], set[int]], path: str):
        self.path = path
        self.sites = sites
        self.current: int | None = None

    def line(self, file: str | None, line: int | None) -> tuple[int | None, str | None]:
        if file is None or line is None:
            return self.current, None
        if _same_file(file, self.path):
            self.current = line
            return line, None
        helper = f"{os.path.basename(file)}:{line}"
        sites = next((v for (f, ln), v in self.sites.items() if ln == line and _same_file(f, file)), set())
        if len(sites) == 1:
            return next(iter(sites)), helper
        if self.current in sites or (not sites and self.current is not None):
            return self.current, helper
        return (min(sites) if sites else None), helper


def _operands(sass: str) -> tuple[str, list[str]]:
    words = sass.strip()
    if words.startswith("@"):
        words = words.split(None, 1)[1] if " " in words else ""
    opcode, _, rest = words.partition(" ")
    return opcode, [o.strip() for o in rest.split(",")] if rest else []


def _written(sass: str) -> set[int]:
    """Registers a global load writes (its first operand, widened by the access size)."""
    opcode, ops = _operands(sass)
    if instruction_kind(sass) not in _LOAD_KINDS or not ops:
        return set()
    m = _REG.search(ops[0])
    if not m:
        return set()
    width = next((w for suffix, w in _WIDTH.items() if f".{suffix}" in opcode), 1)
    return set(range(int(m.group(1)), int(m.group(1)) + width))


def _read(sass: str) -> set[int]:
    _, ops = _operands(sass)
    return {int(r) for op in ops[1:] for r in _REG.findall(op)}


def producer_lines(insns: list, at: int) -> set[int]:
    """Lines of the global loads whose results the instruction at index `at` reads: the nearest
    earlier write of each register it reads, when that write is a load."""
    wanted = _read(insns[at][1])
    found: set[int] = set()
    for _, sass, line, _ in reversed(insns[:at]):
        if not wanted:
            break
        _, ops = _operands(sass)
        dest = {int(r) for r in _REG.findall(ops[0])} if ops else set()
        loaded = _written(sass)
        hit = wanted & (loaded or dest)
        if hit:
            if loaded and line is not None:
                found.add(line)
            wanted -= hit
    return found


def fold(raw: SassSamples, path: str, source_hash: str | None = None) -> LineProfile:
    sites = call_sites(raw, path)
    insns = []
    if raw.line_table:
        insns = listing(raw.line_table, CallSites(sites, source_path_in(raw.line_table, path)))
    index = {offset: i for i, (offset, _, _, _) in enumerate(insns)}
    ncu_lines = CallSites(sites, path)
    samples: Counter = Counter()
    stalls: dict[int, Counter] = defaultdict(Counter)
    kinds: dict[int, Counter] = defaultdict(Counter)
    examples: dict[tuple[int, str], tuple[int, str]] = {}
    via: dict[int, Counter] = defaultdict(Counter)
    waits: dict[int, Counter] = defaultdict(Counter)
    unattributed = 0
    for ins in sorted(raw.instructions, key=lambda x: x.offset):
        i = index.get(ins.offset)
        line, helper = insns[i][2:] if i is not None else ncu_lines.line(ins.file, ins.line)
        if line is None:
            unattributed += ins.samples
            continue
        samples[line] += ins.samples
        stalls[line].update(ins.stalls)
        kind = instruction_kind(ins.sass)
        kinds[line][kind] += ins.samples
        if examples.get((line, kind), (0, ""))[0] < ins.samples:
            examples[(line, kind)] = (ins.samples, ins.sass)
        if helper:
            via[line][helper] += ins.samples
        waiting = sum(ins.stalls.get(r, 0) for r in _WAITING_ON_LOADS)
        if i is not None and waiting * 2 >= ins.samples:
            for producer in producer_lines(insns, i):
                if producer != line:
                    waits[line][producer] += waiting
    total = raw.total_samples or sum(samples.values()) + unattributed
    lines = [LineSamples(
        line=line, samples=n, share=n / total if total else 0.0,
        stalls=[LineStall(r, c) for r, c in stalls[line].most_common(LISTED_STALLS)],
        instructions=[LineInstructions(k, c, examples[(line, k)][1]) for k, c in kinds[line].most_common(LISTED_KINDS)],
        via=[v for v, _ in via[line].most_common(3)],
        waits_on=sorted(waits[line], key=lambda ln: -waits[line][ln])[:3],
    ) for line, n in samples.most_common()]
    return LineProfile(kernel=raw.kernel, key=raw.key, source_hash=source_hash, total_samples=total,
                       unattributed=unattributed, lines=lines, cost_s=raw.cost_s, method=raw.method,
                       tensor_pipe_pct=raw.tensor_pipe_pct)
