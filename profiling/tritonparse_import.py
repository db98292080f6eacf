"""TritonParse trace files as launch records.

TritonParse (`pip install tritonparse`; `tritonparse.structured_logging.init(folder,
enable_trace_launch=True)`) writes one JSON object per line, plain (`.ndjson`) or as concatenated
gzip / zstd members (`.bin.ndjson`). Two event types matter here:

- "compilation": `payload.python_source` {file_path, start_line, code} says where the kernel is;
  `payload.metadata` has the compiled `hash`, `num_warps`, `num_stages`, and `src_constants`
  {"(index,)": value}, the arguments that were compile-time constants, by position;
- "launch": `name`, `grid`, `compilation_metadata` (the same metadata, `hash` included) and
  `extracted_args` {name: {"type": "tensor", dtype, shape, stride, storage_offset, data_ptr} |
  {"type": "int" | "float" | "bool" | "str", "value"} | {"type": ..., "repr"}}, in the kernel's
  parameter order.

A launch becomes a LaunchDescriptor; the kernel's file comes from the compilation event with the
same hash and is matched into the project by its longest path suffix that exists there, so a trace
taken on another machine keys like a local capture. Which tensors the kernel writes is not in a
trace: every tensor is marked unwritten. Launches whose kernel file is not in the project are
counted, not kept.
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import io
import json
import os
import textwrap
from dataclasses import replace
from pathlib import Path

from tritonlens.analysis.python_ast import parse as parse_python
from tritonlens.profiling import launch_records
from tritonlens.profiling.project_capture import CaptureOutcome
from tritonlens.profiling.worker.json_message import MessageError
from tritonlens.profiling.worker.messages import LaunchDescriptor

MAX_LINES = 2_000_000


class TraceError(Exception):
    """The trace cannot be read: a short message naming the file."""


def _open_text(path: Path):
    with open(path, "rb") as fh:
        magic = fh.read(4)
    if magic[:2] == b"\x1f\x8b":
        return gzip.open(path, "rt", encoding="utf-8")
    if magic == b"\x28\xb5\x2f\xfd":
        try:
            import zstandard
        except ImportError:
            raise TraceError(f"{path.name} is zstd-compressed: pip install zstandard to read it") from None
        raw = zstandard.ZstdDecompressor().stream_reader(open(path, "rb"), read_across_frames=True)  # noqa: SIM115 - closed with the reader
        return io.TextIOWrapper(raw, encoding="utf-8")
    if path.suffix == ".clp":
        raise TraceError(f"{path.name} is in CLP format: write the trace with TRITON_TRACE_COMPRESSION=none")
    return open(path, encoding="utf-8")


def read_events(path: str | os.PathLike) -> list[dict]:
    """The JSON events of a trace file, or of every trace file in a folder; torn lines are skipped."""
    path = Path(path)
    files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
    if not files or not all(p.is_file() for p in files):
        raise TraceError(f"no trace file at {path}")
    events = []
    for file in files:
        try:
            with _open_text(file) as fh:
                for n, line in enumerate(fh):
                    if n >= MAX_LINES:
                        break
                    try:
                        event = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(event, dict) and isinstance(event.get("event_type"), str):
                        events.append(event)
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            raise TraceError(f"cannot read {file.name}: {exc}") from None
    return events


def _constexpr_names(source: dict) -> set[str] | None:
    """Parameters annotated `tl.constexpr` in the kernel's recorded source, or None without it."""
    code = source.get("code")
    if not isinstance(code, str):
        return None
    try:
        tree = parse_python(textwrap.dedent(code))
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
            return {a.arg for a in args if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)}
    return None


def _align(pointer) -> int | None:
    try:
        value = int(pointer, 16) if isinstance(pointer, str) else int(pointer)
    except (TypeError, ValueError):
        return None
    align = 16
    while align > 1 and value % align:
        align //= 2
    return align


def _arg(name: str, info: dict, constexpr: bool) -> dict:
    kind = info.get("type")
    if constexpr:
        return {"name": name, "kind": "constexpr", "value": info.get("value", info.get("repr"))}
    if kind == "tensor":
        out = {"name": name, "kind": "tensor", "dtype": str(info.get("dtype", "")).replace("torch.", ""),
               "shape": list(info.get("shape") or []), "strides": list(info.get("stride") or []),
               "storage_offset": int(info.get("storage_offset") or 0), "written": False}
        align = _align(info.get("data_ptr"))
        if align is not None:
            out["align"] = align
        return out
    if kind in ("int", "float", "bool"):
        return {"name": name, "kind": "scalar", "type": kind, "value": info.get("value")}
    if kind == "NoneType":
        return {"name": name, "kind": "none"}
    return {"name": name, "kind": "other", "repr": str(info.get("repr", info.get("value", kind)))[:200]}


