"""Launch records kept in the user's project: what any run has seen a kernel launched with.

A record is a messages.LaunchDescriptor (kernel, constexprs, num_warps / num_stages, every
argument's dtype, shape, strides, alignment offset and scalar value) plus where it came from. They
live in `<project root>/.tritonlens/launches.jsonl`, one JSON object per line, so that a capture
made once (a test run, `tritonlens capture -- python train.py`, a GPU host over ssh, a TritonParse
trace) serves every later compile, profile and optimize on this machine, even a CPU-only one.

The file is deduplicated by launch key and bounded per kernel and in total; the folder carries
its own `.gitignore`, so the records never end up in the user's commits.

Matching a record to a kernel uses the file's path relative to the project root (a capture run
on another host or from a temporary copy keys the same), falling back to the file's base name.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path

from tritonlens.profiling.worker.json_message import MessageError
from tritonlens.profiling.worker.messages import LaunchDescriptor

RECORDS_DIR = ".tritonlens"
RECORDS_FILE = "launches.jsonl"
MAX_PER_KERNEL = 32  # the capture keeps at most this many distinct launches of one kernel, too
MAX_RECORDS = 4000
_ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def project_root(path: str | os.PathLike) -> Path:
    """The project a file belongs to: the nearest folder above it holding pyproject.toml,
    setup.py, setup.cfg or .git; else the topmost folder of its package (`__init__.py` chain);
    else its own folder."""
    start = Path(os.path.abspath(path))
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        if any((candidate / m).exists() for m in _ROOT_MARKERS):
            return candidate
    top = folder
    while (top / "__init__.py").exists() and top.parent != top:
        top = top.parent
    return top


def records_path(root: str | os.PathLike) -> Path:
    return Path(root) / RECORDS_DIR / RECORDS_FILE


@dataclass(frozen=True)
class StoredLaunch:
    """One record: the launch, the kernel's file relative to the project root, and what made it
    ("pytest tests/test_rms.py", "tritonparse trace.ndjson", "ssh gpu-host: pytest -k rms")."""

    launch: LaunchDescriptor
    file: str
    origin: str = ""

    def to_json(self) -> dict:
        return {"file": self.file, "origin": self.origin, "launch": self.launch.to_json()}

    @classmethod
    def from_json(cls, obj) -> StoredLaunch:
        if not isinstance(obj, dict) or not isinstance(obj.get("launch"), dict):
            raise MessageError("a launch record is an object with a 'launch' object")
        return cls(LaunchDescriptor.from_json(obj["launch"], "launch record"), str(obj.get("file") or ""),
                   str(obj.get("origin") or ""))


def relative_file(root: str | os.PathLike, file: str) -> str:
    """`file` relative to `root` with forward slashes, or its base name when it lies elsewhere."""
    try:
        return Path(os.path.realpath(file)).relative_to(os.path.realpath(root)).as_posix()
    except ValueError:
        return os.path.basename(file)


def load(root: str | os.PathLike) -> list[StoredLaunch]:
    """Every readable record of the project; a torn or foreign line is skipped, never fatal."""
    out = []
    try:
        lines = records_path(root).read_text(encoding="utf-8").splitlines()
    except OSError:
        return out
    for line in lines:
        if not line.strip():
            continue
        try:
            out.append(StoredLaunch.from_json(json.loads(line)))
        except (ValueError, MessageError):
            continue
    return out


def save(root: str | os.PathLike, new: list[StoredLaunch]) -> int:
    """Merge `new` into the project's records (a launch seen again adds to its count, the newest
    description wins) and write them back atomically. Returns how many records are kept."""
    merged: dict[tuple[str, str], StoredLaunch] = {}
    for rec in load(root) + list(new):
        key = (rec.file, rec.launch.key or json.dumps(rec.launch.to_json(), sort_keys=True))
        old = merged.pop(key, None)
        if old is not None:
            count = max(rec.launch.count, 1) + max(old.launch.count, 0)
            rec = replace(rec, launch=replace(rec.launch, count=count))
        merged[key] = rec  # re-inserted last: the newest records survive the bounds below
    per_kernel: dict[tuple[str, str], int] = {}
    kept = []
    for rec in reversed(list(merged.values())):
        k = (rec.file, rec.launch.kernel)
        if per_kernel.get(k, 0) >= MAX_PER_KERNEL or len(kept) >= MAX_RECORDS:
            continue
        per_kernel[k] = per_kernel.get(k, 0) + 1
        kept.append(rec)
    kept.reverse()
    path = records_path(root)
    private_folder(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text("".join(json.dumps(r.to_json(), sort_keys=True) + "\n" for r in kept), encoding="utf-8")
    os.replace(tmp, path)
    return len(kept)


def private_folder(folder: str | os.PathLike) -> Path:
    """Create a `.tritonlens` folder (and its parents) that git ignores: what tritonlens keeps there
    (launch records, optimize transcripts) is this machine's, not the project's."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# tritonlens' launch records and reports: this machine's, not the project's\n*\n",
                          encoding="utf-8")
    return folder


def records_for(path: str | os.PathLike, kernel: str | None = None) -> list[LaunchDescriptor]:
    """The recorded launches of the kernels of file `path` (of `kernel` only, when given), oldest
    first. Records made from another copy of the project match by relative path, then base name."""
    root = project_root(path)
    rel = relative_file(root, str(path))
    base = os.path.basename(str(path))
    records = load(root)
    exact = [r for r in records if r.file == rel]
    chosen = exact or [r for r in records if os.path.basename(r.file) == base]
    return [r.launch for r in chosen if kernel is None or r.launch.kernel == kernel]
