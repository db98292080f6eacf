"""Autotune configs built by code of the file (a function with loops, a comprehension, a module
constant) are read statically, without importing the file; code we cannot fold leaves them to the
assumed values, never half-read."""

import pytest
from tritonlens.analysis.engine import Analyzer
from tritonlens.profiling.compile_job import compile_file
from tritonlens.profiling.static_configs import static_configs_of_text

HEAD = """\
import itertools
import os

import triton
import triton.language as tl
from triton import Config

"""

KERNEL = """

@triton.autotune(configs=CONFIGS_EXPR, key=["n"])
@triton.jit
def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


def copy(a, b):
    copy_kernel[lambda meta: (triton.cdiv(a.numel(), meta["BLOCK"]),)](a, b, a.numel())
"""

LOOP = HEAD + '''
SIZES = (64, 128)


def tile_configs(extra=True):
    """Small tiles with few warps, and a large one when asked."""
    out = []
    for block in SIZES:
        for warps in (2, 4):
            if block * warps > 256:
                continue
            out.append(triton.Config({"BLOCK": block}, num_warps=warps))
    if extra:
        out += [Config({"BLOCK": 2 ** 10}, num_warps=8, num_stages=2)]
    return out
''' + KERNEL.replace("CONFIGS_EXPR", "tile_configs()")

COMPREHENSION = HEAD + """
CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w) for b, w in itertools.product([32, 256], [1, 2]) if b * w < 512]
""" + KERNEL.replace("CONFIGS_EXPR", "CONFIGS")

UNFOLDABLE = HEAD + """

def env_configs():
    out = []
    for block in os.environ.get("BLOCKS", "64,128").split(","):
        out.append(triton.Config({"BLOCK": int(block)}, num_warps=4))
    return out
""" + KERNEL.replace("CONFIGS_EXPR", "env_configs()")


def configs_of(text):
    configs, _info = static_configs_of_text(text)
    return [(c["args"]["BLOCK"]["value"], c["options"]["num_warps"], c["options"]["num_stages"], c["source"])
            for c in configs["copy_kernel"]]


def test_a_function_with_loops_builds_the_configs():
    assert configs_of(LOOP) == [(64, 2, 3, "static"), (64, 4, 3, "static"), (128, 2, 3, "static"),
                                (1024, 8, 2, "static")]
    k = Analyzer().analyze(LOOP).module.kernel("copy_kernel")
    origin = k.configs[0].values["BLOCK"].origin
    assert origin.startswith("autotune config #1 (built by `tile_configs()`, line ") and "assumed" not in origin


def test_a_comprehension_in_a_module_constant_builds_the_configs():
    assert configs_of(COMPREHENSION) == [(32, 1, 3, "static"), (32, 2, 3, "static"), (256, 1, 3, "static")]


def test_code_that_cannot_be_folded_leaves_the_configs_assumed():
    configs, _info = static_configs_of_text(UNFOLDABLE)
    (c,) = configs["copy_kernel"]
    assert c["source"] == "assumed" and c["value_sources"]["BLOCK"] == "assumed"


@pytest.mark.slow
def test_function_built_configs_are_cross_compiled_as_static(tmp_path):
    path = tmp_path / "built.py"
    path.write_text(LOOP)
    result = compile_file(path, use_cache=False)
    (k,) = result.kernels
    got = [(c.constexprs["BLOCK"], c.num_warps, c.num_stages, c.source) for c in k.configs]
    assert got == [(64, 2, 3, "static"), (64, 4, 3, "static"), (128, 2, 3, "static"), (1024, 8, 2, "static")]
    assert all(c.error is None for c in k.configs)
    assert not [a for c in k.configs for a in c.assumed if "BLOCK" in a]
