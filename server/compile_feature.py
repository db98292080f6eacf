"""Compile-backed insight in the editor (issue 10): TL101–TL106 on save, the "compiled for sm_90"
hover section, and the IR of a kernel with the lines of one source line marked.

The cross-compile runs in the compile engine's worker process (tritonlens.profiling.compile_api),
called from a thread so typing never waits: per document it is debounced, and a save of new text
cancels the compile still running for older text (the engine kills its worker). Its findings are
kept apart from the static ones (DocumentState.extra["compile"]), each anchored to the source of
its kernel: a static re-publish shows them moved with their kernel, and drops them once that
kernel's text changed, since they describe the compile of the text they were computed on.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from .diagnostics import AnchoredFinding, kernel_hash
from .documents import may_hold_kernels, snapshot_of
from .engines import COMPILE, EngineUnavailable, load
from .progress import Cancelled, Progress

log = logging.getLogger(__name__)

PRODUCER = "compile"
SHOW_IR_REQUEST = "tritonlens/showIr"
IR_STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")
_DEBOUNCE = "compile"
_REQUEST_FAILED = -32803  # LSP's RequestFailed: the request was valid, the work could not be done


@dataclass
class Compiled:
    """The latest compile answer for a document: valid for `text`, per kernel while its source holds."""

    seq: int
    version: int | None
    text: str
    target: str
    python: str
    result: dict
    kernel_hashes: dict[str, str]
    seconds: float


@dataclass
class _Run:
    seq: int
    key: tuple
    cancel: threading.Event
    task: asyncio.Task


@dataclass
class CompileService:
    latest: dict[str, Compiled] = field(default_factory=dict)
    running: dict[str, _Run] = field(default_factory=dict)
    seq: int = 0
    warm: asyncio.Task | None = None
    told: set = field(default_factory=set)  # problems already shown to the user once


def service(ls) -> CompileService:
    return ls.compiles


# -- when to compile ------------------------------------------------------------------------------


def _is_python(ls, uri: str) -> bool:
    doc = ls.workspace.text_documents.get(uri)
    language = getattr(doc, "language_id", None)
    return language == "python" or (language in (None, "") and uri.endswith((".py", ".pyi")))


def _wanted(ls, uri: str) -> bool:
    settings = ls.settings.for_uri(uri)
    if not settings.compile_on_save or not _is_python(ls, uri):
        return False
    if not settings.trusted:
        # Capturing launches runs the file's harness: never in an untrusted workspace.
        _tell_once(ls, ("untrusted",), "compile on save is off in an untrusted workspace: it would run the "
                   "workspace's code", quiet=True)
        return False
    return True


def saved(ls, uri: str) -> None:
    if _wanted(ls, uri):
        delay = ls.settings.for_uri(uri).debounce_ms / 1000
        ls.debouncer.schedule((_DEBOUNCE, uri), delay, lambda: compile_document(ls, uri))


def opened(ls, uri: str) -> None:
    saved(ls, uri)


def closed(ls, uri: str) -> None:
    ls.debouncer.cancel((_DEBOUNCE, uri))
    svc = service(ls)
    run = svc.running.pop(uri, None)
    if run is not None:
        run.cancel.set()
    svc.latest.pop(uri, None)


def settings_changed(ls) -> None:
    """Compile findings of a document whose compile settings changed no longer apply."""
    svc = service(ls)
    for uri in list(ls.workspace.text_documents):
        settings = ls.settings.for_uri(uri)
        latest = svc.latest.get(uri)
        on = _publishes(settings)
        if not on and (latest is not None or uri in svc.running):
            log.info("compile findings of %s withdrawn: compile on save is off", uri)
            drop(ls, uri)
        elif on and latest is not None and (latest.target, latest.python) != (settings.compile_target,
                                                                              settings.python):
            log.info("compile findings of %s withdrawn: the compile target or interpreter changed", uri)
            drop(ls, uri)
            saved(ls, uri)


def _publishes(settings) -> bool:
    return settings.compile_on_save and settings.trusted


def drop(ls, uri: str) -> None:
    svc = service(ls)
    svc.latest.pop(uri, None)
    run = svc.running.pop(uri, None)
    if run is not None:
        run.cancel.set()
    st = ls.analysis.docs.get(uri)
    if st is not None and st.extra.pop(PRODUCER, None) is not None:
        st.generation += 1


def _tell_once(ls, key, message: str, quiet: bool = False) -> None:
    svc = service(ls)
    if key in svc.told:
        return
    svc.told.add(key)
    if quiet:
        log.info(message)
    else:
        log.warning(message)
        ls.show_info(message, kind=types.MessageType.Warning)


# -- compiling --------------------------------------------------------------------------------------


async def compile_document(ls, uri: str) -> Compiled | None:
    """Compile the saved text of `uri` (or join the compile of the same text already running)."""
    snap = snapshot_of(ls, uri)
    if snap is None or not may_hold_kernels(snap.text) or not snap.path or not Path(snap.path).is_file():
        return None
    try:
        on_disk = Path(snap.path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if on_disk != snap.text:
        # The harness that finds the launches runs the file on disk: compiling other text with its
        # launches would describe a kernel that does not exist yet.
        log.info("compile of %s waits for a save: the editor's text differs from the file", uri)
        return None
    settings = ls.settings.for_uri(uri)
    analysis = await ls.analysis.analyze(snap, settings)
    module = getattr(analysis, "module", None)
    if module is None or not module.kernels:
        return None
    svc = service(ls)
    key = (snap.text, settings.compile_target, settings.python)
    run = svc.running.get(uri)
    if run is not None and not run.task.done():
        if run.key == key:
            return await asyncio.shield(run.task)  # a save of the same text: that compile answers it
        run.cancel.set()  # newer text: the older compile is worthless, its worker is killed
    svc.seq += 1
    cancel = threading.Event()
    task = asyncio.ensure_future(_compile(ls, uri, snap, module, settings, cancel, svc.seq))
    mine = svc.running[uri] = _Run(svc.seq, key, cancel, task)

    def finished(_task):
        if svc.running.get(uri) is mine:
            del svc.running[uri]

    task.add_done_callback(finished)
    return await asyncio.shield(task)


async def _compile(ls, uri, snap, module, settings, cancel: threading.Event, seq: int) -> Compiled | None:
    try:
        api = load(COMPILE, "Compiling")
    except EngineUnavailable as exc:
        _tell_once(ls, ("engine",), str(exc), quiet=True)
        return None
    names = ", ".join(k.name for k in module.kernels)
    t0 = time.perf_counter()
    try:
        async with Progress(ls, f"tritonlens: compiling {names} for {settings.compile_target}") as p:
            p.on_cancel(cancel.set)
            try:
                result = await asyncio.to_thread(api.compile_file, snap.path, text=snap.text,
                                                 target=settings.compile_target, python=settings.python or None,
                                                 cancel=cancel)
            except api.CompileCancelled as exc:
                raise Cancelled(str(exc)) from exc
    except Cancelled:
        log.info("compile of %s cancelled (a newer save, a close or the user)", uri)
        return None
    except api.CompileError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        _tell_once(ls, ("error", uri, first), f"cannot compile {Path(snap.path).name}: {first}")
        log.debug("compile of %s failed: %s", uri, exc)
        return None
    seconds = time.perf_counter() - t0
    svc = service(ls)
    latest = svc.latest.get(uri)
    if cancel.is_set() or uri not in ls.workspace.text_documents or (latest is not None and latest.seq > seq):
        return None  # superseded while it ran
    now = ls.settings.for_uri(uri)
    if (now.compile_target, now.python) != (settings.compile_target, settings.python):
        return None  # the settings moved on while it ran
    findings = api.findings_from(result, snap.text)
    hashes = {k.name: kernel_hash(k.text) for k in module.kernels}
    anchored = []
    for f in _selected(findings, settings, snap.text):
        k = module.kernel(f.kernel) if f.kernel else None
        if k is not None:
            anchored.append(AnchoredFinding(f, k.name, hashes[k.name], k.range.start.line))
    compiled = Compiled(seq, snap.version, snap.text, settings.compile_target, settings.python, result, hashes,
                        seconds)
    svc.latest[uri] = compiled
    if not _publishes(now):
        # Switched off while it ran, or compiled for Show IR only: the IR and the hover facts
        # stand, the diagnostics are not wanted.
        log.info("compiled %s for %s in %.0f ms (diagnostics off)", Path(snap.path).name,
                 settings.compile_target, seconds * 1000)
        return compiled
    st = ls.analysis.state(uri)
    st.extra[PRODUCER] = anchored
    st.generation += 1
    for err in result.get("capture_errors") or []:
        # The harness failed before a launch: that launch has no compile facts. Say why once.
        _tell_once(ls, ("capture", uri, err), f"{Path(snap.path).name}: the harness raised before launching "
                   f"a kernel; kernels it did not reach are compiled from their launch sites and autotune "
                   f"configs with assumed arguments: {err}", quiet=True)
    log.info("compiled %s for %s in %.0f ms%s: %d finding(s)", Path(snap.path).name, settings.compile_target,
             seconds * 1000, " (cached)" if result.get("cached") else "", len(anchored))
    show(ls, uri)
    return compiled


def _selected(findings, settings, text: str):
    """The select/ignore settings and `# tritonlens: ignore[...]` comments apply as to static rules."""
    from tritonlens.analysis.suppress import is_suppressed, suppressions

    table = suppressions(text)
    for f in findings:
        code = f.code.upper()
        if settings.select and not any(code.startswith(s) for s in settings.select):
            continue
        if any(code.startswith(s) for s in settings.ignore):
            continue
        if table and is_suppressed(f, table):
            continue
        yield f


def show(ls, uri: str) -> None:
    """Deliver the document's diagnostics again, now with the compile findings."""
    if not ls.client_support.pull_diagnostics:
        ls.schedule_diagnostics(uri, 0)
    elif ls.client_support.diagnostic_refresh:
        ls.workspace_diagnostic_refresh(None)
    # A pull client without refresh support gets them with its next pull (the result id moved on).


