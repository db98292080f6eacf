"""A kernel's findings stay while its text does not parse.

Typing an opening bracket leaves the rest of the kernel inside it until the bracket closes; the
analysis of that text finds nothing in the kernel, and every problem of the file would vanish
for a keystroke or two, then come back. While a kernel's tree holds a syntax error and the
analysis finds nothing in it, the findings of its last version that parsed are shown instead,
moved with the kernel's first line; their fixes, computed on other text, are dropped.
"""

from __future__ import annotations

from dataclasses import replace

from tritonlens.analysis.findings import Finding
from tritonlens.analysis.relocate import moved, shift_map


def _broken(kernel) -> bool:
    node = getattr(kernel, "node", None)
    return bool(node is not None and node.has_error)


def _held_copy(f: Finding, delta: int) -> Finding:
    f = f if delta == 0 else moved(f, shift_map(delta))
    return replace(f, fix=None)


def hold_while_broken(held: dict[str, tuple[int, list[Finding]]], module, findings: list[Finding]) -> list[Finding]:
    """`findings`, with the held findings of each kernel that does not parse and has none now.

    `held` (kernel name -> (its first line, its findings) when it last parsed) is updated in place."""
    if module is None:
        held.clear()
        return findings
    per_kernel: dict[str | None, list[Finding]] = {}
    for f in findings:
        per_kernel.setdefault(f.kernel, []).append(f)
    out = list(findings)
    now: dict[str, tuple[int, list[Finding]]] = {}
    for k in module.kernels:
        line = k.range.start.line
        if not _broken(k):
            now[k.name] = (line, per_kernel.get(k.name, []))
            continue
        last = held.get(k.name)
        if last is None:
            continue
        now[k.name] = last  # held at the version that parsed, until one parses again
        if not per_kernel.get(k.name):
            out.extend(_held_copy(f, line - last[0]) for f in last[1])
    held.clear()
    held.update(now)
    return out
