"""Where the server finds the profiling, rewrite and compile engines.

They are separate parts of tritonlens and may be missing from an installation (or not written
yet); the server then answers with a clear message instead of a result it did not measure.
"""

from __future__ import annotations

import importlib
import importlib.util

PROFILING = "tritonlens.profiling.api"
REWRITE = "tritonlens.rewrite.api"
COMPILE = "tritonlens.profiling.compile_api"


class EngineUnavailable(Exception):
    pass


def load(module_name: str, what: str):
    try:
        if importlib.util.find_spec(module_name) is None:
            raise EngineUnavailable(f"{what} is not available in this installation ({module_name} is missing)")
    except ModuleNotFoundError as exc:
        raise EngineUnavailable(f"{what} is not available in this installation ({exc.name} is missing)") from exc
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        raise EngineUnavailable(f"{what} cannot start: {exc}") from exc
