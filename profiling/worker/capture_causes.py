"""Why a captured test failed, read from the exception itself, as a CaptureCause a person can act on.
Standard library only, shipped with the worker folder; it runs in the worker, where the exception
object, the interpreter (`sys.executable`) and the project's import paths are at hand.

    cause = cause_of(exc, "tests/test_rms.py::test_fwd")   # missing_module | interpreter_limit | test_failed

The order of the questions is the order of what a person can do about it:
- a module this interpreter cannot import (ModuleNotFoundError anywhere in the chain): install it,
  with the command for the interpreter that ran the tests;
- an error raised under Triton's interpreter (its InterpreterError wraps the real one) or inside
  Triton's or torch.cuda's own code while the CPU stands in for a GPU: the interpreter's limit, named
  as one with the kernel line it stopped at; the same test runs on a GPU;
- anything else: the test's own failure, with the real exception (`Type: message`).
"""

from __future__ import annotations

import importlib.util
import linecache
import os
import re
import sys

try:  # imported as tritonlens.profiling.worker.capture_causes
    from .project_capture_report import (
        CAUSE_INTERPRETER_LIMIT,
        CAUSE_MISSING_MODULE,
        CAUSE_SCRIPT,
        CAUSE_TEST_FAILED,
        CaptureCause,
    )
except ImportError:  # a plain file beside project_capture_report.py
    from project_capture_report import (
        CAUSE_INTERPRETER_LIMIT,
        CAUSE_MISSING_MODULE,
        CAUSE_SCRIPT,
        CAUSE_TEST_FAILED,
        CaptureCause,
    )

try:  # the limits the interpreter is known to have, named once beside the shims for them
    from .interpreter_shims import interpreter_limit_of
except ImportError:
    from interpreter_shims import interpreter_limit_of

# Import names whose distribution on PyPI is named otherwise (pip normalizes case, - and _ itself).
DISTRIBUTIONS = {
    "yaml": "pyyaml", "cv2": "opencv-python", "PIL": "pillow", "sklearn": "scikit-learn",
    "skimage": "scikit-image", "bs4": "beautifulsoup4", "attr": "attrs", "dateutil": "python-dateutil",
    "dotenv": "python-dotenv", "google.protobuf": "protobuf", "Crypto": "pycryptodome", "zmq": "pyzmq",
    "serial": "pyserial", "git": "GitPython", "fitz": "PyMuPDF", "OpenSSL": "pyOpenSSL", "docx": "python-docx",
    "magic": "python-magic", "jwt": "PyJWT", "lxml.etree": "lxml", "sentencepiece": "sentencepiece",
    "flash_attn": "flash-attn", "causal_conv1d": "causal-conv1d", "mamba_ssm": "mamba-ssm",
    "liger_kernel": "liger-kernel", "triton_kernels": "triton-kernels", "flag_gems": "flag-gems",
    "absl": "absl-py", "Levenshtein": "python-Levenshtein", "msgpack_numpy": "msgpack-numpy",
}
# Modules whose raising, with device "cuda" mapped to the CPU, means the CPU cannot do what the GPU would.
GPU_ONLY_MODULES = ("triton.", "torch.cuda")
# A library that took the CUDA path (the CPU stand-in answers is_available() with True) and called
# torch's CUDA runtime, which a CPU build of torch does not have.
CPU_TORCH = re.compile(r"module 'torch\._C' has no attribute '(_cuda\w*)'|dummy base class (_cuda\w*)|"
                       r"Torch not compiled with CUDA enabled|without ATen_cuda library")
# The project's own code refusing the CPU tensors the stand-in gives it (it checks the device itself).
CPU_REFUSED = re.compile(r"\bCPU\b[^.]*\bnot (?:yet )?(?:implemented|supported)|not (?:yet )?(?:implemented|supported) "
                         r"(?:for|on) (?:the )?CPU|(?:must|should) be (?:a |on )?(?:a )?CUDA|only supports? CUDA", re.I)
# A download the machine cannot make: no name resolution, no connection, a hub file not in its cache.
OFFLINE = re.compile(r"Name or service not known|Temporary failure in name resolution|Failed to resolve|"
                     r"Network is unreachable|LocalEntryNotFoundError|ConnectError|Max retries exceeded")