# -- lifecycle --------------------------------------------------------------------------------------


def initialized(ls) -> None:
    """Start the compile worker now (Triton's import costs seconds) so the first save pays only
    for its compile."""
    settings = ls.settings.global_settings
    if not (settings.compile_on_save and settings.trusted):
        return
    try:
        api = load(COMPILE, "Compiling")
    except EngineUnavailable as exc:
        log.info("%s", exc)
        return

    async def warm():
        t0 = time.perf_counter()
        try:
            await asyncio.to_thread(api.warm_up, settings.python or None)
            log.info("compile worker ready in %.1f s", time.perf_counter() - t0)
        except Exception as exc:  # a broken interpreter shows up again, clearly, on the first save
            log.warning("compile worker did not start: %s", exc)

    service(ls).warm = ls.spawn(warm())


def shutdown(ls) -> None:
    svc = service(ls)
    for run in svc.running.values():
        run.cancel.set()
    svc.running.clear()
    try:
        api = load(COMPILE, "Compiling")
    except EngineUnavailable:
        return
    # Stopping a worker waits for its current job, which the cancels above end within a poll;
    # bounded so that a wedged worker cannot hold the shutdown answer.
    t = threading.Thread(target=api.shutdown, name="tritonlens-compile-shutdown", daemon=True)
    t.start()
    t.join(timeout=5)


