"""The server's profile and optimize commands: run the engine's worker jobs, file their results.

The engines are blocking (they drive a worker process); they run on a thread, get a
`threading.Event` to stop on, and the server never executes user code itself.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from pygls.uris import to_fs_path
from tritonlens.analysis.findings import Finding, Severity

from . import code_lens, engines, kernel_results
from .diagnostics import AnchoredFinding, kernel_hash
from .documents import snapshot_of
from .capture_commands import NothingToRun
from .engines import EngineUnavailable
from .lsp_data import wire_json
from .measurements import compiled_columns
from .progress import Cancelled, Progress

if TYPE_CHECKING:  # the reports arrive with the engines, which load on first use
    from tritonlens.profiling.worker.reports import OptimizeReport, ProfileReport

log = logging.getLogger(__name__)

# {"backend": spec, "device": name}: the hardware a backend runs kernels on, as its worker found it.
DEVICE_NOTIFICATION = "tritonlens/device"


async def call_engine(fn, /, *args, **kwargs):
    """Run a blocking engine function on a thread with exactly the options given.

    An option the engine does not take is an error (TypeError), never silently left out: a
    setting the user changed must either reach the engine or fail loudly.
    """
    return await asyncio.to_thread(fn, *args, **kwargs)


def path_of(uri: str) -> str:
    path = to_fs_path(uri)
    if not path or not Path(path).is_file():
        raise EngineUnavailable(f"{uri} is not a file on disk; save it first")
    return path


def _require_trusted(settings, what: str) -> None:
    """Profiling, optimizing and compiling run the workspace's code (in a worker, but still):
    never in a workspace the client marked untrusted (`trusted: false`)."""
    if not settings.trusted:
        raise EngineUnavailable(f"{what} is off in an untrusted workspace: it would run the workspace's code")


def _unsaved_warning(ls, uri: str, path: str) -> None:
    snap = snapshot_of(ls, uri)
    try:
        on_disk = Path(path).read_text(encoding="utf-8")
    except OSError:
        return
    if snap is not None and snap.text != on_disk:
        ls.show_info("the file has unsaved changes; profiling the saved version")


async def _model(ls, uri: str):
    snap = snapshot_of(ls, uri)
    if snap is None:
        try:
            from .documents import Snapshot

            snap = Snapshot(uri=uri, version=None, text=Path(path_of(uri)).read_text(encoding="utf-8"))
        except (OSError, EngineUnavailable):
            return None
    result = await ls.analysis.analyze(snap, ls.settings.for_uri(uri))
    return getattr(result, "module", None)


async def profile(ls, uri: str, kernel: str | None, *, title: str | None = None) -> dict:
    """Profile one kernel (or every kernel of the file) through tritonlens.profiling.api.

    The engine caches by kernel source hash and launch signature, so profiling the whole file
    after a save times only the kernels that changed.
    """
    settings = ls.settings.for_uri(uri)
    _require_trusted(settings, "Profiling")
    api = engines.profiling()
    path = path_of(uri)
    _unsaved_warning(ls, uri, path)
    harness = ls.capture_tests.harness.get(path)
    if not harness:
        await _require_cases(api, path, kernel)
    loop = asyncio.get_running_loop()
    async with Progress(ls, title or f"tritonlens: profiling {kernel or 'kernels'} in {Path(path).name}") as p:
        cancel = threading.Event()
        p.on_cancel(cancel.set)

        def progress(message: str, percent: int | None) -> None:  # called on the engine's thread
            loop.call_soon_threadsafe(p.report, message, percent)

        try:
            report = await p.run(call_engine(
                api.profile_file, path, kernel=kernel, backend=settings.backend,
                python=settings.python or None, ncu=settings.ncu, lines=settings.line_samples, progress=progress,
                cancel=cancel, timeout=settings.timeout_s, harness=harness,
            ))
        except api.ProfileError as exc:
            raise EngineUnavailable(f"cannot profile: {exc}") from exc
        finally:
            cancel.set()  # the worker stops if the await ended early for any reason
        if p.cancelled.is_set():
            raise Cancelled("profiling cancelled")
    if report.error is not None and report.error.type == "harness" and not any(e.launches for e in report.kernels):
        # The worker found nothing to run (or could not import the file): a dead end with its
        # ways out, not a failed measurement.
        raise NothingToRun(kernel, _nothing_line(report.error.message, Path(path).name))
    await record_profile(ls, uri, report)
    if report.error:
        ls.show_error(f"profiling {Path(path).name} failed: {kernel_results.failure_line(str(report.error))}")
    return {"ok": not report.error, "report": wire_json(report.to_json())}


NO_CASES_LINE = ("no recorded launch reaches it and {file} defines no harness (tritonlens_cases(), "
                 "an argument-less test_ function or a __main__ block)")


def _nothing_line(message: str, file: str) -> str:
    # The worker's words for "nothing to run" name the CLI; the editor's buttons are the way out here.
    if message.startswith("nothing to run") or message.startswith("no launch records and no harness"):
        return NO_CASES_LINE.format(file=file)
    return kernel_results.failure_line(message)


async def _require_cases(api, path: str, kernel: str | None) -> None:
    """Profile's dead end before any worker starts: the file has no harness and no launch record.
    (Records of its other kernels only: the worker finds nothing to run, and says so.)"""

    def why() -> str | None:
        try:
            source = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None  # the engine says so in its own words
        return api.missing_cases(path, source)

    missing = await asyncio.to_thread(why)
    if missing:
        raise NothingToRun(kernel, _nothing_line(missing, Path(path).name))


async def record_profile(ls, uri: str, report: ProfileReport) -> None:
    module = await _model(ls, uri)
    st = ls.analysis.state(uri)
    anchored = [a for a in st.extra.get("profile", [])]
    for entry in report.kernels:
        name = entry.name
        k = module.kernel(name) if module is not None else None
        if k is None:
            continue
        m = kernel_results.Measurement(
            kernel=name, kernel_hash=kernel_hash(k.text), kernel_line=k.range.start.line, entry=entry,
            mode=report.mode or "interpreter", device=report.device or {}, backend=report.backend,
        )
        ls.measurements.record(uri, m)
        anchored = [a for a in anchored if a.kernel != name]
        msg = kernel_results.diagnostic_message(m)
        if msg:
            f = Finding(code="profile", severity=Severity.INFO, message=msg, range=k.name_range, kernel=name,
                        data={"measured": True})
            anchored.append(AnchoredFinding(f, name, m.kernel_hash, m.kernel_line))
    st.extra["profile"] = anchored
    device = (report.device or {}).get("name")
    if device:
        # Sent whatever started the run (lens, command, save): the editor shows the backend's
        # device, not whichever run last handed one back.
        ls.protocol.notify_json(DEVICE_NOTIFICATION, {"backend": report.backend, "device": device})
    head, sections = _report_parts(ls, uri, report)
    ls.measurements.last_report[uri] = {"markdown": "\n\n".join([head, *sections.values()]),
                                        "json": wire_json(report.to_json()), "head": head, "sections": sections}
    ls.refresh_all()  # diagnostics and lenses


def _report_parts(ls, uri: str, report: ProfileReport) -> tuple[str, dict[str, str]]:
    """The profile report's heading and one section per kernel measured (the report command
    leaves out the section of a kernel whose full report it shows above)."""
    head = "\n\n".join([f"# Profile of {Path(to_fs_path(uri) or uri).name}",
                         f"mode: {report.mode}, backend: {report.backend}"])
    sections: dict[str, str] = {}
    for entry in report.kernels:
        m = ls.measurements.latest(uri, entry.name)
        if m is not None:
            sections[m.kernel] = f"## {m.kernel}\n\n" + kernel_results.hover_markdown(
                m, stale=False, compiled=compiled_columns(ls.compiles.facts(uri), m))
    return head, sections


def llm_options(settings) -> dict | None:
    """Every `tritonlens.llm` setting, in the camelCase keys LLMSettings.from_dict reads; None
    when no endpoint is set (no LLM proposals)."""
    from .config import as_json

    return as_json(settings.llm) if settings.llm.base_url and settings.llm.model else None


async def optimize(ls, uri: str, kernel: str | None) -> dict:
    """Propose, verify and rank rewrites (tritonlens.rewrite.api) of the editor's current text.

    The best rewrite proven faster (timed on a GPU) becomes the kernel's one quick fix while the
    document still holds the text it was verified against; untimed and refused ones show in the
    kernel's hover card and report only.
    """
    settings = ls.settings.for_uri(uri)
    _require_trusted(settings, "Optimization")
    api = engines.rewrite()
    path = path_of(uri)
    snap = snapshot_of(ls, uri)
    text = snap.text if snap is not None else Path(path).read_text(encoding="utf-8")
    llm = llm_options(settings)
    proposers = ("config", "rules") + (("llm",) if llm else ())

    def latest_entry(name: str):
        m = ls.measurements.latest(uri, name)
        return m.entry if m is not None else None

    # the kernels' latest per-line samples order the candidates and reach the LLM's prompt;
    # optimize_file drops those taken on another version of a kernel's source, with a note
    hot_lines = api.measured_lines(text, kernel, latest_entry)
    loop = asyncio.get_running_loop()
    async with Progress(ls, f"tritonlens: optimizing {kernel or 'kernels'} in {Path(path).name}") as p:
        cancel = threading.Event()
        p.on_cancel(cancel.set)

        def progress(message: str, fraction: float | None) -> None:  # called on the engine's thread
            pct = int(fraction * 100) if isinstance(fraction, (int, float)) else None
            loop.call_soon_threadsafe(p.report, message, pct)

        try:
            options = api.OptimizeOptions(
                proposers=proposers, kernel=kernel, llm=llm, rounds=settings.llm.rounds, backend=settings.backend,
                python=settings.python or None, job_timeout_s=settings.timeout_s,
                budget_s=float(settings.optimize_budget_s))
            report = await p.run(call_engine(api.optimize_file, path, options, text=text, progress=progress,
                                             cancel=cancel, hot_lines=hot_lines))
        except api.OptimizeError as exc:  # bad input: a clear answer, not an internal error
            raise EngineUnavailable(f"cannot optimize: {exc}") from exc
        finally:
            cancel.set()
        if p.cancelled.is_set():
            raise Cancelled("optimization cancelled")
    module = await _model(ls, uri)
    names = [kernel] if kernel else [k.name for k in (module.kernels if module is not None else [])]
    for name in names:
        k = module.kernel(name) if module is not None else None
        if k is not None:
            ls.measurements.record_optimize(uri, kernel_results.OptimizeOutcome(name, kernel_hash(k.text), report, text))
    ls.measurements.last_report[uri] = {"markdown": _optimize_markdown(report), "json": wire_json(report.to_json())}
    code_lens.refresh(ls)
    return {"ok": True, "report": wire_json(report.to_json())}


def _optimize_markdown(report: OptimizeReport) -> str:
    lines = [f"# Optimization of {report.kernel or 'the file'}",
             f"mode: {report.mode}, baseline: {report.baseline_ms} ms"]
    for c in report.candidates:
        verdict = "accepted" if c.accepted else "refused"
        lines.append(f"- **{c.title}** ({c.proposer}): {verdict} — {c.reason}")
    if report.refusals:
        lines.append(report.refusals)
    lines += [f"note: {note}" for note in report.notes]  # why the LLM loop stopped, where its transcript is
    return "\n\n".join(lines)

