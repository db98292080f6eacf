"""The kernel model: kernels found under any alias, and every configuration resolved."""

from __future__ import annotations

from pathlib import Path

from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.values import UNKNOWN

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def model(text):
    return Analyzer().analyze(text).module


def values(config):
    return {n: v.value for n, v in config.values.items()}


def test_aliases_decorators_and_string_constexpr():
    m = model('''
import triton as tr
from triton import language as lang, jit

@jit
def a(x, N: "tl.constexpr"):
    lang.store(x + lang.arange(0, N), 1.0)

@tr.heuristics({"EVEN": lambda args: args["n"] % 2 == 0})
@tr.jit(do_not_specialize=["n"])
def b(x, n, EVEN: lang.constexpr, B: lang.constexpr = 64):
    for i in lang.static_range(4):
        lang.atomic_add(x, 1)

def plain(x):
    return x
''')
    assert [k.name for k in m.kernels] == ["a", "b"]
    a, b = m.kernels
    assert a.param("N").is_constexpr and not a.param("x").is_constexpr
    assert [c.name for c in a.calls] == ["store", "arange"]
    assert b.param("B").default == 64
    assert b.heuristics == {"EVEN": 'lambda args: args["n"] % 2 == 0'}
    assert [l.kind for l in b.loops] == ["tl.static_range"]
    atomic = b.calls_named("atomic_add")[0]
    assert [l.kind for l in atomic.loops] == ["tl.static_range"]
    cfg = values(b.configs[0])
    assert cfg["B"] == 64 and cfg["EVEN"] is UNKNOWN


def test_launch_resolution_keyword_positional_local_and_branches():
    m = model('''
import triton
import triton.language as tl

SIZE = 256

@triton.jit
def k(x, n, BLOCK: tl.constexpr, WARPS_HINT: tl.constexpr):
    tl.store(x + tl.arange(0, BLOCK), 0.0)

def run(x, fast):
    n = x.numel()
    if fast:
        block = 1024
    else:
        block = 128
    k[(1,)](x, n, block, 2)
    B2 = triton.next_power_of_2(300)
    k[(1,)](x, n, BLOCK=B2, WARPS_HINT=SIZE, num_warps=8, num_stages=2)
    BM, BN = 32, 64
    k[(1,)](x, n, BM, BN)
''')
    (k,) = m.kernels
    got = [(c.label, values(c)) for c in k.configs]
    assert got == [
        ("the launch at line 17", {"BLOCK": 1024, "WARPS_HINT": 2, "num_warps": 4, "num_stages": 3}),
        ("the launch at line 17", {"BLOCK": 128, "WARPS_HINT": 2, "num_warps": 4, "num_stages": 3}),
        ("the launch at line 19", {"BLOCK": 512, "WARPS_HINT": 256, "num_warps": 8, "num_stages": 2}),
        ("the launch at line 21", {"BLOCK": 32, "WARPS_HINT": 64, "num_warps": 4, "num_stages": 3}),
    ]
    assert "`block = 1024` at line 14" in k.configs[0].values["BLOCK"].origin
    assert k.configs[2].values["BLOCK"].origin.startswith("`B2 = triton.next_power_of_2(300)` at line 18")
    assert k.configs[2].scalars["n"].value is UNKNOWN  # n = x.numel(): a runtime value


def test_launches_through_a_wrapper_call_are_the_kernels_launches():
    # torch's wrap_triton(kernel)[grid](...) (what torch.compile traces) and a project's own launcher
    m = model('''
import triton
import triton.language as tl
from torch.library import wrap_triton

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    tl.store(x + tl.arange(0, BLOCK), 0.0)

def launcher(kernel, traceable):
    return wrap_triton(kernel) if traceable else kernel

def run(x, block_size: int = 128):
    wrap_triton(k)[(1,)](x, x.numel(), BLOCK=block_size)
    launcher(k, False)[(1,)](x, x.numel(), BLOCK=64, num_warps=2)
    other(x)[(1,)](x, 1, 2)
''')
    (k,) = m.kernels
    assert [(c.label, values(c)) for c in k.configs] == [
        ("the launch at line 14", {"BLOCK": UNKNOWN, "num_warps": 4, "num_stages": 3}),  # a parameter: the host's to fold
        ("the launch at line 15", {"BLOCK": 64, "num_warps": 2, "num_stages": 3}),
    ]


def test_autotune_configs_cross_launches():
    m = model('''
import triton
import triton.language as tl

@triton.autotune(configs=[
    triton.Config({"BLOCK": 128}, num_warps=4, num_stages=2),
    triton.Config({"BLOCK": 256}, num_warps=8),
], key=["n"])
@triton.jit
def k(x, n, BLOCK: tl.constexpr, ACT: tl.constexpr):
    tl.store(x + tl.arange(0, BLOCK), 0.0)

def run(x):
    k[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, x.numel(), ACT=1)
''')
    (k,) = m.kernels
    assert k.autotuned and k.autotune_key == ["n"]
    assert [values(c) for c in k.configs] == [
        {"BLOCK": 128, "ACT": 1, "num_warps": 4, "num_stages": 2},
        {"BLOCK": 256, "ACT": 1, "num_warps": 8, "num_stages": 3},
    ]
    assert k.configs[1].label == "the launch at line 14 with autotune config #2"


