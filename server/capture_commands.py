"""The commands that lead out of capture and profile dead ends, as workspace/executeCommand:

    tritonlens.server.capture         [uri]                  the tests that reach the file, now
    tritonlens.server.captureCommand  [uri, "pytest -k x"]   a command of the file's project
    tritonlens.server.useHarness      [uri, "h.py::cases"]   what the file's Profile runs, this session

The captures run in a worker with progress (capture_tests.CaptureTests.capture), as the automatic
one does; a failure is said with its cause and buttons. Profile's own dead end (no launch record
and no harness) is `NothingToRun`, said by `say_nothing_to_run`.
"""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import to_fs_path

from . import capture_notices
from .command_ids import CAPTURE, CAPTURE_COMMAND, USE_HARNESS
from .engines import EngineUnavailable


class NothingToRun(EngineUnavailable):
    """Profile has no launch to run for the kernel: `line` says why, for a person. (Profile on save
    says it as any unavailable engine; the Profile command, with its buttons.)"""

    def __init__(self, kernel: str | None, line: str):
        super().__init__(line)
        self.kernel = kernel
        self.line = line


def _file(command: str, args: list) -> tuple[str, str]:
    if not args or not isinstance(args[0], str):
        raise JsonRpcInvalidParams(message=f"{command}: expected arguments [uri, ...], got {args!r}")
    path = to_fs_path(args[0])
    if not path or not Path(path).is_file():
        raise JsonRpcInvalidParams(message=f"{command}: {args[0]} is not a file on disk; save it first")
    return args[0], path


def _text(command: str, args: list, what: str) -> str:
    if len(args) < 2 or not isinstance(args[1], str) or not args[1].strip():
        raise JsonRpcInvalidParams(message=f"{command}: expected arguments [uri, {what}], got {args!r}")
    return args[1].strip()


async def run(ls, command: str, args: list) -> dict:
    """Run one of this module's commands (from executeCommand, or a message button the server
    runs itself)."""
    uri, path = _file(command, args)
    settings = ls.settings.for_uri(uri)
    if command == USE_HARNESS:
        spec = _text(command, args, '"FILE.py::FUNCTION"')
        hfile, sep, func = spec.rpartition("::")
        if not sep or not hfile or not func.isidentifier():
            return {"ok": False, "error": f"a harness is FILE.py::FUNCTION, got {spec!r}"}
        ls.capture_tests.harness[path] = spec
        return {"ok": True, "harness": spec}
    if not settings.trusted:
        error = "recording launches runs the project's code: it is off in an untrusted workspace"
        ls.show_info(error, types.MessageType.Warning)
        return {"ok": False, "error": error}
    argv = None
    if command == CAPTURE_COMMAND:
        text = _text(command, args, '"pytest ..."')
        try:
            argv = shlex.split(text)
        except ValueError as exc:
            return {"ok": False, "error": f"cannot read the command {text!r}: {exc}"}
    outcome = await ls.capture_tests.capture(uri, path, automatic=False, argv=argv)
    if outcome is None:
        return {"ok": False, "error": "the capture was cancelled or could not start; see the log"}
    if not outcome.recorded:
        return {"ok": False, "error": capture_notices.cause_of(outcome).line}
    return {"ok": True, "recorded": len(outcome.recorded)}


async def say_nothing_to_run(ls, uri: str, path: str, exc: NothingToRun) -> None:
    """Profile's dead end, with the last capture's cause when one failed this session."""
    from tritonlens.profiling.project_tests import find_tests

    cause = ls.capture_tests.cause_for(path)
    tests = bool(await asyncio.to_thread(find_tests, path))
    other = None
    if cause is not None:
        other = await asyncio.to_thread(capture_notices.other_environment, path, cause.python
                                        or ls.settings.for_uri(uri).python or None, cause.module,
                                        ls.client_support.python_candidates)
    notice = capture_notices.no_cases_notice(
        Path(path).name, uri, exc.kernel, exc.line, cause, tests=tests, other_python=other,
        client_commands=ls.client_support.message_commands)
    await capture_notices.offer(ls, notice)


def register(ls) -> None:
    def handler_of(name: str):
        async def handler(*args):
            return await run(ls, name, list(args))

        return handler

    for name in (CAPTURE, CAPTURE_COMMAND, USE_HARNESS):
        ls.command(name)(handler_of(name))