# -- hover --------------------------------------------------------------------------------------------


def _size(n) -> str:
    return "?" if n is None else f"{n:,} B"


def _config_row(c: dict) -> str:
    label = c.get("label") or "configuration"
    opts = ", ".join(f"{k}={c[k]}" for k in ("num_warps", "num_stages") if c.get(k) is not None)
    consts = ", ".join(f"{k}={v}" for k, v in (c.get("constexprs") or {}).items())
    name = label + (f" ({consts}; {opts})" if consts and opts else f" ({consts or opts})" if consts or opts else "")
    spills = "none" if not c.get("spill_bytes") else _size(c["spill_bytes"])
    occ = c.get("occupancy")
    occupancy = "?" if occ is None else f"{occ:g}%" + (f" ({c['limiter']})" if c.get("limiter") else "")
    pipelined = {True: f"yes ({c.get('pipeline')})", False: "no", None: "no global loads"}[c.get("pipelined")]
    vectorised = {True: "yes", False: "no", None: "no global loads"}[c.get("vectorized")]
    return (f"| {name} | {c.get('registers')} | {spills} | {_size(c.get('shared_bytes'))} | {occupancy} | "
            f"{c.get('mma') or 'no tl.dot'} | {pipelined} | {vectorised} |")


def arg_dtypes(ls, uri: str, kernel: str) -> dict[str, str]:
    """Argument dtypes the document's latest compile saw (from the captured launches' signatures,
    e.g. {"a_ptr": "*fp16", "stride_am": "i32"}): what shape inference needs to type loads and
    pointer arithmetic. A parameter
    whose dtype differs between configurations is left out (unknown stays unknown)."""
    svc = getattr(ls, "compiles", None)
    latest = svc.latest.get(uri) if svc is not None else None
    if latest is None:
        return {}
    entry = next((e for e in latest.result.get("kernels") or [] if e.get("name") == kernel), None)
    seen: dict[str, set] = {}
    for c in (entry or {}).get("configs") or []:
        for name, ty in (c.get("signature") or {}).items():
            if isinstance(ty, str) and ty != "constexpr":  # pointers and scalars ("*fp16", "i32")
                seen.setdefault(name, set()).add(ty)
    return {name: next(iter(tys)) for name, tys in seen.items() if len(tys) == 1}


