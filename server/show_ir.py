"""tritonlens/showIr and the showIr command: the IR of a kernel at one stage, with the lines
compiled from one source line marked. Answered from the document's latest compile when it is for
the saved text, else by the compile engine."""

from __future__ import annotations

import asyncio
from pathlib import Path

import attrs
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.uris import to_fs_path

from . import engines
from .analyzed import analyzed, module_of
from .documents import snapshot_of
from .engines import EngineUnavailable

SHOW_IR_REQUEST = "tritonlens/showIr"
IR_STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")
_REQUEST_FAILED = -32803  # LSP's RequestFailed: the request was valid, the work could not be done


async def show_ir(ls, uri: str, kernel: str | None, stage: str | None, source_line: int | None) -> dict:
    """IR of `kernel` at `stage`; `source_line` is 1-based (the showIr command's convention).

    Answers {"text", "language", "markedLines", "sourceLine", "lineMap", "kernel", "stage",
    "config"}: markedLines are the 0-based IR lines compiled from `source_line`, lineMap the
    1-based source line (or None) of every IR line; "marked_lines" repeats markedLines for
    clients that read the engine's spelling.
    """
    settings = ls.settings.for_uri(uri)
    if not settings.trusted:
        raise EngineUnavailable("Compiling is off in an untrusted workspace: it would run the workspace's code")
    stage = stage or "ptx"
    if stage not in IR_STAGES:
        raise EngineUnavailable(f"unknown IR stage {stage!r}; choose from {', '.join(IR_STAGES)}")
    api = engines.compiling("Compiled IR")
    snap = snapshot_of(ls, uri)
    path = snap.path if snap is not None else to_fs_path(uri)
    if not path or not Path(path).is_file():
        raise EngineUnavailable(f"{uri} is not a file on disk; save it first")
    text = Path(path).read_text(encoding="utf-8")
    if kernel is None:
        kernel = await _kernel_at(ls, uri, source_line)
        if kernel is None:
            raise EngineUnavailable("no kernel at that line: name the kernel")
    compiles = ls.compiles
    latest = compiles.latest.get(uri)
    if latest is None or latest.text != text or latest.target != settings.compile_target or \
            latest.python != settings.python:
        if snap is not None and snap.text == text and compiles.is_python(uri):
            latest = await compiles.compile_document(uri)  # also refreshes the document's compile findings
        else:
            latest = None
    out = None
    if latest is not None:
        try:
            # Answered from the compile the server holds: show_ir would capture the launches again.
            out = await asyncio.to_thread(api.ir_view, latest.result, kernel, stage, source_line, 0,
                                          settings.python or None)
        except api.CompileError as exc:
            if "not in the cache" not in str(exc):
                raise EngineUnavailable(f"cannot show IR: {exc}") from exc
            # IR files cleaned away under the answer: the engine compiles again
    if out is None:
        try:
            out = await asyncio.to_thread(api.show_ir, path, kernel, stage, line=source_line, text=text,
                                          target=settings.compile_target, python=settings.python or None)
        except api.CompileError as exc:
            raise EngineUnavailable(f"cannot show IR: {exc}") from exc
    spec = specialization(out)
    head = [f"{_COMMENT.get(out.language, '//')} {line}" for line in header(kernel, stage, spec)]
    # The header lines come first: every IR line index moves down by their count.
    marked = [i + len(head) for i in out.marked_lines]
    line_map = [None] * len(head) + list(out.line_map or [])
    return {"text": "\n".join([*head, out.text]), "language": out.language, "markedLines": marked,
            "marked_lines": marked, "sourceLine": source_line, "lineMap": line_map, "kernel": kernel,
            "stage": stage, "config": out.config, "specialization": spec}


_COMMENT = {"llvm": ";"}
_SOURCES = {
    "captured": "captured from a run of the code",
    "configs": "the configurations given",
    "static": "read from the text (launch sites, autotune configs, defaults)",
    "pinned": "pinned by you",
    "assumed": "assumed: no launch gives these values",
}


