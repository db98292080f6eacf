"""Real sm_90 / sm_80 cross-compiles of small fixtures: the facts and the TL101–TL105 findings."""

from pathlib import Path

import pytest
from tritonlens.analysis.findings import Severity
from tritonlens.profiling.compile_job import compile_file, findings_from, show_ir
from tritonlens.profiling.occupancy import occupancy

pytestmark = pytest.mark.slow
FIX = Path(__file__).parent / "fixtures"
MM = FIX / "mm_kernel.py"


def mm_config(bm, bn, bk, warps, stages, size=4096, label=None, a_ptr=0):
    t = {"kind": "tensor", "dtype": "float16", "data_ptr": 0}
    i = lambda v: {"kind": "int", "value": v}
    c = lambda v: {"kind": "constexpr", "value": v}
    return {"label": label or f"{bm}x{bn}x{bk}/{warps}w/{stages}s",
            "args": {"a_ptr": {**t, "data_ptr": a_ptr}, "b_ptr": t, "c_ptr": t, "M": i(size), "N": i(size),
                     "K": i(size), "stride_am": i(size), "stride_ak": i(1), "stride_bk": i(size),
                     "stride_bn": i(1), "stride_cm": i(size), "stride_cn": i(1),
                     "BLOCK_M": c(bm), "BLOCK_N": c(bn), "BLOCK_K": c(bk)},
            "options": {"num_warps": warps, "num_stages": stages}}


def line_of(path: Path, needle: str) -> int:
    """1-based line of the first line containing `needle`."""
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if needle in ln)


def by_code(findings, code):
    return [f for f in findings if f.code == code]


def test_spilling_matmul_gets_tl101_and_shared_overflow_tl104_instead_of_a_crash():
    result = compile_file(MM, configs={"matmul_kernel": [mm_config(256, 256, 64, 8, 4)]})
    (k,) = result.kernels
    assert k.line == line_of(MM, "def matmul_kernel")
    (c,) = k.configs
    assert c.error is None
    assert c.registers == 255
    assert c.spill_bytes > 256
    assert c.shared_bytes == 262144  # 4 stages × (256×64 + 64×256) × 2 B
    assert c.mma == "wgmma" and c.pipeline == "cp.async"
    # The JIT's own specialisation: unit strides become constants, the rest divisible by 16.
    assert c.signature["stride_ak"] == "constexpr" and c.specialization["stride_ak"] == "=1"
    assert c.specialization["a_ptr"] == "D" and c.specialization["K"] == "D"
    assert any(ln.spill_bytes > 0 for ln in k.lines)

    findings = findings_from(result)
    (spill,) = by_code(findings, "TL101")
    assert spill.severity in (Severity.WARNING, Severity.ERROR)
    assert spill.severity == (Severity.ERROR if c.spill_bytes >= 1024 else Severity.WARNING)
    spill_lines = {ln.line for ln in k.lines if ln.spill_bytes > 0}
    assert spill.range.start.line + 1 in spill_lines
    (smem,) = by_code(findings, "TL104")
    assert smem.severity == Severity.ERROR and "262,144" in smem.message and "232,448" in smem.message
    assert smem.range.start.line + 1 == k.line


def test_16_row_tile_and_two_warps_miss_wgmma_on_sm90():
    configs = [mm_config(16, 64, 32, 4, 2, label="16 rows"), mm_config(64, 64, 32, 2, 2, label="2 warps"),
               mm_config(128, 128, 64, 8, 3, label="good")]
    result = compile_file(MM, configs={"matmul_kernel": configs})
    facts = {c.label: c for c in result.kernels[0].configs}
    assert facts["16 rows"].mma == "mma.sync"
    assert facts["2 warps"].mma == "mma.sync"
    assert facts["good"].mma == "wgmma"
    # The measured figures for this launch on the H100: 112 registers, 98,304 B.
    assert (facts["good"].registers, facts["good"].shared_bytes) == (112, 98304)
    (tl103,) = by_code(findings_from(result), "TL103")
    dot_line = line_of(MM, "tl.dot(")
    text = MM.read_text().splitlines()[dot_line - 1]
    assert tl103.range.start.line + 1 == dot_line
    assert tl103.range.start.column == text.index("tl.dot(")
    assert "mma.sync" in tl103.message and "wgmma" in tl103.message
    assert set(tl103.data["configs"]) == {"16 rows", "2 warps"}
    assert "16 rows" in tl103.message and "at least 64" in tl103.message


