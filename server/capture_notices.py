"""The dead ends of capture and profile, said once with their cause and a button for each way out.

A failed capture (its `CaptureCause`: kind, one-line cause, fix, missing module, interpreter) and a
profile with nothing to run become one `window/showMessageRequest`. Each button is an `Action`:
a server command the server runs when it is picked (run the capture, record a command), or a
command of the client's own (write `tritonlens.python`, copy the install command, open the log,
pick a harness) that only a client announcing `experimental.tritonlens.messageCommands` gets: it
runs the command named in the action item itself. Any other client gets the same text, which
names the interpreter to set and the command that fixes it, and the server's buttons.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types

from .command_ids import CAPTURE, CAPTURE_COMMAND

log = logging.getLogger(__name__)

# The client's own commands a message button may name (client-vscode registers them).
SET_PYTHON = "tritonlens.setPython"
COPY_TEXT = "tritonlens.copyText"
SHOW_LOG = "tritonlens.showOutput"
PICK_HARNESS = "tritonlens.pickHarness"
RECORD_COMMAND = "tritonlens.recordCommand"

ENV_FOLDERS = (".venv", "venv", "env", ".env", ".conda")  # where a project keeps its environment
FIND_SPEC_TIMEOUT = 20.0


@dataclass(frozen=True)
class Action:
    """A button: `server` is run by the server when picked, `client` by a client that runs commands."""

    title: str
    server: str | None = None
    client: str | None = None
    arguments: tuple = ()

    def item(self) -> dict:
        """The MessageActionItem, with the client's command beside its title."""
        if self.client is None:
            return {"title": self.title}
        return {"title": self.title, "command": self.client, "arguments": list(self.arguments)}


@dataclass
class Notice:
    message: str
    actions: list[Action] = field(default_factory=list)
    kind: types.MessageType = types.MessageType.Warning


def environments_near(path: str | os.PathLike) -> list[Path]:
    """The Python interpreters of the environments in or above the folder of `path` (a venv, a
    conda env), nearest first."""
    out: list[Path] = []
    folder = Path(path).resolve().parent
    for where in (folder, *folder.parents):
        for name in ENV_FOLDERS:
            env = where / name
            python = env / "bin" / "python"
            if ((env / "pyvenv.cfg").is_file() or (env / "conda-meta").is_dir()) and python.exists():
                out.append(python)
    return out


