"""What the compile job needs around the user's module: a stand-in GPU driver (so module-level driver
queries answer on a machine without a GPU), and its kernels unwrapped from autotune / heuristics
decorators. The module itself is loaded by tolerant_module.py."""

from __future__ import annotations

import contextlib
import os


class JobError(Exception):
    """Bad input: the message is for the user."""


class _StandInDriver:
    """Answers the driver calls a module makes at import time (`DEVICE = driver.active.
    get_active_torch_device()`) on a machine with no GPU; anything else is a clear error."""

    def __init__(self, target):
        self._target = target

    def get_current_target(self):
        return self._target

    def get_active_torch_device(self):
        import torch

        return torch.device("cpu")

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def is_active(self):
        return True

    def __getattr__(self, name):
        raise RuntimeError(f"no GPU driver here: triton.runtime.driver.active.{name} is not available "
                           "while tritonlens cross-compiles")


def _may_have_gpu() -> bool:
    return os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/kfd") or os.path.exists("/dev/dxg")


@contextlib.contextmanager
def _compile_mode(target):
    """Kernels must come out as JITFunctions (not the interpreter's), whatever the module asks."""
    import importlib

    saved_env = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "0"  # beats the examples' os.environ.setdefault(...)
    cfg = importlib.import_module("triton.runtime.driver").driver  # the DriverConfig
    saved_active = getattr(cfg, "_active", None)
    stand_in = False
    if saved_active is None:
        if not _may_have_gpu():
            # Probing would import torch (2 s) only to learn what the missing device files say.
            cfg.set_active(_StandInDriver(target))
            stand_in = True
        else:
            try:
                cfg.active  # noqa: B018 - raises where no GPU driver is active
            except Exception:  # noqa: BLE001 - any failure means: no usable driver
                cfg.set_active(_StandInDriver(target))
                stand_in = True
    try:
        yield
    finally:
        if saved_env is None:
            os.environ.pop("TRITON_INTERPRET", None)
        else:
            os.environ["TRITON_INTERPRET"] = saved_env
        if stand_in:
            cfg._active = saved_active


def unwrap_kernel(obj):
    """(JITFunction, autotune configs or None, heuristics {name: fn}) behind a module attribute."""
    from triton.runtime.jit import JITFunction

    configs, heuristics = None, {}
    for _ in range(8):
        if isinstance(obj, JITFunction):
            return obj, configs, heuristics
        kind = type(obj).__name__
        if kind == "Autotuner":
            configs = list(obj.configs)
        elif kind == "Heuristics":
            heuristics.update(obj.values)
        elif kind == "InterpretedFunction":
            raise JobError("the kernel was created in interpreter mode (TRITON_INTERPRET=1 set by the module "
                           "itself); cross-compiling needs a @triton.jit JITFunction")
        if not hasattr(obj, "fn"):
            break
        obj = obj.fn
    raise JobError(f"{type(obj).__name__} is not a @triton.jit kernel")


def def_line(fn) -> int:
    """1-based line of the kernel's `def` (decorators skipped)."""
    lines, first = _source_lines(fn)
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("def ", "async def ")):
            return first + i
    return first


def _source_lines(fn):
    import inspect

    try:
        return inspect.getsourcelines(fn.fn)
    except (OSError, TypeError):
        return [], fn.fn.__code__.co_firstlineno
