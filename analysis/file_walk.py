"""Which Python files `check` reads when it is given folders.

Projects that ship kernels for several vendors keep each vendor's copy in a folder named for it
(`backend/_ascend/`, `backends/_cambricon/`, `triton_ascend/`). Those copies are built by that
vendor's fork of Triton for hardware whose warps, shared memory and API differ, so the rules, which
model NVIDIA GPUs and the installed Triton, would judge them wrongly: a walk skips them and says how
many it skipped. A file or folder named on the command line is always read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

SKIP_DIRS = frozenset({".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", "build", "dist", ".mypy_cache"})

# Folder names (lower case, leading underscores dropped) of backends other than NVIDIA's.
OTHER_BACKENDS = frozenset({
    "aipu", "amd", "arm", "ascend", "cambricon", "cpu", "dcu", "enflame", "gcu", "hip", "hygon", "iluvatar",
    "kunlunxin", "maca", "metax", "mlu", "mthreads", "musa", "npu", "rocm", "sunrise", "triton_ascend",
    "tsingmicro", "xpu",
})


def other_backend(folder: str) -> str | None:
    """The backend a folder name stands for, when it is not NVIDIA's: the whole name (`_ascend`) or
    its last word (`flash_attn_triton_amd`), as projects name a vendor's copy of a package."""
    name = folder.lstrip("_").lower()
    if name in OTHER_BACKENDS:
        return name
    last = name.rsplit("_", 1)[-1]
    return last if "_" in name and last in OTHER_BACKENDS else None


@dataclass
class Walk:
    """What a walk over the command line's paths found."""

    errors: list[str] = field(default_factory=list)
    other_backends: dict[str, int] = field(default_factory=dict)  # backend → files skipped

    def skipped_line(self) -> str | None:
        if not self.other_backends:
            return None
        n = sum(self.other_backends.values())
        names = ", ".join(sorted(self.other_backends))
        return (f"skipped {n} file{'s' if n != 1 else ''} in folders for other backends ({names}); "
                "name such a folder to check it")


def iter_python_files(paths: list[str], walk: Walk):
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            for f in sorted(p.rglob("*.py")):
                folders = f.relative_to(p).parts[:-1]
                if any(part in SKIP_DIRS for part in folders):
                    continue
                backend = next((b for b in map(other_backend, folders) if b), None)
                if backend is not None:
                    walk.other_backends[backend] = walk.other_backends.get(backend, 0) + 1
                    continue
                yield f
        elif p.is_file():
            if p.suffix not in (".py", ".pyi"):
                walk.errors.append(f"{raw}: not a Python file, skipped")
                continue
            yield p
        else:
            walk.errors.append(f"{raw}: no such file or directory")
