"""Device "cuda" mapped to the CPU, so code written for a GPU runs under Triton's interpreter on a
machine without one. Standalone (torch; triton for the autotuner): the worker ships it to the interpreter that runs the
user's tests, and replay / profile reuse it.

    import cuda_on_cpu
    cuda_on_cpu.install()          # also sets TRITON_INTERPRET=1; call before the user's imports
    ...
    cuda_on_cpu.uninstall()        # the real torch.cuda again
    with cuda_on_cpu.mapped(): ... # the same, for a block

What is mapped:
- every torch function, Tensor method and factory given `device="cuda"`, `"cuda:N"`,
  `torch.device("cuda")` or a bare device index gets the CPU instead (a TorchFunctionMode sees
  factories such as torch.randn / empty / tensor / arange and methods such as new_empty);
- `Tensor.cuda()` and `Tensor.to("cuda" | torch.device("cuda") | N)` stay on (or move to) the CPU;
- `Tensor.is_cuda` answers True, so "if x.is_cuda: triton path" takes the Triton path;
- torch.cuda: is_available, device_count, current_device, set_device, synchronize, empty_cache,
  get_device_capability (9, 0), get_device_name, get_device_properties, is_bf16_supported,
  manual_seed(_all), memory_allocated / max_memory_allocated / reset_peak_memory_stats,
  mem_get_info and the properties' total_memory (this machine's memory: what the tensors take),
  device(...)
  as a no-op context; torch.set_default_device("cuda") means the CPU;
- torch.compile gives back the function itself: host code it compiles runs eagerly;
- torch._C's current-device and raw-stream getters, which a CPU build lacks, answer device 0 and
  its default stream (0), so libraries that bind them at import load.

What it cannot map (a test relying on these still fails, and says so in its own error):
- `x.device` is the CPU device, so `x.device.type == "cuda"` or `x.device == torch.device("cuda")`
  is False; torch.device itself cannot be replaced, nor torch.Generator(device="cuda");
- CUDA streams, events, graphs, torch.cuda.amp autocast on cuda, NCCL, cuda-only ops (flash
  attention, cuBLAS-specific dtypes such as float8 matmuls);
- Triton's driver (`triton.runtime.driver.active...`) and triton.testing.do_bench, which need a GPU;
- the mode is per thread: tensors made by other threads' code are not mapped;
- what Triton's interpreter itself cannot run (inline assembly, the GPU driver): those of its gaps
  that can be shimmed are (interpreter_shims.py), the rest named by interpreter_limit() there;
- autotuning: the interpreter cannot time configs, so an autotuned kernel runs its first (pruned)
  config, not the one a GPU would choose; records made on a GPU host have that one.
"""

from __future__ import annotations

import contextlib
import functools
import os
import types

import torch
from torch.overrides import TorchFunctionMode

CAPABILITY = (9, 0)
DEVICE_NAME = "cuda-on-cpu (Triton interpreter)"
_installed: dict = {}


def _is_cuda(device) -> bool:
    if isinstance(device, torch.device):
        return device.type == "cuda"
    if isinstance(device, str):
        return device == "cuda" or device.startswith("cuda:")
    return isinstance(device, int) and not isinstance(device, bool)


def _cpu(device):
    return torch.device("cpu") if _is_cuda(device) else device


