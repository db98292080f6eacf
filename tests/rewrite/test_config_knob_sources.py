"""Every config knob is reached wherever its value comes from (a launch argument by position or
keyword, a local, a wrapper default, a module constant, a capped computation, a triton.Config,
a heuristic), moves with the grid that divides by it, and a knob that cannot move says why."""

from __future__ import annotations

import pytest
from rewrite_support import FIXTURES
from tritonlens.analysis.python_ast import parse as parse_python
from tritonlens.rewrite import propose_config
from tritonlens.rewrite.config_edits import with_autotune, with_literals
from tritonlens.rewrite.context import ProposalContext
from tritonlens.rewrite.edits import kernels
from tritonlens.rewrite.propose_config import analyse


def _read(fixture: str) -> str:
    return (FIXTURES / fixture).read_text(encoding="utf-8")


def _kernel(text: str) -> str:
    return kernels(parse_python(text))[0].name


def _other_value(plan, knob: str) -> dict:
    """The first planned config that gives `knob` another value than it has now."""
    return next(c for c in plan.space if knob in c and c[knob] != plan.knobs[knob].current)


def _propose(text: str, name: str = "kernel.py"):
    return propose_config.propose(ProposalContext(name, text, device={"mode": "interpreter"}))


# fixture, knob, current value, capped, lines of the edited source at the new value `v` (the
# value where it lives and the grid moved with it), lines that must stay as they are
SOURCES = [
    ("knob_positional.py", "BLOCK_SIZE", 4, False,
     ["    BLOCK_SIZE = {v}\n"],
     ["    num_blocks = (n + BLOCK_SIZE - 1) // BLOCK_SIZE\n", "add_kernel[(num_blocks,)](x, y, out, n, BLOCK_SIZE"]),
    ("knob_positional_literal.py", "BLOCK", 16, False, ["shift_kernel[(-(-n // {v}),)](x, out, n, {v}"], []),
    ("knob_keyword.py", "BLOCK", 64, False, ["shift_kernel[(triton.cdiv(n, {v}),)](x, out, n, BLOCK={v}"], []),
    ("knob_local.py", "BLOCK", 64, False, ["    BLOCK = {v}\n", "    grid = ((n + {v} - 1) // {v},)\n"],
     ["shift_kernel[grid](x, out, n, BLOCK=BLOCK"]),
    ("knob_wrapper_default.py", "BLOCK", 128, False, ["def shift(x, block={v}):"],
     ['shift_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n, BLOCK=block']),
    ("knob_module_constant.py", "BLOCK", 256, False, ["SHIFT_BLOCK = {v}\n"],
     ["shift_kernel[(triton.cdiv(n, SHIFT_BLOCK),)](x, out, n, SHIFT_BLOCK"]),
    ("knob_capped.py", "BLOCK", 1024, True, ["    BLOCK = min(triton.next_power_of_2(n), {v})\n"],
     ["shift_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK"]),
    ("knob_config_named.py", "BLOCK", 64, False, ['SHIFT_CONFIG = triton.Config({{"BLOCK": {v}}}'],
     ["shift_kernel[(triton.cdiv(n, block),)](x, out, n, BLOCK=block"]),
    ("knob_config_kwargs.py", "BLOCK", 32, False,
     ['    cfg = triton.Config({{"BLOCK": {v}}}', "    grid = ((n + {v1}) // {v},)\n"],
     ["shift_kernel[grid](x, out, n, **cfg.kwargs"]),
    ("knob_heuristic.py", "BLOCK", 32, True, ['"BLOCK": lambda args: min(triton.next_power_of_2(args["n"]), {v}),'],
     ['shift_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n']),
]


@pytest.mark.parametrize("fixture, knob, current, capped, edited, kept", SOURCES, ids=[s[0] for s in SOURCES])
def test_a_knob_is_found_where_it_lives_and_a_candidate_moves_it_there_with_its_grid(
        fixture, knob, current, capped, edited, kept):
    text = _read(fixture)
    plan = analyse(text, _kernel(text))
    assert knob in plan.knobs, (plan.kind, list(plan.knobs), plan.unmovable)
    assert plan.knobs[knob].current == current and plan.knobs[knob].capped == capped
    cfg = _other_value(plan, knob)
    v = cfg[knob]
    out = with_literals(text, plan, cfg)
    for line in edited:
        old, new = line.format(v=current, v1=current - 1), line.format(v=v, v1=v - 1)
        assert old in text and new in out, (new, out)
        assert old not in out
    for line in kept:
        assert line in text and line in out
    # the whole file is still Python, and the search offers the change as a candidate
    compile(out, fixture, "exec")
    assert any(knob in c.meta.get("config", {}) for c in _propose(text, fixture))