def _same(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    # A venv's python links to its base: the environment is its folder, not the binary it resolves to.
    return os.path.abspath(a) == os.path.abspath(b)


def has_module(python: str | os.PathLike, module: str) -> bool:
    """Whether `python` finds top-level `module` (its spec only: the module is not imported)."""
    try:
        proc = subprocess.run(
            [str(python), "-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)",
             module.split(".")[0]],
            capture_output=True, timeout=FIND_SPEC_TIMEOUT, cwd=os.path.dirname(str(python)), check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


def other_environment(path: str, used: str | None, module: str | None, candidates: list[str] = ()) -> str | None:
    """An interpreter other than `used` (the one the capture ran with) that has `module`: from
    `candidates` (the editor's chosen interpreter) first, then the environments near `path`."""
    used = used or sys.executable
    for python in [*candidates, *map(str, environments_near(path))]:
        if not python or _same(python, used) or not os.path.exists(python):
            continue
        if module is None or has_module(python, module):
            return python
    return None


def cause_of(outcome):
    """The outcome's CaptureCause; one read from its reason where the worker named none."""
    from tritonlens.profiling.worker import project_capture_report as r

    if outcome.cause is not None:
        return outcome.cause
    if not outcome.command:
        kind = r.CAUSE_NO_TEST_FOUND
    elif outcome.error:
        kind = r.CAUSE_WORKER_FAILED
    elif outcome.outside:
        kind = r.CAUSE_OUTSIDE_ONLY
    else:
        kind = r.CAUSE_NO_LAUNCH
    return r.CaptureCause(kind=kind, line=outcome.reason or "no launch was recorded")


def capture_notice(file: str, uri: str, cause, *, other_python: str | None, client_commands: bool,
                   automatic: bool) -> Notice:
    """What a failed capture of `file` says and offers, by the kind of its cause."""
    from tritonlens.profiling.worker import project_capture_report as r

    head = f"{file}: no launch was recorded from the project's tests" if automatic else f"{file}: nothing recorded"
    text = _sentence(f"{head}: {cause.line}")
    actions: list[Action] = []
    if cause.kind == r.CAUSE_MISSING_MODULE:
        if other_python:
            text += f" {_env_name(other_python)} has {cause.module or 'it'}: set tritonlens.python to {other_python}."
            actions.append(Action("Set tritonlens.python", client=SET_PYTHON, arguments=(other_python, uri)))
        if cause.fix:
            if cause.fix not in text:
                text += f" Install it: {cause.fix}"
            actions.append(Action("Copy install command", client=COPY_TEXT, arguments=(cause.fix,)))
        actions.append(Action("Open log", client=SHOW_LOG))
    elif cause.kind in (r.CAUSE_NO_TEST_FOUND, r.CAUSE_NO_TEST_RAN, r.CAUSE_NO_LAUNCH, r.CAUSE_OUTSIDE_ONLY):
        actions.append(Action("Pick a harness", client=PICK_HARNESS, arguments=(uri,)))
        actions.append(Action("Record a command", client=RECORD_COMMAND, arguments=(uri,)))
        if cause.kind != r.CAUSE_NO_TEST_FOUND:
            actions.append(Action("Open log", client=SHOW_LOG))
    else:  # test failed, interpreter limit, worker failed
        if cause.fix and cause.fix not in text:
            text += f" ({cause.fix})"
        actions.append(Action("Open log", client=SHOW_LOG))
    return _for_client(Notice(text, actions), client_commands, uri)


def no_cases_notice(file: str, uri: str, kernel: str | None, why: str, cause, *, tests: bool,
                    other_python: str | None, client_commands: bool) -> Notice:
    """Profile found nothing to run: no launch record of the kernel and no harness. `why` is the
    profile's own one-line cause; `cause` the last capture's, when one failed this session."""
    what = f"`{kernel}`" if kernel else file
    text = f"Nothing to profile for {what}: {why}"
    actions: list[Action] = []
    if cause is not None:
        text = _sentence(text) + " " + _sentence(f"The tests' capture failed: {cause.line}")
        from tritonlens.profiling.worker import project_capture_report as r

        if cause.kind == r.CAUSE_MISSING_MODULE and other_python:
            text += f" {_env_name(other_python)} has {cause.module or 'it'}: set tritonlens.python to {other_python}."
            actions.append(Action("Set tritonlens.python", client=SET_PYTHON, arguments=(other_python, uri)))
    if tests and not actions:
        actions.append(Action("Record launches from tests", server=CAPTURE, arguments=(uri,)))
    actions.append(Action("Pick a harness", client=PICK_HARNESS, arguments=(uri,)))
    actions.append(Action("Record a command", client=RECORD_COMMAND, arguments=(uri,)))
    return _for_client(Notice(text, actions), client_commands, uri)


def _sentence(text: str) -> str:
    # Causes end in a command or a module name: a full stop before the next sentence reads as one.
    return text if text.rstrip().endswith((".", "!", "?")) else text.rstrip() + "."


def _env_name(python: str) -> str:
    env = Path(python).parent.parent
    return f"The environment {env.name}"


def _for_client(notice: Notice, client_commands: bool, uri: str) -> Notice:
    """A client that runs no command of its own keeps the server's buttons; the text already names
    what the others would do, and says which server command records launches."""
    if client_commands:
        return notice
    kept = [a for a in notice.actions if a.client is None]
    if any(a.title in ("Pick a harness", "Record a command") for a in notice.actions):
        notice.message += (f" To record a command of the project: workspace/executeCommand {CAPTURE_COMMAND} "
                           f"[uri, \"pytest ...\"].")
    return Notice(notice.message, kept, notice.kind)


async def offer(ls, notice: Notice) -> str | None:
    """Show the notice with its buttons; run the server's action when one is picked. Returns the
    title picked (None when dismissed)."""
    log.info("%s", notice.message)
    params = {"type": int(notice.kind), "message": f"tritonlens: {notice.message}",
              "actions": [a.item() for a in notice.actions]}
    try:
        picked = await ls.protocol.request_json(types.WINDOW_SHOW_MESSAGE_REQUEST, params)
    except Exception as exc:  # noqa: BLE001 - a client that cannot ask still has the log
        log.info("window/showMessageRequest failed: %s", exc)
        return None
    title = getattr(picked, "title", None) if picked is not None else None
    if isinstance(picked, dict):
        title = picked.get("title")
    action = next((a for a in notice.actions if a.title == title), None)
    if action is not None and action.server is not None:
        from . import capture_commands

        await capture_commands.run(ls, action.server, list(action.arguments))
    return title
