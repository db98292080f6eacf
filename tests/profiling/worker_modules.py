"""Load the standalone worker modules in a test process without putting their folder on sys.path."""

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
