"""workspace/executeCommand: profile, optimize, report, showIr (arguments: [uri, kernelName, ...]) and
openProfile ([uri, path of a recorded profile report]).

Long commands report `$/progress` and stop when the client cancels. When an engine is missing the
command says so (window/showMessage and the result), it never invents a result.
"""

from __future__ import annotations

import logging
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from . import (
    capture_commands,
    engines,
    hover,
    kernel_results,
    open_profile,
    roofline_view,
    show_ir,
    worker_jobs,
)
from .capture_commands import NothingToRun
from .command_ids import OPEN_PROFILE, OPTIMIZE, PROFILE, REPORT, SHOW_IR
from .engines import EngineUnavailable
from .progress import Cancelled

log = logging.getLogger(__name__)


def _uri_kernel(command: str, args: tuple, extra: int = 0) -> tuple:
    if len(args) < 1 or not isinstance(args[0], str):
        raise JsonRpcInvalidParams(message=f"{command}: expected arguments [uri, kernelName], got {list(args)!r}")
    kernel = args[1] if len(args) > 1 else None
    if kernel is not None and not isinstance(kernel, str):
        raise JsonRpcInvalidParams(message=f"{command}: kernelName must be a string, got {kernel!r}")
    return (args[0], kernel, *args[2:2 + extra])


def unavailable(ls, exc: Exception) -> dict:
    ls.show_info(str(exc), types.MessageType.Warning)
    return {"ok": False, "error": str(exc)}


def announce(ls, verb: str, kernel: str | None, summary: str, result: dict) -> dict:
    """The result with its summary and the notice the editor shows: the VS Code extension shows it
    with its buttons; any other client hears it here, in the same words."""
    message = kernel_results.notice(verb, kernel, summary)
    if not ls.client_support.shows_command_results:
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=message))
    return {**result, "summary": summary, "message": message}


def register(ls) -> None:
    capture_commands.register(ls)

    @ls.command(PROFILE)
    async def profile(*args):
        uri, kernel = _uri_kernel(PROFILE, args)
        try:
            result = await worker_jobs.profile(ls, uri, kernel)
        except NothingToRun as exc:
            # Said with its buttons, without holding the command's answer until one is picked.
            ls.spawn(capture_commands.say_nothing_to_run(ls, uri, worker_jobs.path_of(uri), exc))
            return {"ok": False, "error": exc.line}
        except EngineUnavailable as exc:
            return unavailable(ls, exc)
        except Cancelled as exc:
            return {"ok": False, "cancelled": True, "error": str(exc)}
        if not result["ok"]:
            return result  # the failure was shown where it was found
        from tritonlens.profiling.worker.reports import ProfileReport

        report = ProfileReport.from_json(result["report"])
        return announce(ls, "profile", kernel,
                        kernel_results.profile_summary(ls.measurements, uri, report, kernel), result)

    @ls.command(OPTIMIZE)
    async def optimize(*args):
        uri, kernel = _uri_kernel(OPTIMIZE, args)
        roofline_view.keep_profile(ls, uri)
        try:
            result = await worker_jobs.optimize(ls, uri, kernel)
        except EngineUnavailable as exc:
            return unavailable(ls, exc)
        except Cancelled as exc:
            return {"ok": False, "cancelled": True, "error": str(exc)}
        from tritonlens.profiling.worker.reports import OptimizeReport

        report = OptimizeReport.from_json(result["report"])
        return announce(ls, "optimize", kernel, engines.rewrite().summary(report), result)

    @ls.command(REPORT)
    async def report(*args):
        uri, kernel = _uri_kernel(REPORT, args)
        last = ls.measurements.last_report.get(uri)
        # With a kernel name: that kernel's full report (what its hover card leaves out) first.
        full = await hover.full_report(ls, uri, kernel) if kernel else None
        if last is None:
            return {"markdown": full or "No profile or optimization has run for this file yet.", "json": None}
        if not full:
            return await roofline_view.with_picture(ls, uri, {"markdown": last["markdown"], "json": last["json"]})
        # The kernel's own measurement is in its full report already: the last run's section of it
        # would say it twice.
        sections = last.get("sections") or {}
        rest = "\n\n".join([last["head"], *(t for k, t in sections.items() if k != kernel)]) if "head" in last \
            else last["markdown"]
        return await roofline_view.with_picture(ls, uri, {"markdown": full + "\n\n---\n\n" + rest,
                                                          "json": last["json"]})

    @ls.command(SHOW_IR)
    async def show_ir_command(*args):
        uri, kernel, stage, line = (*_uri_kernel(SHOW_IR, args, extra=2), None, None)[:4]
        if line is not None and (not isinstance(line, int) or isinstance(line, bool)):
            return unavailable(ls, EngineUnavailable(f"showIr: the line must be a 1-based line number, got {line!r}"))
        try:
            return {"ok": True, **await show_ir.show_ir(ls, uri, kernel, stage, line)}
        except EngineUnavailable as exc:
            return unavailable(ls, exc)

    @ls.command(OPEN_PROFILE)
    async def open_profile_command(*args):
        if len(args) != 2 or not all(isinstance(a, str) and a for a in args):
            raise JsonRpcInvalidParams(message=f"{OPEN_PROFILE}: expected arguments [uri, path], got {list(args)!r}")
        uri, path = args
        try:
            opened = await open_profile.open_profile(ls, uri, path)
        except open_profile.NotAProfile as exc:
            ls.show_error(str(exc))
            return {"ok": False, "error": str(exc)}
        message = opened.line(Path(path).name)
        ls.show_info(message, types.MessageType.Info if opened.shown else types.MessageType.Warning)
        return {"ok": bool(opened.shown), "message": message, **opened.to_json()}
