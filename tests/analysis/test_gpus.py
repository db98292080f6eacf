"""The one GPU table: its numbers, what derives from it, and that every GPU in it reaches TL013
with its own shared-memory limit (a GPU missing from the table used to be judged as an H100)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tritonlens.analysis import gpus
from tritonlens.analysis.engine import Analyzer

KB = 1024

# The CUDA C++ Programming Guide's figures, typed here independently of the table so that a wrong
# entry fails: (architecture, shared memory per SM, opt-in shared memory per block).
EXPECTED = {
    "A100": ("sm_80", 164 * KB, 163 * KB),
    "L40S": ("sm_89", 100 * KB, 99 * KB),
    "H100": ("sm_90", 228 * KB, 227 * KB),
    "H200": ("sm_90", 228 * KB, 227 * KB),
    "B200": ("sm_100", 228 * KB, 227 * KB),
}


def matmul(stages: int, block_m: int, block_n: int, block_k: int) -> str:
    """An fp16 matmul kernel pipelined over `stages`: stages × (M×K + K×N) × 2 bytes of shared memory."""
    return f'''import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({{"BLOCK_M": {block_m}, "BLOCK_N": {block_n}, "BLOCK_K": {block_k}}},
                           num_warps=8, num_stages={stages})],
    key=["K"],
)
@triton.jit
def mm(a_ptr, b_ptr, c_ptr, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :]).to(tl.float16)
        b = tl.load(b_ptr + (k + rk)[:, None] * BLOCK_N + rn[None, :]).to(tl.float16)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BLOCK_N + rn[None, :], acc)
'''


SIX_STAGE = (Path(__file__).parents[1] / "fixtures" / "gpus" / "six_stage_matmul.py").read_text()
HUGE = matmul(8, 256, 256, 128)  # 8 × (256×128 + 128×256) × 2 B = 1 MiB: over every GPU's limit


def tl013(text: str, gpu: str):
    result = Analyzer().analyze(text, select=["TL013"], target=gpu)
    assert not result.errors, result.errors
    return [f for f in result.findings if f.code == "TL013"]


def test_table_numbers_match_the_programming_guide():
    assert set(gpus.GPUS) == set(EXPECTED)
    for name, (arch, per_sm, per_block) in EXPECTED.items():
        g = gpus.get(name)
        assert (g.arch, g.smem_per_sm, g.smem_per_block) == (arch, per_sm, per_block), name
        assert g.source and g.bandwidth > 0 and g.fp16_flops > 0 and g.sms > 0
    assert gpus.get("H100").measured and gpus.get("H100").bandwidth == 2.97e12


def test_architecture_names_parse():
    assert [gpus.capability(t) for t in ("sm_90", "sm_90a", "sm100", "SM_89")] == [90, 90, 100, 89]
    assert gpus.arch("sm_100a").tensor_core_path == "tcgen05"
    assert gpus.get("sm_89").name == "L40S" and gpus.get("l40s").name == "L40S"
    for bad in ("V100", "sm_75", "sm_9x"):
        with pytest.raises(KeyError, match="known: "):
            gpus.arch(bad)
    with pytest.raises(KeyError, match="known: H100, H200, A100, L40S, B200"):
        gpus.get("V100")


@pytest.mark.parametrize("name", list(gpus.GPUS))
def test_every_gpu_reaches_tl013_with_its_own_limit(name):
    (finding,) = tl013(HUGE, name)
    limit = EXPECTED[name][2]
    assert finding.data["gpu"] == name and finding.data["limit"] == limit
    assert f"{name} allows {limit:,}" in finding.message


@pytest.mark.parametrize("name,flagged", [("A100", True), ("L40S", True), ("H100", False), ("H200", False),
                                          ("B200", False)])
def test_six_stage_128x128x64_fp16_matmul(name, flagged):
    assert SIX_STAGE.startswith("# A 6-stage") and matmul(6, 128, 128, 64) in SIX_STAGE
    found = tl013(SIX_STAGE, name)
    assert bool(found) == flagged, [f.message for f in found]
    if flagged:
        assert found[0].data["shared_bytes"] == 196_608


def test_unknown_gpu_is_an_error_not_an_h100():
    result = Analyzer().analyze(SIX_STAGE, select=["TL013"], target="V100")
    assert not result.findings
    assert any("V100" in e and "known: H100" in e for e in result.errors), result.errors


def test_occupancy_and_compile_findings_derive_from_the_table():
    from tritonlens.profiling import compile_findings, occupancy

    assert occupancy.TARGET_LIMITS is gpus.ARCHS
    assert occupancy.limits_for("sm_89").smem_per_block == 99 * KB
    assert not hasattr(compile_findings, "TENSOR_CORE_PATH")
    # 99 KB per block on Ada: a 100,000-byte block does not fit, on an H100 two do.
    assert occupancy.occupancy("sm_89", 32, 100_000, 4).limiter == "shared memory"
    assert occupancy.occupancy("sm_90", 32, 100_000, 4).blocks_per_sm == 2
    # one warp a program and no shared memory: 32 programs an SM, the block limit, not shared memory's
    small = occupancy.occupancy("sm_90", 14, 0, 1)
    assert (small.blocks_per_sm, small.occupancy, small.limiter) == (32, 50.0, "blocks")
    assert occupancy.occupancy_text(100.0, "registers") == "occupancy 100%"
    assert occupancy.occupancy_text(small.occupancy, small.limiter) == "occupancy 50% (limited by blocks)"


def test_check_cli_takes_a_gpu_and_refuses_unknown_names(tmp_path):
    import subprocess
    import sys

    src = tmp_path / "six.py"
    src.write_text(SIX_STAGE)

    def check(*args):
        return subprocess.run([sys.executable, "-m", "tritonlens", "check", "--select", "TL013", *args, str(src)],
                              capture_output=True, text=True, timeout=60, check=False)

    flagged, fits, unknown = check("--gpu", "l40s"), check("--gpu", "H200"), check("--gpu", "V100")
    assert flagged.returncode == 1 and "L40S allows 101,376" in flagged.stdout
    assert fits.returncode == 0, fits.stdout
    assert unknown.returncode == 2 and "'V100'" in unknown.stderr
    assert all(name in unknown.stderr for name in gpus.GPUS)


def test_worker_reads_the_capability_from_the_target_name(monkeypatch):
    """The worker ships as plain files without tritonlens.analysis: it keeps no GPU table."""
    pytest.importorskip("triton")
    import importlib.util

    from tritonlens.profiling.client import WORKER_DIR

    monkeypatch.syspath_prepend(str(WORKER_DIR))  # its modules import each other by bare name, as in the worker

    spec = importlib.util.spec_from_file_location("tritonlens_test_worker_job_compile_gpus",
                                                  WORKER_DIR / "job_compile.py")
    job_compile = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(job_compile)
    assert "tritonlens" not in (WORKER_DIR / "job_compile.py").read_text().split("def ", 1)[0]
    for name in gpus.ARCHS:
        assert job_compile.make_target(name).arch == gpus.capability(name)
    assert job_compile.make_target("sm_90a").arch == 90
    with pytest.raises(job_compile.JobError, match="unknown target 'V100'"):
        job_compile.make_target("V100")


def test_config_search_budgets_shared_memory_from_the_table():
    from tritonlens.rewrite.propose_config import _smem_budget

    assert _smem_budget({"name": "NVIDIA B200", "mode": "gpu"}) == 227 * KB
    assert _smem_budget({"name": "NVIDIA L40S", "mode": "gpu"}) == 99 * KB
    assert _smem_budget({"name": "NVIDIA A100-SXM4-80GB", "mode": "gpu"}) == 163 * KB
    assert _smem_budget({"name": "Tesla V100", "mode": "gpu"}) == 99 * KB  # unknown: the smallest
    assert _smem_budget({"mode": "interpreter"}) == 227 * KB  # no GPU: the default H100
