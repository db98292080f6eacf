"""Every kernel without compile facts says why in one line (`reason`), and a file's compile ends
within its budget: real sm_90 cross-compiles on the CPU, through the CLI's JSON."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tritonlens.profiling.compile_cli import KERNEL_KEYS, to_json
from tritonlens.profiling.compile_job import compile_file
from tritonlens.profiling.no_facts import REASON_WIDTH, reason_line

FIXTURES = Path(__file__).parent / "fixtures"
BUDGET_S = 24.0


def test_a_reason_is_one_line_without_the_traceback_or_the_repr():
    raw = ("Traceback (most recent call last):\n  File \"x.py\", line 3, in f\n    g()\n"
           "NameError('tile_ptrs_2d is not defined')")
    assert reason_line(raw) == "NameError: tile_ptrs_2d is not defined"
    assert reason_line("AssertionError('num_warps must be a power of 2')") == "num_warps must be a power of 2"
    long = "the loads of " + ", ".join(f"pointer_number_{i}" for i in range(20)) + " were never vectorised"
    cut = reason_line(long)
    assert len(cut) <= REASON_WIDTH and cut.endswith("…")
    kept = cut[:-1]
    assert long.startswith(kept) and long[len(kept)] in " ,"  # cut between words, never inside a name


def test_a_ptxas_failure_s_reason_is_its_cause_not_the_repro_command():
    raw = ("PTXAS error: Internal Triton PTX codegen error\n`ptxas` stderr:\n"
           "ptxas fatal   : Unresolved extern function 'vendor_fn'\n\n"
           "Repro command: /opt/ptxas -lineinfo -v --gpu-name=sm_90a /tmp/k.ptx -o /tmp/k.ptx.o")
    assert reason_line(raw) == "ptxas fatal : Unresolved extern function 'vendor_fn'"


@pytest.mark.slow
def test_a_refused_kernel_names_triton_s_reason_in_the_json(tmp_path):
    path = tmp_path / "refused.py"
    path.write_text((FIXTURES / "bad_arange.py").read_text() + "\n\ndef bump(x):\n"
                    "    bad_kernel[(1,)](x, x.numel(), BLOCK=64)\n")
    doc = to_json(compile_file(path))
    (k,) = doc["kernels"]
    assert list(k) == list(KERNEL_KEYS)
    assert k["reason"] == "Triton refused it at line 9: arange's range must be a power of 2", k


@pytest.mark.slow
def test_a_slow_kernel_costs_only_itself_and_the_file_ends_within_its_budget(tmp_path):
    """tuned_kernel's UNROLL=1 config compiles in a second, its UNROLL=4096 one and unrolled_kernel
    (UNROLL=4096 only) take Triton far longer than their shares of the budget."""
    env_cache = {"TRITONLENS_COMPILE_CACHE": str(tmp_path / "compile"), "TRITON_CACHE_DIR": str(tmp_path / "triton")}
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "tritonlens", "compile", "--format", "json", "--budget",
                          f"{BUDGET_S:g}", str(FIXTURES / "budget" / "slow_configs.py")],
                         capture_output=True, text=True, timeout=BUDGET_S + 60, check=False,
                         env={**_env(), **env_cache})
    seconds = time.monotonic() - t0
    doc = json.loads(out.stdout)
    kernels = {k["name"]: k for k in doc["kernels"]}
    tuned, unrolled = kernels["tuned_kernel"], kernels["unrolled_kernel"]
    # The configuration that finished keeps its facts; the one still compiling is named.
    (done,) = tuned["configs"]
    assert done["constexprs"] == {"UNROLL": 1} and done["registers"] > 0 and tuned["reason"] is None
    assert "1 of 2 configurations not compiled within" in tuned["note"]
    assert unrolled["configs"] == [] and unrolled["reason"].startswith("not compiled within "), unrolled
    assert f"the file's {BUDGET_S:g} s budget" in unrolled["reason"]
    # The CLI's own start and imports come on top of the budget, never a kernel's minutes.
    assert seconds < BUDGET_S + 15, seconds


def _env() -> dict:
    import os

    return {k: v for k, v in os.environ.items() if k not in ("TRITONLENS_COMPILE_CACHE", "TRITON_CACHE_DIR")}


@pytest.mark.slow
def test_a_kernel_a_function_builds_is_compiled_from_the_factory_s_call(tmp_path):
    """The kernel exists once `_kernels()` runs: the worker calls it and takes the kernel from the
    namespace it returns; its device helper is compiled inside it, not listed."""
    doc = to_json(compile_file(FIXTURES / "factory_kernels.py"))
    (k,) = doc["kernels"]
    assert (k["name"], k["line"], k["reason"]) == ("double_kernel", 16, None), k
    (c,) = k["configs"]
    assert c["registers"] > 0 and c["source"] == "assumed" and c["constexprs"] == {"BLOCK": 1024}
    # A factory that needs arguments only its callers give is not called: the kernel says so.
    path = tmp_path / "made.py"
    path.write_text((FIXTURES / "factory_kernels.py").read_text().replace("def _kernels():", "def _kernels(scale):")
                    .replace("_kernels().double", "_kernels(2).double"))
    (k,) = to_json(compile_file(path))["kernels"]
    assert k["configs"] == [] and "built by _kernels(), which needs arguments only its callers give" in k["reason"]
    assert len(k["reason"]) <= REASON_WIDTH


@pytest.mark.slow
def test_a_vendor_import_bound_to_none_is_named_as_the_reason():
    doc = to_json(compile_file(FIXTURES / "vendor_libdevice.py"))
    (k,) = doc["kernels"]
    assert k["reason"] == ("libdevice is None here: its import from triton.language.extra.othervendor (line 6) "
                           "is not available in this Triton"), k["reason"]


@pytest.mark.slow
def test_a_fork_s_extension_imported_under_a_version_check_is_named_as_the_reason():
    (k,) = to_json(compile_file(FIXTURES / "vendor_extension.py"))["kernels"]
    assert k["reason"] == ("ext is None here: its import from triton.experimental.otherfork.language (line 7) "
                           "is not available in this Triton"), k["reason"]