MAIN_BLOCK = re.compile(r"^if\s+__name__\s*==\s*[\"']__main__[\"']\s*:", re.M)
MESSAGE_MAX = 200
ON_A_GPU = "; on a GPU it runs: capture there with --backend ssh://HOST"  # what a limit of the CPU leaves open


def describe(exc: BaseException) -> str:
    """`Type: message` as Python prints it, on one line (the first line of a long message)."""
    text = str(exc).strip()
    first = text.splitlines()[0].strip() if text else ""
    name = type(exc).__name__
    return (f"{name}: {first}" if first else name)[:MESSAGE_MAX]


def chain(exc: BaseException) -> list[BaseException]:
    """The exception and what it wraps, outermost first: `raise ... from`, the context it was raised
    in, and pytest's conftest wrapper (which keeps the real error as `.cause`)."""
    out: list[BaseException] = []
    while exc is not None and all(exc is not seen for seen in out) and len(out) < 16:
        out.append(exc)
        inner = getattr(exc, "cause", None)
        if not isinstance(inner, BaseException):
            inner = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
        exc = inner
    return out


def _is_interpreter_wrapper(exc: BaseException) -> bool:
    return type(exc).__name__ == "InterpreterError" and type(exc).__module__.startswith("triton")


def _wrapper(exc: BaseException) -> bool:
    """An exception that only carries another: pytest's collection and conftest errors, Triton's
    interpreter wrapper."""
    return _is_interpreter_wrapper(exc) or type(exc).__name__ in ("CollectError", "ConftestImportFailure")


def real_exception(exc: BaseException) -> BaseException:
    """The first exception in the chain that is not a wrapper around another."""
    found = chain(exc)
    return next((e for e in found if not _wrapper(e)), found[-1])


def distribution(module: str) -> str:
    """The name pip installs `module` by."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        name = ".".join(parts[:n])
        if name in DISTRIBUTIONS:
            return DISTRIBUTIONS[name]
    return parts[0]


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _built_by_project(top: str, root: str) -> bool:
    """The project builds `top` itself, as an extension its setup.py names (`CUDAExtension(name=
    "selective_scan_cuda", ...)`): pip cannot install it under that name."""
    try:
        with open(os.path.join(root, "setup.py"), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return False
    return re.search(rf"Extension\(\s*(?:name\s*=\s*)?['\"]{re.escape(top)}['\"]", text) is not None


def _project_module(top: str, root: str, importer: str | None) -> str | None:
    """The project's own module named `top` where the importing file would look for it (its own
    folder and those above it, up to the root, and the root's src), as a path relative to the
    root: a script's sibling, a test helper. pip does not have it; the import path missed it."""
    folders = [os.path.join(root, "src"), root]
    if importer:
        folder = os.path.dirname(os.path.realpath(importer))
        real_root = os.path.realpath(root)
        while folder.startswith(real_root + os.sep):
            folders.insert(0, folder)
            folder = os.path.dirname(folder)
    for folder in dict.fromkeys(folders):
        for candidate in (os.path.join(folder, f"{top}.py"), os.path.join(folder, top, "__init__.py")):
            if os.path.isfile(candidate):
                return _relative(os.path.dirname(candidate) if candidate.endswith("__init__.py") else candidate,
                                 root)
    return None


def _importer(exc: BaseException, root: str | None) -> str | None:
    """The project file whose import raised `exc`: the last of the project's frames it passed."""
    if not root:
        return None
    own = [f[1] for f in _frames(exc) if not f[1].startswith("<") and not os.path.relpath(f[1], root).startswith("..")]
    return own[-1] if own else None