# one launch, its grid written in each form, as a literal copy of the block and by the block's name
GRID_FORMS = {
    "cdiv": ("(triton.cdiv(n, {b}),)", "(triton.cdiv(n, META['BLOCK']),)"),
    "round_up": ("((n + {b} - 1) // {b},)", "((n + META['BLOCK'] - 1) // META['BLOCK'],)"),
    "negated": ("(-(-n // {b}),)", "(-(-n // META['BLOCK']),)"),
}
WRAPPER = '''
def shift(x):
    out = torch.empty_like(x)
    n = x.numel()
    BLOCK = 64
{body}
    return out
'''


def _with_wrapper(body: str) -> str:
    text = _read("knob_keyword.py")
    start, end = text.index("\ndef shift(x):"), text.index("\n\ndef tritonlens_cases")
    return text[:start] + WRAPPER.format(body=body).rstrip("\n") + text[end:]


@pytest.mark.parametrize("form", sorted(GRID_FORMS))
@pytest.mark.parametrize("layout", ["inline_literal", "local_literal", "inline_name", "local_name"])
def test_each_grid_form_moves_with_the_block_inline_or_in_a_local(form, layout):
    written, meta = GRID_FORMS[form]
    grid = written.format(b=64 if layout.endswith("literal") else "BLOCK")
    if layout.startswith("inline"):
        body = f"    shift_kernel[{grid}](x, out, n, BLOCK=BLOCK)"
    else:  # the grid's element is a local the launch reads
        body = f"    programs = {grid[1:-2]}\n    shift_kernel[(programs,)](x, out, n, BLOCK=BLOCK)"
    text = _with_wrapper(body)
    plan = analyse(text, "shift_kernel")
    cfg = _other_value(plan, "BLOCK")
    out = with_literals(text, plan, cfg)
    assert f"    BLOCK = {cfg['BLOCK']}\n" in out
    # a literal copy moves; a grid dividing by the name needs no edit: the name moves with the value
    moved = grid.format() if layout.endswith("name") else written.format(b=cfg["BLOCK"])
    assert (moved if layout.startswith("inline") else moved[1:-2]) in out, out
    tuned = with_autotune(text, plan, plan.space[:3])
    assert f"shift_kernel[lambda META: {meta}](x, out, n)".replace("'", '"') in tuned, tuned
    compile(tuned, "tuned.py", "exec")


def test_the_positional_four_element_block_is_tuned_and_autotuned():
    """The regression: only num_warps and an autotune of empty configs were offered."""
    text = _read("knob_positional.py")
    plan = analyse(text, "add_kernel")
    assert plan.kind == "block1d" and all("BLOCK_SIZE" in c for c in plan.space)
    cands = {c.title: c for c in _propose(text)}
    literal = next(c for t, c in cands.items() if t.startswith("config "))
    assert "BLOCK_SIZE=1024" in literal.title and "    BLOCK_SIZE = 1024\n" in literal.source
    auto = next(c for t, c in cands.items() if t.startswith("autotune "))
    assert 'triton.Config({"BLOCK_SIZE": 1024}, num_warps=4)' in auto.source
    # the grid's local is written into the META lambda, and the positional block leaves the launch
    assert ('add_kernel[lambda META: ((n + META["BLOCK_SIZE"] - 1) // META["BLOCK_SIZE"],)](x, y, out, n)\n'
            in auto.source)


@pytest.mark.slow
@pytest.mark.parametrize("fixture", ["knob_positional.py", "knob_positional_literal.py", "knob_keyword.py",
                                     "knob_local.py", "knob_wrapper_default.py", "knob_module_constant.py",
                                     "knob_capped.py", "knob_config_named.py", "knob_config_kwargs.py",
                                     "knob_heuristic.py", "knob_warps_computed.py"])
def test_the_moved_knobs_verify_in_the_interpreter(fixture):
    from tritonlens.rewrite.verify import Verifier

    text = _read(fixture)
    cands = [c for c in _propose(text, fixture) if c.proposer == "config" and c.meta.get("config", c.meta.get("configs"))]
    assert cands
    with Verifier(str(FIXTURES / fixture), text, timeout=300) as verifier:
        verdicts = verifier.verify(cands, isolate=False)
    assert all(v.accepted for v in verdicts), [(v.candidate.title, v.reason) for v in verdicts]
    assert all(v.mode == "interpreter" for v in verdicts)