def hover_section(ls, uri: str, k) -> str | None:
    """The kernel card's "compiled for sm_90" section, from the document's latest compile."""
    svc = getattr(ls, "compiles", None)
    latest = svc.latest.get(uri) if svc is not None else None
    if latest is None:
        return None
    entry = next((e for e in latest.result.get("kernels") or [] if e.get("name") == k.name), None)
    if entry is None:
        return None
    stale = latest.kernel_hashes.get(k.name) != kernel_hash(k.text)
    origin = ("static model: literal launch sites and autotune configs, assumed arguments"
              if entry.get("source") == "static" else latest.result.get("source") or "configurations")
    head = (f"**Compiled for {latest.target}** (Triton {latest.result.get('triton_version')}, "
            f"{origin})" + (" · _before the last edit_" if stale else ""))
    configs = entry.get("configs") or []
    ok = [c for c in configs if not c.get("error") and c.get("registers") is not None]
    parts = [head]
    if entry.get("note"):
        parts.append(f"_{entry['note']}_")
    assumed = list(dict.fromkeys(a for c in configs for a in c.get("assumed") or []))
    if assumed:
        parts.append("Assumed (no captured launch):\n" + "\n".join(f"- {a}" for a in assumed[:6]))
    if ok:
        parts.append("| configuration | registers | spills | shared memory | occupancy (limiter) | MMA | pipelined "
                     "| vectorised |\n|---|---|---|---|---|---|---|---|\n" + "\n".join(_config_row(c) for c in ok[:8]))
        if len(ok) > 8:
            parts.append(f"_{len(ok) - 8} more configurations not shown._")
    errors = [c for c in configs if c.get("error")]
    for c in errors[:4]:
        e = c["error"]
        where = f" at line {e['line']}" if e.get("line") else ""
        parts.append(f"- {c.get('label')}: compile error{where}: {e.get('message')}")
    if entry.get("error"):
        parts.append(f"- {entry['error'].get('message') if isinstance(entry['error'], dict) else entry['error']}")
    if not configs and not entry.get("error") and not entry.get("note"):
        parts.append("_No launch of this kernel was captured: nothing compiled._")
    return "\n\n".join(parts)


# -- Show IR ----------------------------------------------------------------------------------------


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
    api = load(COMPILE, "Compiled IR")
    snap = snapshot_of(ls, uri)
    path = snap.path if snap is not None else _fs_path(uri)
    if not path or not Path(path).is_file():
        raise EngineUnavailable(f"{uri} is not a file on disk; save it first")
    text = Path(path).read_text(encoding="utf-8")
    if kernel is None:
        kernel = await _kernel_at(ls, uri, source_line)
        if kernel is None:
            raise EngineUnavailable("no kernel at that line: name the kernel")
    svc = service(ls)
    latest = svc.latest.get(uri)
    if latest is None or latest.text != text or latest.target != settings.compile_target or \
            latest.python != settings.python:
        if snap is not None and snap.text == text and _is_python(ls, uri):
            latest = await compile_document(ls, uri)  # also refreshes the document's compile findings
        else:
            latest = None
    if latest is not None:
        try:
            out = await asyncio.to_thread(_ir_from_result, latest.result, kernel, stage, source_line,
                                          settings.python or None)
        except api.CompileError as exc:
            if "not in the cache" not in str(exc):
                raise EngineUnavailable(f"cannot show IR: {exc}") from exc
            out = None  # IR files cleaned away under the answer: the engine compiles again
    else:
        out = None
    if out is None:
        try:
            out = await asyncio.to_thread(api.show_ir, path, kernel, stage, line=source_line, text=text,
                                          target=settings.compile_target, python=settings.python or None)
        except api.CompileError as exc:
            raise EngineUnavailable(f"cannot show IR: {exc}") from exc
    marked = list(out.get("marked_lines") or [])
    return {"text": out["text"], "language": out.get("language"), "markedLines": marked, "marked_lines": marked,
            "sourceLine": source_line, "lineMap": out.get("line_map"), "kernel": kernel, "stage": stage,
            "config": out.get("config")}