def missing_module_cause(module: str, where: str, test: str | None, exception: str,
                         python: str | None = None, root: str | None = None,
                         importer: str | None = None) -> CaptureCause:
    """`where` imports `module`, which this interpreter lacks: the line names it and the fix installs it."""
    python = python or sys.executable
    top = module.split(".")[0]
    dist = distribution(module)
    own = _project_module(top, root, importer) if root else None
    if own is not None:
        line = (f"{where} imports {module}, the project's own {own}, which was not on the import path: "
                f"run the command from {os.path.dirname(own) or 'the project root'} or put that folder on PYTHONPATH")
        return CaptureCause(kind=CAUSE_TEST_FAILED, line=line, module=module, python=python, test=test,
                            exception=exception)
    if root and _built_by_project(top, root):
        line = (f"{where} imports {module}, a compiled extension {os.path.basename(root)} builds on a machine with "
                f"a GPU toolchain; it is not built for {python}: tests that need it cannot run here")
        return CaptureCause(kind=CAUSE_MISSING_MODULE, line=line, module=module, python=python, test=test,
                            exception=exception)
    if module != top and _importable(top):
        fix = f"{python} -m pip install --upgrade {dist}"
        line = f"{where} imports {module}, which the installed {top} lacks (another version has it): {fix}"
    else:
        fix = f"{python} -m pip install {dist}"
        line = f"{where} imports {module}, which is not installed in {python}: {fix}"
    return CaptureCause(kind=CAUSE_MISSING_MODULE, line=line, fix=fix, module=module, python=python, test=test,
                        exception=exception)


def _frames(exc: BaseException) -> list[tuple[str, str, str, int, str]]:
    """(module, file, function, line number, source line) of each frame the exception passed,
    outermost first."""
    out = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        out.append((str(tb.tb_frame.f_globals.get("__name__", "")), code.co_filename, code.co_name, tb.tb_lineno,
                    linecache.getline(code.co_filename, tb.tb_lineno).strip()))
        tb = tb.tb_next
    return out


def _gpu_only(module: str) -> bool:
    return any(module.startswith(m) or module == m.rstrip(".") for m in GPU_ONLY_MODULES)


def _library(module: str) -> bool:
    """Code of the libraries a kernel runs on under the interpreter (numpy, torch, Triton), not the project's."""
    return module.split(".")[0] in ("numpy", "torch", "triton", "builtins")


def _where_it_stopped(exc: BaseException, root: str | None = None,
                      or_innermost: bool = False) -> tuple[str, str] | None:
    """(statement, `file:line in function`) of the last frame of the project's own code (a kernel's
    line, under the interpreter) that the exception passed; with `or_innermost`, the innermost frame
    when none of them is the project's (a library's call into torch)."""
    frames = _frames(exc)
    own = next((f for f in reversed(frames) if not _library(f[0])), frames[-1] if or_innermost and frames else None)
    if own is None:
        return None
    _, file, name, line, text = own
    return text, f"{_relative(file, root) if root else os.path.basename(file)}:{line} in {name}"


def interpreter_cause(inner: BaseException, test: str | None) -> CaptureCause:
    """`inner` (the real error, unwrapped) stopped a kernel under the interpreter, or a call of
    Triton's or torch.cuda's own code that needs the GPU the CPU stands in for."""
    frames = _frames(inner)
    stopped = _where_it_stopped(inner)
    text = describe(inner)
    what = (f"`{stopped[0][:80]}` ({stopped[1]})" if stopped and stopped[0]
            else f"the code at {stopped[1]}" if stopped else "this launch")
    head = f"{test}: " if test else ""
    tail = ON_A_GPU
    limit = interpreter_limit_of(inner)
    if limit is not None:  # a limit known by name: say which, then where
        line = f"{head}Triton's interpreter cannot run {limit.what} on the CPU, at {what} ({text}){tail}"
    elif frames and frames[-1][0].startswith("torch.cuda"):  # torch's CUDA runtime, not a kernel
        call = f"torch.cuda.{frames[-1][2]}"
        line = f"{head}{call} cannot run on the CPU, at {what} ({text}){tail}"
    else:
        line = f"{head}Triton's interpreter cannot run {what} on the CPU ({text}){tail}"
    return CaptureCause(kind=CAUSE_INTERPRETER_LIMIT, line=line, test=test, exception=text)


def _through(exc: BaseException, where_file: str, root: str | None) -> str:
    """" (through FILE)" when the import that failed is in another of the project's files than `where_file`."""
    importer = _importer(exc, root)
    if importer is None:
        return ""
    file = _relative(importer, root)
    return "" if file == where_file else f" (through {file})"


