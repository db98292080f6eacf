"""The static configurations read off a model the caller already holds (the server's analysis) are
those a cold analysis of the same text gives, also when the model's kernels come from the
analyzer's cache, built from an earlier text whose bytes sit elsewhere."""

from tritonlens.analysis.engine import Analyzer
from tritonlens.profiling.static_configs import StaticKernel, static_configs, static_configs_of_text

TEXT = '''"""Scaling."""
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, weight, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x * weight, mask=offs < n)


def scale(x, out, n, factor: float):
    scale_kernel[(triton.cdiv(n, 128),)](x, out, n, factor, BLOCK=128)
'''


def test_a_reused_model_gives_the_cold_answer():
    analyzer = Analyzer()
    analyzer.analyze(TEXT, doc_id="scale.py")
    # The same lines, other bytes: the kernel's cached model is reused as it was built.
    edited = TEXT.replace('"""Scaling."""', '"""Scaling a vector by a float the caller passes."""')
    module = analyzer.analyze(edited, doc_id="scale.py").module
    configs, info = static_configs(module)
    assert (configs, info) == static_configs_of_text(edited)
    (cfg,) = configs["scale_kernel"]
    assert cfg["args"]["weight"] == {"kind": "float", "value": 1.0}  # the wrapper's `factor: float`
    assert cfg["args"]["n"] == {"kind": "int", "value": 3}
    assert info["scale_kernel"] == StaticKernel(line=7, note=None)
