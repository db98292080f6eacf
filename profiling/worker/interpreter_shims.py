"""Where Triton's interpreter differs from a GPU run in ways a real kernel hits, and what it cannot
run at all. Standalone (standard library; triton and numpy imported only by install()): shipped as
a plain file beside cuda_on_cpu.py, which installs these shims with the rest of the CPU mapping.

    import interpreter_shims
    interpreter_shims.install()     # only when the interpreter runs: cuda_on_cpu.install() does it
    ...
    interpreter_shims.uninstall()   # the interpreter as Triton ships it

Shimmed (each makes the interpreter do what the compiled kernel does on a GPU):
- scalar arguments passed as Python floats reach the kernel as fp32 scalars, as the launcher types
  them on a GPU (the interpreter hands the bare float over, so `eps.to(tl.float32)` or `eps.dtype`
  fails there); ints already arrive typed;
- libdevice functions (`triton.language.extra.libdevice`, its cuda / hip modules, also imported by
  name) compute with numpy instead of being stubs (libdevice_shim.py holds them);

Not shimmable, named for the capture cause classifier: `interpreter_limit(error, traceback)` answers
the `InterpreterLimit` a failure shows (its `line()` reads "Triton's interpreter cannot run X on the
CPU; on a GPU it runs"), or None when the failure is the test's or the kernel's own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_installed: dict = {}


@dataclass(frozen=True)
class InterpreterLimit:
    """Something a kernel does that Triton's interpreter cannot run: `key` names it for code,
    `what` for a person ("inline assembly (tl.inline_asm_elementwise)")."""

    key: str
    what: str

    def line(self) -> str:
        return f"Triton's interpreter cannot run {self.what} on the CPU; on a GPU it runs"


# (pattern searched in the error and its traceback, the limit it shows), first match wins. The
# patterns are the interpreter's own refusals and the GPU-only runtime calls kernels' hosts make.
_LIMITS: tuple[tuple[re.Pattern, InterpreterLimit], ...] = (
    (re.compile(r"inline_asm not supported in interpreter mode|inline_asm_elementwise"),
     InterpreterLimit("inline_asm", "inline assembly (tl.inline_asm_elementwise)")),
    (re.compile(r"extern_elementwise not supported in interpreter mode"),
     InterpreterLimit("extern_elementwise", "an external device function (tl.extern_elementwise or a "
                                           "libdevice function it has no stand-in for)")),
    (re.compile(r"\d+ active drivers|driver\.active|get_active_torch_device|get_current_stream"),
     InterpreterLimit("gpu_driver", "Triton's GPU driver (triton.runtime.driver.active)")),
    (re.compile(r"triton\.testing\.do_bench|do_bench_cudagraph|Event\(enable_timing"),
     InterpreterLimit("gpu_timing", "GPU timing (triton.testing.do_bench, CUDA events)")),
    (re.compile(r"\bgdc_(?:wait|launch_dependents)\b|\bglobal_timer\b|\bclock\(\)"),
     InterpreterLimit("gpu_intrinsic", "a GPU-only intrinsic (grid dependency control, clocks)")),
)


def interpreter_limit(error: str, traceback: str = "") -> InterpreterLimit | None:
    """The interpreter limitation a failure shows: `error` as Python printed it (`Type: message`),
    `traceback` its formatted traceback (may be empty). None when it shows none of them."""
    text = f"{error}\n{traceback}"
    for pattern, limit in _LIMITS:
        if pattern.search(text):
            return limit
    return None


def interpreter_limit_of(exc: BaseException) -> InterpreterLimit | None:
    """interpreter_limit() for a live exception, reading its whole cause chain (the interpreter wraps
    a kernel's error in one of its own)."""
    import traceback as tb

    return interpreter_limit(f"{type(exc).__name__}: {exc}", "".join(tb.format_exception(exc)))


def _typed_scalar(original):
    """The interpreter's argument conversion, with Python floats made fp32 scalars as on a GPU."""
    import numpy as np
    from triton import language as tl
    from triton.runtime.interpreter import TensorHandle

    def convert(arg):
        if isinstance(arg, float):
            return tl.tensor(TensorHandle(np.array([arg], dtype=np.float32), tl.float32), tl.float32)
        return original(arg)

    convert.__wrapped__ = original
    return convert


def install() -> bool:
    """Shim the interpreter's gaps until uninstall(). Call only where the interpreter runs the
    kernels (cuda_on_cpu.install() does, on a host without a GPU): a GPU run is never touched."""
    if _installed:
        return True
    from triton.runtime import interpreter

    try:
        import libdevice_shim
    except ImportError:  # imported as tritonlens.profiling.worker.interpreter_shims
        from . import libdevice_shim

    _installed["_implicit_cvt"] = interpreter._implicit_cvt
    interpreter._implicit_cvt = _typed_scalar(interpreter._implicit_cvt)
    libdevice_shim.install()
    _installed["libdevice"] = libdevice_shim
    return True


def uninstall() -> None:
    """Undo install(): the interpreter as Triton ships it."""
    if not _installed:
        return
    from triton.runtime import interpreter

    interpreter._implicit_cvt = _installed.pop("_implicit_cvt")
    _installed.pop("libdevice").uninstall()
    _installed.clear()


def installed() -> bool:
    return bool(_installed)
