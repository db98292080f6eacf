"""A configuration for every kernel no launch was captured for, each value naming its source:
static (read from the text), pinned (a comment or pyproject.toml) or assumed (representative
values). Real sm_90 cross-compiles of our own fixtures: a src/ package whose block size comes from
a helper in another module, a heuristic, a dtype, a string and a flag constexpr, pins (one of
them wrong) and kernels nothing in their file launches."""

import shutil
from pathlib import Path

import pytest
from tritonlens.profiling.compile_cli import _text, to_json
from tritonlens.profiling.compile_job import compile_file

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "fixtures" / "config_sources"
BAD_PIN_LINE = next(i for i, ln in enumerate((FIXTURES / "kernels.py").read_text().splitlines(), 1) if "=abc" in ln)


@pytest.fixture(scope="module")
def kernels_report(tmp_path_factory):
    path = tmp_path_factory.mktemp("kernels") / "kernels.py"
    shutil.copy(FIXTURES / "kernels.py", path)
    return compile_file(path, use_cache=False)


@pytest.fixture(scope="module")
def project_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("project") / "project"
    shutil.copytree(FIXTURES / "project", root)
    return compile_file(root / "src" / "pkg" / "ops.py", use_cache=False)


def compiled(report, name):
    k = report.kernel(name)
    assert k is not None, [k.name for k in report.kernels]
    assert k.configs and all(c.error is None and c.registers for c in k.configs), [c.error for c in k.configs]
    return k


def test_a_helper_in_another_module_gives_the_block_size_on_a_representative_row(project_report):
    k = compiled(project_report, "row_norm_kernel")
    (c,) = k.configs
    # calculate_settings(n_cols) from src/pkg/utils.py, read as text, on a row of 4096.
    assert c.constexprs["BLOCK_SIZE"] == 4096 and c.num_warps == 8
    assert c.value_sources == {"OUT_DTYPE": "assumed", "BLOCK_SIZE": "assumed", "num_warps": "assumed",
                               "num_stages": "static"}
    assert c.source == "assumed"
    note = next(a for a in c.assumed if a.startswith("assumed BLOCK_SIZE=4096"))
    assert "n_cols=4096" in note and "pin it: `# tritonlens: BLOCK_SIZE=4096` above the kernel" in note
    assert all(len(a) <= 160 for a in c.assumed if a.startswith("assumed "))
    # OUT_DTYPE comes from a dict the text cannot read: a dtype the kernel converts to, fp32.
    assert c.signature["OUT_DTYPE"] == "constexpr" and "OUT_DTYPE=tl.float32" in " ".join(c.assumed)


def test_pins_in_pyproject_configure_a_kernel_launched_elsewhere(project_report):
    k = compiled(project_report, "copy_kernel")
    (c,) = k.configs
    assert c.constexprs == {"BLOCK": 128} and c.num_warps == 2
    assert c.signature["src_ptr"] == "*bf16"  # the file's own table pins the pointer's dtype
    assert c.value_sources == {"src_ptr": "pinned", "BLOCK": "pinned", "num_warps": "pinned", "num_stages": "static"}
    assert c.source == "pinned" and not k.pin_messages


def test_each_branch_of_a_heuristic_is_compiled(kernels_report):
    k = compiled(kernels_report, "bias_add_kernel")
    got = sorted((c.constexprs["HAS_BIAS"], c.constexprs["EVEN_N"]) for c in k.configs)
    assert got == [(False, False), (True, True)]
    for c in k.configs:
        assert c.constexprs["BLOCK"] == 512 and c.value_sources["BLOCK"] == "static"  # kept from the launch
        assert c.value_sources["HAS_BIAS"] == c.value_sources["EVEN_N"] == "assumed" and c.source == "assumed"
    # The masked branch loads less per instruction than the unmasked one: two different compiles.
    assert len({c.key for c in k.configs}) == 2


def test_string_and_flag_constexprs_of_a_kernel_with_no_launch_site(kernels_report):
    k = compiled(kernels_report, "act_kernel")
    (c,) = k.configs
    assert c.constexprs == {"ACTIVATION": "gelu", "USE_FAST": False, "BLOCK": 1024}
    assert c.source == "assumed" and c.value_sources["num_warps"] == "static"
    assert any(a.startswith("assumed ACTIVATION='gelu' (the first value the kernel compares it with") for a in c.assumed)


