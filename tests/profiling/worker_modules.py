"""Load the standalone worker modules in a test process without putting their folder on sys.path."""

import contextlib
import os
import sys


def load_worker_module(name: str):
    """Import worker/<name>.py by path (its folder stays off sys.path: names like `capture` or
    `harness` must not shadow anything for other tests in this process)."""
    import importlib.util

    from tritonlens.profiling.client import WORKER_DIR

    full = f"tritonlens_test_worker_{name}"
    if full in sys.modules:
        return sys.modules[full]
    spec = importlib.util.spec_from_file_location(full, WORKER_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[full] = module
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def worker_imports(interpret: bool = False):
    """The worker's folder on sys.path, as the worker imports its helpers by bare name, and
    TRITON_INTERPRET (set with `interpret`: kernels defined meanwhile become InterpretedFunctions;
    set by capture's import on a machine without a GPU) both put back afterwards, so the compiles of
    later tests in this process see a plain Triton."""
    from tritonlens.profiling.client import WORKER_DIR

    saved = os.environ.get("TRITON_INTERPRET")
    if interpret:
        os.environ["TRITON_INTERPRET"] = "1"
    sys.path.insert(0, str(WORKER_DIR))
    try:
        yield
    finally:
        sys.path.remove(str(WORKER_DIR))
        if saved is None:
            os.environ.pop("TRITON_INTERPRET", None)
        else:
            os.environ["TRITON_INTERPRET"] = saved