def _to_args(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """Tensor.to(self, device?, dtype?, ...): the device may come first positionally."""
    if len(args) > 1 and not isinstance(args[1], torch.Tensor) and _is_cuda(args[1]):
        args = (args[0], torch.device("cpu"), *args[2:])
    return args, kwargs


class CudaOnCpu(TorchFunctionMode):
    """Rewrites device arguments naming CUDA to the CPU on every torch call made under it."""

    def __torch_function__(self, func, types_, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if "device" in kwargs and _is_cuda(kwargs["device"]):
            kwargs["device"] = torch.device("cpu")
        if func is torch.Tensor.cuda:
            return args[0].to("cpu", non_blocking=bool(kwargs.get("non_blocking", False)))
        if func is torch.Tensor.to:
            args, kwargs = _to_args(tuple(args), kwargs)
        elif getattr(func, "__self__", None) is torch.Tensor.is_cuda:  # the property's getter
            return True
        return func(*args, **kwargs)


class _Properties(types.SimpleNamespace):
    pass


def _host_memory() -> tuple[int, int]:
    """(available, total) bytes of this machine's memory, which is where "cuda" tensors live here:
    a test that sizes itself or skips by the device's free memory must see the CPU's, not a GPU's."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            info = {ln.split(":")[0]: int(ln.split()[1]) << 10 for ln in fh if ln.split()[1:2]}
        return info["MemAvailable"], info["MemTotal"]
    except (OSError, KeyError, ValueError, IndexError):
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        return total // 2, total


# A harness run (a check of a rewrite, a profile's replay) on the CPU uses small inputs: with an
# H100's 132 SMs a persistent kernel would give each program at most one tile, and a candidate that
# is wrong only once a program loops over several tiles would pass. One SM makes them loop.
HARNESS_SM_COUNT = 1


def _properties(device=None, sm_count: int = 132) -> _Properties:
    return _Properties(name=DEVICE_NAME, major=CAPABILITY[0], minor=CAPABILITY[1],
                       total_memory=_host_memory()[1], multi_processor_count=sm_count, warp_size=32,
                       max_shared_memory_per_block_optin=227 * 1024, L2_cache_size=50 * 2**20)


def _answer(name: str, value):
    """A fresh stand-in per name: torch._dynamo keys its rules by function identity, and one
    function object under two torch.cuda names trips its duplicate check."""

    def stand_in(*args, **kwargs):
        return value() if callable(value) else value

    stand_in.__name__ = stand_in.__qualname__ = name
    return stand_in


def _cuda_functions(claim_gpu: bool = True) -> dict:
    answers = {
        "is_available": True, "is_initialized": True, "device_count": 1, "current_device": 0,
        "set_device": None, "synchronize": None, "empty_cache": None, "get_device_capability": CAPABILITY,
        "get_device_name": DEVICE_NAME,
        "get_device_properties": (_properties if claim_gpu
                                  else functools.partial(_properties, sm_count=HARNESS_SM_COUNT)),
        "is_bf16_supported": True,
        # torch.manual_seed seeds the CPU generator and then calls these: no-ops, never recursion
        "manual_seed": None, "manual_seed_all": None, "memory_allocated": 0, "max_memory_allocated": 0,
        "memory_reserved": 0, "reset_peak_memory_stats": None, "device": contextlib.nullcontext,
        "mem_get_info": _host_memory,  # (free, total) of the memory the tensors really take
    }
    return {name: _answer(name, value) for name, value in answers.items()}


def install(claim_gpu: bool = True) -> bool:
    """Map "cuda" to the CPU (main thread) until uninstall(). Returns False, changing nothing,
    when a real CUDA device is present. `claim_gpu=False` leaves torch.cuda.is_available()
    answering False: a harness that sizes its cases by it keeps its CPU sizes (a project's tests
    need True, or they skip their GPU tests)."""
    if _installed:
        return True
    if torch.cuda.is_available():
        return False
    _installed[("env", "TRITON_INTERPRET")] = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "1"
    for name, fn in _cuda_functions(claim_gpu).items():
        if name == "is_available" and not claim_gpu:
            continue
        _installed[("cuda", name)] = getattr(torch.cuda, name, None)
        setattr(torch.cuda, name, fn)
    set_default = torch.set_default_device
    _installed[("torch", "set_default_device")] = set_default
    torch.set_default_device = lambda device: set_default(_cpu(device))
    _installed[("torch", "compile")] = torch.compile
    torch.compile = _eager
    for name, fn in _RUNTIME_GETTERS.items():  # only where this build of torch lacks them
        if not hasattr(torch._C, name):
            _installed[("torch._C", name)] = None
            setattr(torch._C, name, fn)
    from triton.runtime import autotuner

    _installed[("autotuner", "do_bench")] = autotuner.Autotuner.__dict__["do_bench"]
    autotuner.Autotuner.do_bench = property(lambda tuner: _untimed)
    shims().install()
    _installed[("shims", "")] = None
    mode = CudaOnCpu()
    mode.__enter__()
    _installed[("mode", "")] = mode
    return True


def shims():
    """The interpreter's gaps shimmed (interpreter_shims.py, beside this file): installed with the
    mapping, since both exist only for the interpreter on a host without a GPU."""
    try:
        import interpreter_shims
    except ImportError:  # imported as tritonlens.profiling.worker.cuda_on_cpu
        from . import interpreter_shims
    return interpreter_shims


# torch's CUDA runtime getters that libraries bind at import (`_get_raw_stream =
# torch._C._cuda_getCurrentRawStream`): a CPU build of torch has none, so the import fails before any
# test runs. With the CPU standing in for device 0 they answer device 0 and its default stream.
_RUNTIME_GETTERS = {
    "_cuda_getCurrentRawStream": lambda device=None: 0,
    "_cuda_getDevice": lambda: 0,
}


def _eager(model=None, **_options):
    """torch.compile while "cuda" is the CPU: the function itself, run eagerly. Compiling host code
    for a GPU that is not here fails inside dynamo (it traces torch.cuda down to C functions a CPU
    build lacks) and would change nothing the interpreter computes."""
    return model if model is not None else (lambda fn: fn)


def _untimed(kernel_call, quantiles=None, **kwargs):
    """The autotuner's benchmark without a GPU: nothing can be timed, every config ties, so the
    autotuner keeps its first (pruned) config; the launch with it runs and is recorded as usual."""
    return [0.0] * len(quantiles) if quantiles else 0.0


def uninstall() -> None:
    """Undo install(): a worker that serves further jobs sees the real torch.cuda again."""
    if not _installed:
        return
    mode = _installed.pop(("mode", ""))
    mode.__exit__(None, None, None)
    for (where, name), original in _installed.items():
        if where == "cuda" and original is not None:
            setattr(torch.cuda, name, original)
        elif where == "cuda":
            delattr(torch.cuda, name)
        elif where == "torch":
            setattr(torch, name, original)
        elif where == "torch._C":
            delattr(torch._C, name)
        elif where == "shims":
            shims().uninstall()
        elif where == "autotuner":
            from triton.runtime import autotuner

            autotuner.Autotuner.do_bench = original
        elif original is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = original
    _installed.clear()


def installed() -> bool:
    return bool(_installed)


@contextlib.contextmanager
def mapped(claim_gpu: bool = True):
    """`with mapped(): ...`: "cuda" is the CPU inside (when no GPU is here), as before outside.
    Yields whether the mapping is on. `claim_gpu`: as install()'s."""
    ours = not _installed and install(claim_gpu)
    try:
        yield installed()
    finally:
        if ours:
            uninstall()