def specialization(view) -> dict:
    """Which specialisation an IR listing is of: its values, target and where the values came from."""
    facts = view.facts
    if facts is None:
        return {"label": view.config, "target": view.target}
    return {"label": facts.label, "constexprs": dict(facts.constexprs), "num_warps": facts.num_warps,
            "num_stages": facts.num_stages, "target": view.target, "triton": view.triton_version,
            "source": facts.source, "valueSources": dict(facts.value_sources)}


def header(kernel: str, stage: str, spec: dict) -> list[str]:
    """The IR listing's first lines, naming the specialisation it shows."""
    target = spec.get("target") or "the compile target"
    triton = f" with Triton {spec['triton']}" if spec.get("triton") else ""
    lines = [f"tritonlens: {stage} of {kernel} compiled for {target}{triton}"]
    values = [f"{k}={v}" for k, v in (spec.get("constexprs") or {}).items()]
    values += [f"{k}={spec[k]}" for k in ("num_warps", "num_stages") if spec.get(k) is not None]
    label = f" ({spec['label']})" if spec.get("label") else ""
    lines.append(f"configuration{label}: {', '.join(values) or 'no values known'}")
    source = spec.get("source")
    if source:
        lines.append(f"values: {_SOURCES.get(source, source)}")
        marked = [f"{k} {v}" for k, v in (spec.get("valueSources") or {}).items()
                  if v in ("pinned", "assumed") and v != source]
        if marked:
            lines.append("except: " + ", ".join(marked))
    return lines


async def _kernel_at(ls, uri: str, source_line: int | None) -> str | None:
    if source_line is None:
        return None
    _snap, result = await analyzed(ls, uri)
    module = module_of(result)
    k = module.kernel_at(source_line - 1) if module is not None else None
    return k.name if k is not None else None


@attrs.frozen
class ShowIrParams:
    """tritonlens/showIr's params; `line` is 0-based like every LSP position."""

    uri: str
    kernel: str | None = None
    stage: str = "ptx"
    line: int | None = None

    @classmethod
    def read(cls, raw) -> ShowIrParams:
        """Checked strictly: a number where a name belongs is an error, not a name."""
        p = raw if isinstance(raw, dict) else raw._asdict() if hasattr(raw, "_asdict") else dict(vars(raw))
        uri, kernel, stage, line = p.get("uri"), p.get("kernel"), p.get("stage", "ptx"), p.get("line")
        if not isinstance(uri, str):
            raise _invalid(f"`uri` must be a string, got {uri!r}")
        if kernel is not None and not isinstance(kernel, str):
            raise _invalid(f"`kernel` must be a string, got {kernel!r}")
        if stage not in IR_STAGES:
            raise _invalid(f"`stage` must be one of {', '.join(IR_STAGES)}, got {stage!r}")
        if line is not None and (not isinstance(line, int) or isinstance(line, bool) or line < 0):
            raise _invalid(f"`line` must be a 0-based line number, got {line!r}")
        return cls(uri, kernel, stage, line)


def _invalid(message: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(message=f"{SHOW_IR_REQUEST}: {message}")


def register(ls) -> None:
    @ls.feature(SHOW_IR_REQUEST)
    async def _show_ir(params):
        """{uri, kernel?, stage, line} → {text, language, markedLines, sourceLine, lineMap, ...}.

        `line` and `sourceLine` are 0-based like every LSP position; markedLines are 0-based IR
        lines; lineMap gives each IR line's 0-based source line (or null).
        """
        p = ShowIrParams.read(params)
        try:
            out = await show_ir(ls, p.uri, p.kernel, p.stage, None if p.line is None else p.line + 1)
        except EngineUnavailable as exc:
            raise JsonRpcException(message=str(exc), code=_REQUEST_FAILED) from exc
        return {"text": out["text"], "language": out["language"], "markedLines": out["markedLines"],
                "sourceLine": p.line, "lineMap": [None if ln is None else ln - 1 for ln in out["lineMap"] or []],
                "kernel": out["kernel"], "stage": p.stage, "config": out["config"],
                "specialization": out["specialization"]}
