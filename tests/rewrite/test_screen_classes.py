"""The static screen on a kernel file whose launch lives in a class of its own (an
autograd.Function's forward): a rewrite may edit that class's methods; a class the candidate
brings, a changed class shell, and what an edited method newly reaches for are still refused."""

from __future__ import annotations

from tritonlens.rewrite.static_check import screen

ORIGINAL = '''
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = torch.empty_like(x)
        ctx.n = x.numel()
        scale_kernel[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
        return out
'''


def test_an_edited_launch_inside_the_originals_class_may_run():
    candidate = ORIGINAL.replace("triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)",
                                 "triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)")
    assert candidate != ORIGINAL
    # `ctx.n = ...` is the original's own code: not a problem the rewrite brings
    assert screen(ORIGINAL, candidate) == []


def test_what_an_edited_method_newly_reaches_for_is_refused():
    candidate = ORIGINAL.replace("        out = torch.empty_like(x)\n",
                                 "        import os\n        out = torch.empty_like(x)\n")
    problems = screen(ORIGINAL, candidate)
    assert any(p.startswith("Scale.forward(): ") and "os" in p for p in problems), problems


def test_a_new_class_or_a_changed_class_shell_is_refused():
    new_class = ORIGINAL + "\n\nclass Cache:\n    pass\n"
    assert "defines class Cache (not part of a kernel rewrite)" in screen(ORIGINAL, new_class)
    rebased = ORIGINAL.replace("class Scale(torch.autograd.Function):", "class Scale(object):")
    assert "defines class Scale (not part of a kernel rewrite)" in screen(ORIGINAL, rebased)


ALIASED = ORIGINAL + '''

scale = Scale.apply  # the usual public name of an autograd.Function


def tritonlens_cases():
    gen = torch.Generator().manual_seed(0)
    yield scale, (torch.randn(300, generator=gen),)
    yield scale, (torch.randn(1000, generator=gen),)
'''


def test_a_harness_calling_a_class_methods_alias_runs_the_candidates_class(tmp_path):
    # `scale = Scale.apply`: the harness's callable is a bound method of the original's class; the
    # candidate's must run in its place, or its kernels never launch and it is refused as a fallback
    from tritonlens.rewrite.candidate import Candidate
    from tritonlens.rewrite.verify import Verifier

    path = tmp_path / "scale.py"
    path.write_text(ALIASED)
    bigger = ALIASED.replace("triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)",
                             "triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)")
    wrong = ALIASED.replace("* 2, mask=offs < n)", "* 3, mask=offs < n)")
    with Verifier(str(path), ALIASED, timeout=300) as verifier:
        verdicts = verifier.verify([Candidate("test", "bigger", bigger), Candidate("test", "wrong", wrong)],
                                   isolate=False)
    assert verdicts[0].evidence["correct"], verdicts[0].reason
    assert verdicts[0].evidence["launches"] > 0
    assert not verdicts[1].evidence["correct"] and "wrong result" in verdicts[1].reason, verdicts[1].reason
