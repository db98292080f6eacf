"""Parameters that are TMA tensor descriptors, and the block shape each one's stand-in gets.

A parameter the kernel loads or stores through as `x_desc.load([m, k])` / `x_desc.store([m, n], v)`
is a descriptor the wrapper builds (`TensorDescriptor.from_tensor(t, block_shape=[BM, BK])`, often
with the block shape set later by an autotune pre-hook); an integer stand-in fails with "'tensor'
object has no attribute 'load'". Its block shape is the tile each offset steps by: the kernel's
tile constexpr named in the offset (`pid_m * BLOCK_M`), in the local it is computed into
(`M_start = pid_m * BLOCK_M`), or in the step of the loop that produces it (`for k in range(0, K,
BLOCK_K)`); an offset that names no tile is a batch index (1) ahead of the tiles, else 64.
"""

from __future__ import annotations

import re

from tritonlens.profiling.kernel_pointers import joined_lines

_ACCESS = re.compile(r"\b([A-Za-z_]\w*)\.(?:load|store|atomic_\w+)\(\s*\[([^\]]*)\]")
_DEFAULT_SIDE = 64


def descriptor_params(kernel) -> dict[str, list[str | int]]:
    """{descriptor parameter: its block shape, each side a constexpr's name or a number}."""
    params = {p.name for p in kernel.params if not p.is_constexpr}
    tiles = [p.name for p in kernel.params if p.is_constexpr]
    text = joined_lines(kernel.text)
    out: dict[str, list[str | int]] = {}
    for m in _ACCESS.finditer(text):
        name, offsets = m.group(1), [o.strip() for o in m.group(2).split(",") if o.strip()]
        if name not in params or name in out or not offsets:
            continue
        sides = [_tile_of(o, tiles, text) for o in offsets]
        first_tile = next((i for i, s in enumerate(sides) if s is not None), len(sides))
        out[name] = [s if s is not None else (1 if i < first_tile and len(sides) > 2 else _DEFAULT_SIDE)
                     for i, s in enumerate(sides)]
    return out


def _tile_of(offset: str, tiles: list[str], text: str) -> str | None:
    found = _named_tile(offset, tiles)
    if found is None and re.fullmatch(r"[A-Za-z_]\w*", offset):
        o = re.escape(offset)
        source = re.search(rf"^\s*{o}\s*=\s*([^\n]+)$", text, re.MULTILINE)
        loop = re.search(rf"\bfor\s+{o}\s+in\s+(?:tl\.)?(?:range|static_range)\(([^\n]*)\)\s*:", text)
        if source is not None:
            found = _named_tile(source.group(1), tiles)
        if found is None and loop is not None:
            step = [a.strip() for a in loop.group(1).split(",")]
            found = _named_tile(step[2], tiles) if len(step) >= 3 else None
    return found


def _named_tile(expr: str, tiles: list[str]) -> str | None:
    named = [t for t in tiles if re.search(rf"\b{re.escape(t)}\b", expr)]
    blocks = [t for t in named if re.search(r"BLOCK|TILE|^B[MNK]$", t, re.IGNORECASE)]
    return (blocks or named or [None])[0]