def cause_of(exc: BaseException, test: str | None, python: str | None = None,
             root: str | None = None) -> CaptureCause:
    """The cause of one failing test (or test module, or conftest) `test`."""
    found = chain(exc)
    real = real_exception(exc)
    where = test.split("::")[0] if test else "the command"
    conftest = next((e for e in found if type(e).__name__ == "ConftestImportFailure"), None)
    if conftest is not None:
        where = f"conftest {_relative(str(getattr(conftest, 'path', 'conftest.py')), root)}"
    missing = next((e for e in found if isinstance(e, ModuleNotFoundError) and e.name), None)
    if missing is not None:
        where += _through(missing, where.removeprefix("conftest "), root)
        return missing_module_cause(missing.name, where, test, describe(missing), python=python, root=root,
                                    importer=_importer(missing, root))
    if any(_is_interpreter_wrapper(e) for e in found):
        return interpreter_cause(real, test)
    text = describe(real)
    cuda = next((m for e in found if (m := CPU_TORCH.search(describe(e)))), None)
    if cuda is not None:
        stopped = _where_it_stopped(real, root, or_innermost=True)
        name = next((g for g in cuda.groups() if g), None)
        call = f"torch._C.{name}" if name else "torch's CUDA runtime"
        at = f", at {stopped[1]}" if stopped else ""
        line = (f"{test or 'the command'}: {call} is not in this CPU build of torch; the code took its CUDA path "
                f"because the CPU stands in for the GPU{at}{ON_A_GPU}")
        return CaptureCause(kind=CAUSE_INTERPRETER_LIMIT, line=line, test=test, exception=text)
    if CPU_REFUSED.search(text):
        stopped = _where_it_stopped(real, root, or_innermost=True)
        at = f", at {stopped[1]}" if stopped else ""
        line = (f"{test or 'the command'}: the project's code has no CPU path ({text}), and the CPU stands in "
                f"for the GPU here{at}{ON_A_GPU}")
        return CaptureCause(kind=CAUSE_INTERPRETER_LIMIT, line=line, test=test, exception=text)
    if any(OFFLINE.search(describe(e)) for e in found):
        line = (f"{test or 'the command'} needs the network (a download failed: {text}); run it where the "
                "download can be made, or with the files already in its cache")
        return CaptureCause(kind=CAUSE_TEST_FAILED, line=line, test=test, exception=text)
    if type(real).__name__ == "FixtureLookupError" and test and "::" in test:
        return script_cause(test, getattr(real, "argname", None), root, text)
    frames = _frames(real)
    if frames and _gpu_only(frames[-1][0]):  # raised inside Triton's or torch.cuda's own code
        return interpreter_cause(real, test)
    if test and "::" not in test:
        stopped = _where_it_stopped(real, root)
        at = f" (at {stopped[1]})" if stopped else ""
        line = f"{test} could not be imported: {text}{at}"
    else:
        line = f"{test or 'the command'} failed: {text}"
    return CaptureCause(kind=CAUSE_TEST_FAILED, line=line, test=test, exception=text)


def runs_as_script(file: str, root: str | None) -> bool:
    """Whether the test file has an `if __name__ == "__main__":` block (what its author runs)."""
    try:
        with open(os.path.join(root or ".", file), encoding="utf-8") as fh:
            return bool(MAIN_BLOCK.search(fh.read()))
    except (OSError, UnicodeDecodeError):
        return False


def script_cause(test: str, argname: str | None, root: str | None, text: str) -> CaptureCause:
    """A `test_` function whose arguments are no fixtures: the file is a script pytest collected by
    its name. Its main block, where it has one, is what reaches the kernels."""
    file = test.split("::")[0]
    line = f"{test} is not a pytest test: pytest has no fixture for its argument '{argname or '?'}'"
    if not runs_as_script(file, root):
        return CaptureCause(kind=CAUSE_TEST_FAILED, line=line, test=test, exception=text)
    fix = f"tritonlens capture -- python {file}"
    return CaptureCause(kind=CAUSE_SCRIPT, line=f"{line}; the file is a script, run as one: {fix}", fix=fix,
                        test=test, exception=text)


def _relative(path: str, root: str | None) -> str:
    """`path` from the project's root, or from its environment's site-packages (`bitsandbytes/ops.py`)."""
    if root:
        rel = os.path.relpath(path, root)
        if not rel.startswith(".."):
            return rel.replace(os.sep, "/")
    installed = path.replace(os.sep, "/").rsplit("/site-packages/", 1)
    return installed[1] if len(installed) == 2 else path