def launch_descriptor(launch: dict, compilation: dict | None) -> LaunchDescriptor:
    """One "launch" event (and its kernel's "compilation" event, when the trace has it) as a
    LaunchDescriptor. MessageError when the event is not a launch."""
    args_info = launch.get("extracted_args")
    if not isinstance(launch.get("name"), str) or not isinstance(args_info, dict):
        raise MessageError("a tritonparse launch event has a name and extracted_args")
    meta = launch.get("compilation_metadata") or {}
    payload = (compilation or {}).get("payload") or {}
    source = payload.get("python_source") or {}
    names = list(args_info)
    constants = (payload.get("metadata") or {}).get("src_constants") or {}
    by_index = set()
    for key in constants:
        try:
            index = ast.literal_eval(key)
        except (ValueError, SyntaxError):
            continue
        if isinstance(index, tuple) and len(index) == 1 and isinstance(index[0], int) and index[0] < len(names):
            by_index.add(names[index[0]])
    annotated = _constexpr_names(source)
    constexpr = by_index & annotated if annotated is not None else by_index
    args = [_arg(n, info if isinstance(info, dict) else {}, n in constexpr) for n, info in args_info.items()]
    grid = [int(g) for g in (launch.get("grid") or [])][:3]
    grid += [1] * (3 - len(grid))
    sig = {"kernel": launch["name"], "args": args, "grid": grid, "num_warps": meta.get("num_warps"),
           "num_stages": meta.get("num_stages")}
    return LaunchDescriptor.from_json({
        "kernel": launch["name"], "qualname": launch["name"], "source": "tritonparse", "mode": "gpu",
        "key": hashlib.sha256(json.dumps(sig, sort_keys=True, default=str).encode()).hexdigest()[:16],
        "case": None, "grid": grid, "num_warps": meta.get("num_warps"), "num_stages": meta.get("num_stages"),
        "constexprs": {a["name"]: a["value"] for a in args if a["kind"] == "constexpr"}, "args": args,
        "file": source.get("file_path"), "def_line": source.get("start_line"),
    }, "tritonparse launch")


def project_file(root: Path, recorded: str | None) -> str | None:
    """The project file a trace's absolute path names: its longest suffix that exists under
    `root`, relative to it with forward slashes; None when no suffix does."""
    if not recorded:
        return None
    parts = Path(recorded).parts
    for start in range(1, len(parts)):
        candidate = Path(*parts[start:])
        if (root / candidate).is_file():
            return candidate.as_posix()
    return None


def import_trace(trace: str | os.PathLike, project: str | os.PathLike = ".") -> CaptureOutcome:
    """Read a TritonParse trace (a file or a folder of them) and save its launches of the
    project's kernels as records of the project that `project` (a file or folder) belongs to."""
    root = launch_records.project_root(Path(project) / "pyproject.toml" if Path(project).is_dir() else project)
    events = read_events(trace)
    compilations = {}
    for event in events:
        if event["event_type"] == "compilation":
            digest = ((event.get("payload") or {}).get("metadata") or {}).get("hash")
            if digest:
                compilations[digest] = event
    origin = f"tritonparse {Path(trace).name}"
    outcome = CaptureOutcome(root=root, command=[], origin=origin)
    launches = [e for e in events if e["event_type"] == "launch"]
    distinct: dict[tuple[str, str], launch_records.StoredLaunch] = {}
    for event in launches:  # a trace has every launch: repeats become one record with its count
        compilation = compilations.get((event.get("compilation_metadata") or {}).get("hash"))
        try:
            launch = launch_descriptor(event, compilation)
        except (MessageError, TypeError, ValueError):
            continue
        rel = project_file(root, launch.more.get("file"))
        if rel is None:
            outcome.outside += 1
            continue
        seen = distinct.get((rel, launch.key))
        if seen is not None:
            launch = replace(seen.launch, count=seen.launch.count + 1)
        distinct[(rel, launch.key)] = launch_records.StoredLaunch(launch, rel, origin)
    outcome.recorded = list(distinct.values())
    if outcome.recorded:
        outcome.kept = launch_records.save(root, outcome.recorded)
    else:
        outcome.reason = (f"{Path(trace).name} has no launch event (trace with enable_trace_launch=True)"
                          if not launches else
                          f"none of its {len(launches)} launches is of a kernel file found under {root}")
    return outcome