def test_comment_pins_and_a_bad_pin(kernels_report):
    c = compiled(kernels_report, "pinned_kernel").configs[0]
    assert c.constexprs == {"BLOCK": 256} and c.num_warps == 2 and c.source == "pinned"
    bad = compiled(kernels_report, "bad_pin_kernel")
    # Every wrong pin says why in one line; the kernel still compiles on assumed values.
    assert bad.configs[0].constexprs == {"BLOCK": 1024} and bad.configs[0].num_warps == 4
    at = f"at line {BAD_PIN_LINE}"
    assert bad.pin_messages == [
        f"pin `BLOCK=abc` {at} ignored: not a number, True/False, a dtype (tl.float16) or a quoted string",
        f"pin `num_warps=3` {at} ignored: num_warps must be a positive int and a power of two",
        f"pin `WIDTH=8` {at} ignored: bad_pin_kernel has no parameter WIDTH"]


def test_json_and_text_name_every_source(kernels_report):
    out = to_json(kernels_report)
    for k in out["kernels"]:
        for c in k["configs"]:
            assert c["source"] in ("static", "pinned", "assumed")
            assert set(c["value_sources"]) >= {*c["constexprs"], "num_warps", "num_stages"}
    bad = next(k for k in out["kernels"] if k["name"] == "bad_pin_kernel")
    assert len(bad["pin_messages"]) == 3
    text = _text(kernels_report, [])
    assert "BLOCK=1024 (assumed)" in text and "BLOCK=256 (pinned)" in text and "[pinned: defaults]" in text
    assert f"pin: pin `WIDTH=8` at line {BAD_PIN_LINE} ignored" in text


def test_an_assumed_value_triton_refuses_is_retried_with_the_next_one(kernels_report):
    # Triton refused our guess, not the user's launch: the next representative value compiles
    # (an error no value cures stays a warning: test_assumed_retry.py).
    (c,) = kernels_report.kernel("small_block_kernel").configs
    assert c.source == "assumed" and c.error is None and c.constexprs == {"BLOCK": 256}
    assert "retried with BLOCK=256 (BLOCK=1024 did not compile" in c.label


def test_the_hover_names_assumed_values_and_how_to_pin_them(project_report):
    from tritonlens.analysis.engine import Analyzer
    from tritonlens.server.compile_facts import Compiled, CompileFacts
    from tritonlens.server.diagnostics import kernel_hash

    text = Path(project_report.path).read_text()
    module = Analyzer().analyze(text).module
    hashes = {k.name: kernel_hash(k.text) for k in module.kernels}
    facts = CompileFacts(Compiled(1, 1, text, "sm_90", "python", project_report, hashes, 1.0))
    card = facts.hover_section(module.kernel("row_norm_kernel"))
    assert "assumed BLOCK_SIZE=4096 (the launch at line 26 with n_cols=4096; pin it: " \
           "`# tritonlens: BLOCK_SIZE=4096` above the kernel)" in card
    assert "BLOCK_SIZE=4096 _assumed_" in card  # the configuration's row marks what was assumed
    pinned = facts.hover_section(module.kernel("copy_kernel"))
    assert "BLOCK=128 _pinned_" in pinned and "assumed BLOCK" not in pinned


def test_a_pointer_whose_loads_index_another_or_bound_a_loop_holds_integers(kernels_report):
    (c,) = compiled(kernels_report, "gather_kernel").configs
    assert c.signature["ids_ptr"] == "*i64" and c.signature["table_ptr"] == "*fp32"
    assert "pointers assumed integer (their loads index other pointers, bound loops or are bit-shifted): "\
           "ids_ptr (int64)" in c.assumed
    (c,) = compiled(kernels_report, "segment_sum_kernel").configs  # fp32 loop bounds would not compile
    assert c.signature["starts_ptr"] == "*i64" and c.signature["x_ptr"] == "*fp32"
