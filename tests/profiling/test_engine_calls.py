"""How the server calls the engines: every option reaches the engine, or the call fails loudly."""

import asyncio
import os

import pytest
from tritonlens.server import engines
from tritonlens.server.worker_jobs import call_engine

DATA = os.path.join(os.path.dirname(__file__), "data")


def test_an_option_the_engine_does_not_take_is_an_error_not_dropped():
    def engine(path, kernel=None):
        return {"path": path, "kernel": kernel}

    assert asyncio.run(call_engine(engine, "a.py", kernel="k")) == {"path": "a.py", "kernel": "k"}
    with pytest.raises(TypeError, match="timeout"):
        asyncio.run(call_engine(engine, "a.py", kernel="k", timeout=5))


def test_the_profiling_engine_gets_the_servers_options():
    # A harness option reaches the real engine: an unknown harness file is its error, not ignored.
    api = engines.profiling()
    with pytest.raises(api.ProfileError, match="no such harness file"):
        asyncio.run(call_engine(api.profile_file, os.path.join(DATA, "zero_config.py"),
                                harness=os.path.join(DATA, "missing.py::cases"), timeout=30))


def test_engines_are_the_real_modules():
    from tritonlens.profiling import api, compile_job
    from tritonlens.rewrite import api as rewrite_api

    assert engines.profiling() is api and engines.rewrite() is rewrite_api and engines.compiling() is compile_job