def test_num_warps_the_wrapper_computes_is_pinned_at_the_call_or_taken_over_by_autotune():
    text = _read("knob_warps_computed.py")
    plan = analyse(text, "shift_kernel")
    assert plan.knobs["num_warps"].override
    cfg = next(c for c in plan.space if c.get("num_warps") == 8)
    out = with_literals(text, plan, cfg)
    assert "    num_warps = 4 if BLOCK < 2048 else 8\n" in out  # the wrapper's rule stays for other callers
    assert "shift_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK, num_warps=8)" in out
    tuned = with_autotune(text, plan, plan.space[:3])
    assert "shift_kernel[lambda META: (triton.cdiv(n, META[\"BLOCK\"]),)](x, out, n)\n" in tuned
    # settings returned together by a helper: the block is the helper's, num_warps still pinned
    settings = text.replace("    BLOCK = 512\n    num_warps = 4 if BLOCK < 2048 else 8\n",
                            "    BLOCK, num_warps = pick_settings(n)\n")
    settings = settings.replace("\ndef shift(x):", "\ndef pick_settings(n):\n    return 512, 4\n\n\ndef shift(x):")
    plan = analyse(settings, "shift_kernel")
    assert plan.kind == "warps_only" and "BLOCK" not in plan.knobs
    assert any(u.startswith("BLOCK: ") for u in plan.unmovable)
    (literal,) = [c for c in _propose(settings) if c.title.startswith("config ")]
    assert "BLOCK=BLOCK, num_warps=4)" in literal.source


@pytest.mark.parametrize("how, reason", [("parameter", "grid passed in as a parameter"),
                                         ("helper", "grid built in another function")])
def test_a_block_whose_grid_cannot_be_seen_stays_and_says_why_while_the_others_are_tuned(how, reason):
    text = _read("knob_unmovable.py")
    if how == "helper":
        text = text.replace("def rowsum(x, grid):\n    M, N = x.shape\n",
                            "def rows_grid(M):\n    return (triton.cdiv(M, 16),)\n\n\n"
                            "def rowsum(x):\n    M, N = x.shape\n    grid = rows_grid(M)\n")
    plan = analyse(text, "rowsum_kernel")
    assert "BLOCK_M" not in plan.knobs and {"BLOCK_N", "num_warps"} <= set(plan.knobs)
    assert plan.unmovable == [f"BLOCK_M: {reason}"]
    assert any(reason in n and "BLOCK_M" in n for n in plan.notes)
    cands = _propose(text)
    assert cands and all(c.meta.get("unmovable") == [f"BLOCK_M: {reason}"] for c in cands)
    for c in cands:
        assert "BLOCK_M=16" in c.source or '"BLOCK_M"' not in c.source
        assert c.meta.get("error") is None


def test_a_bool_and_a_float_passed_by_position_are_never_tile_sizes():
    text = _read("knob_not_sizes.py")
    plan = analyse(text, "smooth_kernel")
    assert "BLOCK" in plan.knobs
    assert not {"AFFINE", "SMOOTHING"} & set(plan.knobs)
    assert all(set(c) <= {"BLOCK", "num_warps"} for c in plan.space)
    for c in _propose(text):
        assert "    elementwise_affine = False\n" in c.source and "(x, out, n, elementwise_affine, 0.0" in c.source
    # the same values passed by keyword
    keyword = text.replace("(x, out, n, elementwise_affine, 0.0, BLOCK)",
                           "(x, out, n, AFFINE=elementwise_affine, SMOOTHING=0.0, BLOCK=BLOCK)")
    assert not {"AFFINE", "SMOOTHING"} & set(analyse(keyword, "smooth_kernel").knobs)


def test_a_grid_function_the_wrapper_defines_is_read_like_a_meta_lambda():
    text = _read("knob_keyword.py").replace(
        "    shift_kernel[(triton.cdiv(n, 64),)](x, out, n, BLOCK=64)\n",
        '    def grid(meta):\n        return (triton.cdiv(n, meta["BLOCK"]),)\n\n'
        "    shift_kernel[grid](x, out, n, BLOCK=64)\n")
    plan = analyse(text, "shift_kernel")
    assert "BLOCK" in plan.knobs and plan.unmovable == []
    out = with_literals(text, plan, _other_value(plan, "BLOCK"))
    assert 'return (triton.cdiv(n, meta["BLOCK"]),)' in out


def test_a_constexpr_that_sizes_no_tile_and_a_flag_heuristic_are_never_knobs():
    text = _read("knob_keyword.py").replace(
        "def shift_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):",
        "def shift_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, CAP: tl.constexpr):").replace(
        "* 2.0 + 1.0, mask=mask)", "/ CAP, mask=mask)").replace("BLOCK=64)", "BLOCK=64, CAP=64)")
    plan = analyse(text, "shift_kernel")
    assert "BLOCK" in plan.knobs and "CAP" not in plan.knobs  # divides values, sizes nothing
    flag = _read("knob_heuristic.py").replace('lambda args: args["n"] % 32 == 0',
                                              'lambda args: True if args["n"] % 32 == 0 else False')
    plan = analyse(flag, "shift_kernel")
    assert "WHOLE" not in plan.knobs and not any(u.startswith("WHOLE") for u in plan.unmovable)