def test_sm80_compiles_to_mma_sync_without_tl103():
    result = compile_file(MM, target="sm_80", configs={"matmul_kernel": [mm_config(64, 64, 32, 4, 2)]})
    c = result.kernels[0].configs[0]
    assert result.target == "sm_80" and c.error is None
    assert c.mma == "mma.sync" and c.pipelined is True
    findings = findings_from(result)
    assert not by_code(findings, "TL103")


def test_nonpow2_arange_is_tl105_at_the_compiler_position():
    path = FIX / "bad_arange.py"
    cfg = {"label": "BLOCK=64", "args": {"x_ptr": {"kind": "tensor", "dtype": "float32", "data_ptr": 0},
                                         "n": {"kind": "int", "value": 100},
                                         "BLOCK": {"kind": "constexpr", "value": 64}}, "options": {}}
    result = compile_file(path, configs={"bad_kernel": [cfg]})
    err = result.kernels[0].configs[0].error
    line = line_of(path, "tl.arange(0, 48)")
    col = path.read_text().splitlines()[line - 1].index("tl.arange")
    assert (err.line, err.column) == (line, col)
    (f,) = by_code(findings_from(result), "TL105")
    assert f.severity == Severity.ERROR and "power of 2" in f.message
    assert (f.range.start.line, f.range.start.column) == (line - 1, col)
    assert f.range.end.column == col + len("tl.arange(0, 48)")


def test_show_ir_marks_the_lines_of_a_source_line():
    configs = {"matmul_kernel": [mm_config(128, 128, 64, 8, 3)]}
    dot_line = line_of(MM, "tl.dot(")
    ptx = show_ir(MM, "matmul_kernel", "ptx", dot_line, configs=configs)
    marked = [ptx.text.splitlines()[i] for i in ptx.marked_lines]
    assert ptx.language == "ptx" and any("wgmma.mma_async" in ln for ln in marked)
    assert not any("wgmma.mma_async" in ln for i, ln in enumerate(ptx.text.splitlines())
                   if i not in ptx.marked_lines)
    load_line = line_of(MM, "a = tl.load(")
    sass = show_ir(MM, "matmul_kernel", "sass", load_line, configs=configs)
    marked = [sass.text.splitlines()[i] for i in sass.marked_lines]
    assert any("LDGSTS" in ln for ln in marked)  # cp.async in SASS
    # The server passes `line=`.
    from tritonlens.profiling import compile_job

    ttgir = compile_job.show_ir(MM, "matmul_kernel", stage="ttgir", line=dot_line, configs=configs)
    assert any("warp_group_dot" in ttgir.text.splitlines()[i] for i in ttgir.marked_lines)


def test_occupancy_names_the_limiter():
    # 112 registers × 256 threads and 98,304 B: two programs per H100 SM either way.
    occ = occupancy("sm_90", 112, 98304, 8)
    assert (occ.blocks_per_sm, occ.occupancy, occ.limiter) == (2, 25.0, "registers")
    occ = occupancy("sm_90", 32, 150000, 4)
    assert (occ.blocks_per_sm, occ.limiter) == (1, "shared memory")
    occ = occupancy("sm_89", 16, 0, 16)
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.limiter) == (3, 48, "warps")
    assert occupancy("sm_90", 32, 262144, 8).blocks_per_sm == 0