def _fs_path(uri: str) -> str | None:
    from pygls.uris import to_fs_path

    return to_fs_path(uri)


async def _kernel_at(ls, uri: str, source_line: int | None) -> str | None:
    snap = snapshot_of(ls, uri)
    if snap is None or source_line is None:
        return None
    module = getattr(await ls.analysis.analyze(snap, ls.settings.for_uri(uri)), "module", None)
    k = module.kernel_at(source_line - 1) if module is not None else None
    return k.name if k is not None else None


def _ir_from_result(result: dict, kernel: str, stage: str, source_line: int | None, python) -> dict:
    """The engine's show_ir, answered from a compile result the server already holds (show_ir
    itself recompiles per kernel, which would capture the launches again)."""
    from tritonlens.profiling import compile_job, ptx_facts

    ir, facts = compile_job.ir_text(result, kernel, stage, 0, python)
    ptx = None
    if stage == "sass":
        try:
            ptx = compile_job.ir_text(result, kernel, "ptx", 0)[0]
        except compile_job.CompileError:
            ptx = None
    lmap = ptx_facts.line_map(stage, ir, result["path"], ptx)
    marked = [i for i, ln in enumerate(lmap) if source_line is not None and ln == source_line]
    return {"text": ir, "marked_lines": marked, "language": compile_job.LANGUAGES[stage], "line_map": lmap,
            "config": facts.get("label")}


def _request_params(params) -> dict:
    if isinstance(params, dict):
        return params
    if hasattr(params, "_asdict"):
        return params._asdict()
    return dict(getattr(params, "__dict__", {}) or {})


def register(ls) -> None:
    ls.compiles = CompileService()

    @ls.feature(SHOW_IR_REQUEST)
    async def _show_ir(params):
        """{uri, kernel?, stage, line} → {text, language, markedLines, sourceLine, lineMap, ...}.

        `line` and `sourceLine` are 0-based like every LSP position; markedLines are 0-based IR
        lines; lineMap gives each IR line's 0-based source line (or null).
        """
        p = _request_params(params)
        uri, kernel, stage, line = p.get("uri"), p.get("kernel"), p.get("stage", "ptx"), p.get("line")
        if not isinstance(uri, str):
            raise JsonRpcInvalidParams(message=f"{SHOW_IR_REQUEST}: `uri` must be a string, got {uri!r}")
        if kernel is not None and not isinstance(kernel, str):
            raise JsonRpcInvalidParams(message=f"{SHOW_IR_REQUEST}: `kernel` must be a string, got {kernel!r}")
        if stage not in IR_STAGES:
            raise JsonRpcInvalidParams(message=f"{SHOW_IR_REQUEST}: `stage` must be one of {', '.join(IR_STAGES)}, "
                                               f"got {stage!r}")
        if line is not None and (not isinstance(line, int) or isinstance(line, bool) or line < 0):
            raise JsonRpcInvalidParams(message=f"{SHOW_IR_REQUEST}: `line` must be a 0-based line number, got {line!r}")
        try:
            out = await show_ir(ls, uri, kernel, stage, None if line is None else line + 1)
        except EngineUnavailable as exc:
            raise JsonRpcException(message=str(exc), code=_REQUEST_FAILED) from exc
        return {"text": out["text"], "language": out["language"], "markedLines": out["markedLines"],
                "sourceLine": line, "lineMap": [None if ln is None else ln - 1 for ln in out["lineMap"] or []],
                "kernel": out["kernel"], "stage": stage, "config": out["config"]}
