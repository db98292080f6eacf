"""Pointers loaded through jit helpers of another project file (`from .utils import *`): the words
a helper loads and another helper shifts and masks are packed integers, so the stand-in is int32
and the kernel compiles. Read as text (the helpers' file is found by path, never imported);
compiled by the real Triton compiler (sm_90, no GPU)."""

from pathlib import Path

from tritonlens.profiling.compile_job import compile_file
from tritonlens.profiling.static_configs import static_configs_of_text

FIXTURE = Path(__file__).parent / "fixtures" / "helper_loads" / "quant" / "gemv.py"


def test_words_loaded_and_unpacked_by_imported_helpers_are_integers():
    configs = static_configs_of_text(FIXTURE.read_text(), path=FIXTURE)[0]
    report = compile_file(FIXTURE, target="sm_90")
    for name in ("packed_gemv_kernel", "direct_load_gemv_kernel"):
        (cfg,) = configs[name]
        assert cfg["args"]["b_ptr"]["dtype"] == "int32" and cfg["args"]["a_ptr"]["dtype"] == "float32"
        (c,) = report.kernel(name).configs
        assert c.error is None and c.registers is not None, c.error


def test_without_the_file_the_helpers_are_unknown_and_nothing_is_guessed():
    # the text alone (no path to find .utils from) says nothing about what the helpers do
    (cfg,) = static_configs_of_text(FIXTURE.read_text())[0]["packed_gemv_kernel"]
    assert cfg["args"]["b_ptr"]["dtype"] == "float32"