def test_half_typed_code_still_modeled():
    m = model('''
import triton
import triton.language as tl

@triton.jit
def k(x, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    y = tl.load(x + offs
    tl.store(x + offs, y *

def run(x):
    k[(1,)](x, BLOCK=64
''')
    (k,) = m.kernels
    assert k.name == "k" and any(c.name == "arange" for c in k.calls)


def test_examples_resolve():
    want = {
        "vector_add.py": ("add_kernel", {"BLOCK_SIZE": 64}),
        "matmul.py": ("matmul_kernel", {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "num_warps": 4, "num_stages": 1}),
        "transpose.py": ("transpose_kernel", {"BLOCK_M": 32, "BLOCK_N": 32}),
    }
    for name, (kernel, expect) in want.items():
        m = model((EXAMPLES / name).read_text())
        k = m.kernel(kernel)
        assert k is not None and k.configs, name
        got = values(k.configs[0])
        assert {n: got[n] for n in expect} == expect, name
    tuned = model((EXAMPLES / "rmsnorm_autotune.py").read_text()).kernels[0]
    assert len(tuned.configs) == len(tuned.autotune_configs) >= 2


def test_comments_in_autotune_list_do_not_shift_numbering():
    m = model('''
import triton
import triton.language as tl

@triton.autotune(configs=[
    # small rows
    triton.Config({"BLOCK": 128}),
    # large rows
    triton.Config({"BLOCK": 256}),
], key=["n"])
@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    tl.store(x + tl.arange(0, BLOCK), 0.0)
''')
    (k,) = m.kernels
    assert [c.label for c in k.configs] == ["autotune config #1", "autotune config #2"]


def test_target_gpu_reaches_rules():
    text = (Path(__file__).parent.parent / "fixtures" / "rules" / "TL013").glob("positive*.py")
    text = next(text).read_text()
    on_h100 = Analyzer().analyze(text, select=["TL013"])
    on_a100 = Analyzer().analyze(text, select=["TL013"], target="A100")
    assert on_h100.findings and on_a100.findings
    assert "H100" in on_h100.findings[0].message and "A100" in on_a100.findings[0].message


def test_names_stay_importable_from_model():
    # the model is split over aliases/kernel_types/kernel_body/launches; importers keep using model
    from tritonlens.analysis import model

    for name in ("ATOMICS", "REDUCTIONS", "MAX_CONFIGS", "Aliases", "Config", "Kernel", "Launch", "Module",
                 "TlCall", "Param", "Loop", "Assignment", "AutotuneConfig", "build_kernels", "build_module",
                 "find_launches", "is_kernel_definition", "resolve_configs", "split_arguments",
                 "top_level_definitions", "_collect_aliases", "_wrapper_scope"):
        assert hasattr(model, name), name


def test_kernels_under_module_level_branches():
    from tritonlens.analysis.model import build_module
    from tritonlens.analysis.source import Source

    m = build_module(Source('''
import triton
import triton.language as tl

if hasattr(tl, "make_tensor_descriptor"):
    @triton.jit
    def k_new(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
else:
    @triton.jit
    def k_old(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

def run(x):
    if hasattr(tl, "make_tensor_descriptor"):
        k_new[(1,)](x, BLOCK=64)
    else:
        k_old[(1,)](x, BLOCK=32)
'''))
    assert [k.name for k in m.kernels] == ["k_new", "k_old"]
    assert [values(c)["BLOCK"] for c in m.kernel("k_new").configs] == [64]
    assert [values(c)["BLOCK"] for c in m.kernel("k_old").configs] == [32]
    assert "run" in m.functions


def test_a_name_defined_per_branch_is_modelled_at_each_definition_and_resolves_to_the_last():
    from pathlib import Path

    from tritonlens.analysis.model import build_module
    from tritonlens.analysis.source import Source

    text = (Path(__file__).parent.parent / "fixtures" / "kernel_roles" / "versioned_definitions.py").read_text()
    m = build_module(Source(text))
    assert [(k.name, k.range.start.line + 1) for k in m.kernels] == [
        ("fast_exp", 13), ("fast_exp", 19), ("scale_kernel", 27), ("scale_kernel", 35)]
    assert m.kernel("scale_kernel").range.start.line + 1 == 35
    # The launch reaches both definitions' models: either may be the one defined at run time.
    assert [[values(c)["BLOCK"] for c in k.configs] for k in m.kernels if k.name == "scale_kernel"] == [[1024], [1024]]
