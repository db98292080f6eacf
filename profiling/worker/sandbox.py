"""Containment for the code a worker runs (a workspace kernel, an LLM's candidate): a
`sys.addaudithook` policy. Standard library only (this folder ships as plain files).

Refused, with PermissionError inside the job and a record in the reply ("sandbox" list):
- opening a file for writing outside the writable roots (the worker's temporary working directory,
  the system temp dir, the compiler caches under ~/.triton and ~/.cache, and the folders a job
  names as its own cache);
- starting processes (subprocess, os.system, os.exec*/spawn*/posix_spawn, os.fork), except the
  toolchain Triton itself runs (ptxas, cuobjdump, nvdisasm, a C compiler for its launcher, ldconfig),
  and os.fork while a job of the project's own tests allows it (`forks_allowed`): a forked child is
  this process again, under this hook, in the process group the worker is killed by;
- network connections to anything but loopback or a Unix socket.

An audit hook cannot be removed once added, and it sees the calls C extensions make through the
Python layer; it is not a jail against native code (resource limits and the scrubbed environment
are the other layers), but it stops and reports what a Python-level rewrite would try.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading

TOOLCHAIN = {"ptxas", "ptxas-blackwell", "cuobjdump", "nvdisasm", "gcc", "cc", "clang", "g++", "c++", "ld",
             "ldconfig", "ldconfig.real", "nvidia-smi", "uname"}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_LOOPBACK = ("127.", "::1", "localhost", "0:0:0:0:0:0:0:1")

_state = threading.local()
_roots: list[str] = []
_extra_roots: list[str] = []
attempts: list[dict] = []
_installed = False
_fork_allowed = False


def _real(path) -> str:
    try:
        return os.path.realpath(os.fsdecode(path))
    except (TypeError, ValueError):
        return str(path)


def _under(path: str, roots) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def _is_write(mode, flags) -> bool:
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return True
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS)


def _refuse(kind: str, detail: str) -> None:
    attempts.append({"kind": kind, "detail": detail[:300]})
    raise PermissionError(f"tritonlens worker sandbox: {kind} refused: {detail[:300]}")


def _check_exec(path) -> None:
    name = os.path.basename(os.fsdecode(path)) if isinstance(path, (str, bytes, os.PathLike)) else str(path)
    if name not in TOOLCHAIN:
        _refuse("process", f"starting {os.fsdecode(path) if isinstance(path, (str, bytes)) else path!r}")


def _hook(event: str, args: tuple) -> None:
    if getattr(_state, "inside", False):
        return
    _state.inside = True  # realpath and friends raise audit events of their own
    try:
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            if path is None or isinstance(path, int) or not _is_write(mode, flags):
                return
            real = _real(path)
            if not _under(real, _roots + _extra_roots) and not real.startswith("/dev/"):
                _refuse("write", f"opening {real} for writing (outside the worker's folders)")
        elif event == "subprocess.Popen":  # (executable, args, cwd, env); executable may be None
            program = args[0] if args[0] is not None else (list(args[1])[:1] or [""])[0]
            _check_exec(program)
        elif event in ("os.exec", "os.posix_spawn", "os.spawn"):
            _check_exec(args[0])
        elif event == "os.system":
            _refuse("process", f"os.system({args[0]!r})")
        elif event == "os.fork" and _fork_allowed:
            return
        elif event in ("os.fork", "os.forkpty"):
            _refuse("process", event)
        elif event == "socket.connect":
            sock, address = args[0], args[1]
            if getattr(sock, "family", None) == getattr(__import__("socket"), "AF_UNIX", None):
                return
            host = address[0] if isinstance(address, tuple) and address else str(address)
            if not str(host).startswith(_LOOPBACK):
                _refuse("network", f"connecting to {address!r}")
    finally:
        _state.inside = False


def install(workdir: str | None = None) -> None:
    """Add the hook (once per process). Writable roots: workdir, temp dir, compiler caches."""
    global _installed
    if _installed:
        return
    home = os.path.expanduser("~")
    roots = [workdir or os.getcwd(), tempfile.gettempdir(), os.path.join(home, ".triton"),
             os.path.join(home, ".cache"), os.environ.get("TRITON_CACHE_DIR", ""),
             os.environ.get("TRITON_HOME", ""), os.environ.get("XDG_CACHE_HOME", "")]
    _roots[:] = [_real(r) for r in roots if r]
    sys.addaudithook(_hook)
    _installed = True


@contextlib.contextmanager
def own_tool():
    """A tool the worker itself starts (ncu replaying a launch): not the job's code. The replay it
    runs installs this hook in its own process, so what the kernel's harness does stays contained."""
    was = getattr(_state, "inside", False)
    _state.inside = True
    try:
        yield
    finally:
        _state.inside = was


@contextlib.contextmanager
def forks_allowed():
    """While a project's own tests run (their data loaders, multiprocessing pools with the fork
    start method): os.fork. Exec stays refused, in the children too, so nothing leaves the hook."""
    global _fork_allowed
    was, _fork_allowed = _fork_allowed, True
    try:
        yield
    finally:
        _fork_allowed = was


def allow_for_job(paths) -> None:
    """Folders one job may also write to (its compile cache): given by the trusted client."""
    _extra_roots[:] = [_real(p) for p in paths if isinstance(p, str) and p]


def take_attempts() -> list[dict]:
    out = list(attempts)
    attempts.clear()
    return out
