"""Pointers no load of the kernel itself names are pointers still: one handed to a helper already
offset (`_row(dY + row * stride, ...)`), one re-typed (`W = W.to(tl.pointer_type(tl.uint8))`) or
whose element type is read (`OUT.dtype.element_ty`), one passed to a helper another file of the
project defines. An integer stand-in fails ("Unsupported ptr type <[1024], int32> in tl.load").
Compiled by the real Triton compiler (sm_90, no GPU)."""

from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "pointers_by_use" / "norms" / "kernels.py"


@pytest.mark.parametrize("name", ["norm_backward_kernel", "nibble_gemv_kernel"])
def test_pointers_used_only_through_helpers_or_casts_compile(report, name):
    configs = report.kernel(name).configs
    assert configs and all(c.error is None and c.registers is not None for c in configs), \
        [c.error for c in configs]
