"""The hot lines reach the optimize: the LLM's first prompt lists them with their code, share,
stalls in words and instruction classes; the rule candidates come out in the hinted order with
the reason in the report; samples of an edited kernel are ignored with a note (API and CLI)."""

from __future__ import annotations

import json
import shutil

from hot_line_support import hot, line_of, profile
from rewrite_support import FIXTURES, WRAPPER_256, fenced
from tritonlens.profiling.worker.messages import LaunchProfile
from tritonlens.profiling.worker.reports import KernelProfile, ProfileReport
from tritonlens.rewrite.api import OptimizeOptions, optimize_file
from tritonlens.rewrite.context import ProposalContext
from tritonlens.rewrite.hot_line_hints import hints_for
from tritonlens.rewrite.hot_lines import SampledLines, current, kernel_source_hash
from tritonlens.rewrite.llm_prompts import build_messages

from tritonlens.cli import main

ROWS_KERNEL = "scale_rows_kernel"


def _sampled(text: str, kernel: str, lines) -> SampledLines:
    return SampledLines(lines, source_hash=kernel_source_hash(text, kernel), def_line=line_of(text, f"def {kernel}("))


def _rows_lines(text: str):
    x_load = line_of(text, "x = tl.load(")
    return profile(ROWS_KERNEL, hot(x_load, 0.62, {"long_sb": 500, "wait": 60}, ("global load", "integer arithmetic")),
                   hot(line_of(text, "tl.store("), 0.2, {"long_sb": 150}, ("global store",), waits_on=[x_load]),
                   hot(line_of(text, "mask = cols < N"), 0.01, {"wait": 5}))


def test_the_prompt_lists_the_hottest_lines_where_it_describes_the_profile():
    text = (FIXTURES / "hot_rows.py").read_text()
    hot_lines, notes = current(text, [_sampled(text, ROWS_KERNEL, _rows_lines(text))])
    assert notes == []
    ctx = ProposalContext("hot_rows.py", text, hot_lines=hot_lines,
                          hints={ROWS_KERNEL: hints_for(text, ROWS_KERNEL, hot_lines[ROWS_KERNEL].lines)})
    user = build_messages(ctx, ROWS_KERNEL)[1]["content"]
    x_load, store = line_of(text, "x = tl.load("), line_of(text, "tl.store(")
    section = user[user.index("Profile:"):user.index("Tried before")]
    assert (f"- line {x_load} (62%): `x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)` — waiting on "
            "global memory 88%, fixed-latency dependency 11%; instructions: global load, integer arithmetic") in section
    assert (f"- line {store} (20%): `tl.store(out_ptr + row * stride + cols, x * s, mask=mask)` — waiting on global "
            f"memory 94% (the load on line {x_load}); instructions: global store") in section
    assert "mask = cols < N" not in section  # 1% of the samples: not a hot line
    assert f"Suggested first: line {x_load} (" in section and "coarsening and larger blocks first" in section
    # without samples the prompt is what it was
    plain = build_messages(ProposalContext("hot_rows.py", text), ROWS_KERNEL)[1]["content"]
    assert "Hottest lines" not in plain and "Suggested first" not in plain


def test_the_llm_is_asked_with_the_hot_lines_of_the_optimized_file(llm_server, tmp_path):
    path = tmp_path / "vadd.py"
    shutil.copy(FIXTURES / "vadd.py", path)
    text = path.read_text()
    load = line_of(text, "x = tl.load(")
    lines = profile("add_kernel", hot(load, 0.7, {"long_sb": 600}, ("global load",)))
    llm_server.script = [fenced(WRAPPER_256)]
    result = optimize_file(str(path), OptimizeOptions(
        proposers=("llm",), rounds=1, llm={"base_url": llm_server.base_url, "model": "scripted-coder",
                                           "api_key_env": "TRITONLENS_TEST_NO_SUCH_KEY", "timeout": 30,
                                           "candidates": 1}),
        hot_lines=[_sampled(text, "add_kernel", lines)])
    user = llm_server.requests[0]["body"]["messages"][1]["content"]
    assert "Hottest lines of add_kernel" in user
    assert f"- line {load} (70%): `x = tl.load(x_ptr + offsets, mask=mask)` — waiting on global memory" in user
    assert any(n.startswith("hot lines of add_kernel put coarsening, block size candidates first: ")
               for n in result.notes), result.notes


def test_the_report_lists_the_hinted_candidates_first_and_says_why(tmp_path):
    path = tmp_path / "hot_rows.py"
    shutil.copy(FIXTURES / "hot_rows.py", path)
    text = path.read_text()
    result = optimize_file(str(path), OptimizeOptions(proposers=("rules",), budget_s=0, job_timeout_s=300),
                           hot_lines=[_sampled(text, ROWS_KERNEL, _rows_lines(text))])
    titles = [c.title for c in result.candidates]
    hoist = next(i for i, t in enumerate(titles) if t.startswith("hoist loop-invariant load"))
    coarse = [i for i, c in enumerate(result.candidates) if c.more["meta"].get("transform") == "coarsen"]
    assert coarse and max(coarse) < hoist, titles  # without samples the hoist comes first (test_hot_line_hints)
    first = result.candidates[0]
    x_load = line_of(text, "x = tl.load(")
    assert first.more["favoured"].startswith(f"line {x_load} (`x = tl.load(")
    assert "favoured" not in result.candidates[hoist].more
    assert [n for n in result.notes if n.startswith(f"hot lines of {ROWS_KERNEL} put coarsening, block size")]


def test_the_cli_reads_lines_from_a_profile_and_ignores_those_of_an_edited_kernel(tmp_path, capsys):
    path = tmp_path / "hot_rows.py"
    text = (FIXTURES / "hot_rows.py").read_text()
    report = ProfileReport(file=str(path), mode="gpu", kernels=[KernelProfile(
        name=ROWS_KERNEL, line=line_of(text, f"def {ROWS_KERNEL}("),
        launches=[LaunchProfile(kernel=ROWS_KERNEL, source_hash=kernel_source_hash(text, ROWS_KERNEL),
                                lines=_rows_lines(text))])])
    saved = tmp_path / "profile.json"
    saved.write_text(json.dumps(report.to_json()))
    path.write_text(text.replace("x * s, mask=mask)", "x * s + 0.0, mask=mask)"))  # edited since it was profiled
    code = main(["optimize", str(path), "--proposers", "config", "--budget", "0", "--lines-from", str(saved),
                 "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert (f"line samples of {ROWS_KERNEL} ignored: they were taken on another version of its source "
            "(profile it again with --lines)") in out["notes"]
    assert not any(n.startswith("hot lines of") for n in out["notes"])
    assert not any("favoured" in c for c in out["candidates"])

    (tmp_path / "broken.json").write_text("[1, 2]")
    code = main(["optimize", str(path), "--lines-from", str(tmp_path / "broken.json")])
    assert code == 2 and "--lines-from: broken.json: expected a JSON object" in capsys.readouterr().err
