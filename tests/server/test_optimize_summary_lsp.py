"""What the editor hears when Profile or Optimize ends, and which rewrite it is offered.

A client that shows results itself (the VS Code extension announces it in its capabilities) gets
the notice in the command's result only; any other client also hears it in window/showMessage, in
the same words. Only a rewrite proven faster, which needs a GPU's timings, becomes a quick fix: the
choice is tested on reports as the verifier writes them, the interpreter run end to end in
test_profile.py."""

from __future__ import annotations

import asyncio
import shutil

import pytest
from conftest import REPO, init_params
from lsp_helpers import Doc
from lsprotocol import types
from pytest_lsp import client_capabilities
from tritonlens.profiling.worker.reports import CandidateReport, OptimizeReport
from tritonlens.rewrite.api import best_of
from tritonlens.rewrite.candidate import NOT_TIMED
from tritonlens.server import kernel_results
from tritonlens.server.capabilities import ClientSupport

SOURCE = "def k(): pass\n"


def cand(title: str, speedup: float | None, kernel: str | None = "add_kernel") -> CandidateReport:
    reason = f"correct on 3 seeds × 4 shapes; {speedup}x faster" if speedup else f"{NOT_TIMED}; checked on 12"
    return CandidateReport(proposer="config", title=title, accepted=True, reason=reason, kernel=kernel,
                           speedup=speedup, source=SOURCE, more={"checks": 12})


def outcome(*cands: CandidateReport) -> kernel_results.OptimizeOutcome:
    report = OptimizeReport(path="/x/k.py", kernel="add_kernel", mode="gpu", candidates=list(cands),
                            best=best_of(list(cands)))
    return kernel_results.OptimizeOutcome("add_kernel", "hash", report, SOURCE)


def test_only_the_proven_best_is_offered_with_a_short_title():
    slow, fast = cand("autotune 4 configs (BLOCK_SIZE 256-2048, num_warps 4-8) on the recorded launches", 1.38), \
        cand("grouped L2 ordering of the program ids with GROUP_SIZE_M=8 (TL010)", 2.46)
    offered = outcome(slow, fast).offered()
    assert offered is fast
    title = kernel_results.rewrite_title(offered)
    assert title == "Apply verified rewrite: 2.46x faster" and len(title) <= 60
    # correct but untimed: reported, never offered
    assert outcome(cand("autotune 4 configs", None)).offered() is None
    # another kernel's rewrite is not this kernel's quick fix
    assert outcome(cand("autotune", 2.0, kernel="other_kernel")).offered() is None


def test_notice_wording():
    assert kernel_results.notice("optimize", "add_kernel", "2.5x faster (best of 9 rewrites), verified on 12 checks") \
        == "tritonlens optimize add_kernel: 2.5x faster (best of 9 rewrites), verified on 12 checks"
    assert kernel_results.notice("profile", None, "a: x; b: y") == "tritonlens profile all kernels: a: x; b: y"


def test_client_support_reads_the_extension_flag():
    caps = client_capabilities("visual-studio-code")
    assert not ClientSupport.of(caps).shows_command_results
    caps.experimental = {"tritonlens": {"showsCommandResults": True}}
    assert ClientSupport.of(caps).shows_command_results
    caps.experimental = {"tritonlens": {"showsCommandResults": "yes"}, "other": 1}
    assert not ClientSupport.of(caps).shows_command_results


@pytest.mark.asyncio
async def test_a_client_that_shows_results_gets_the_notice_in_the_result_only(bare_client, tmp_path, request):
    name = request.node.callspec.params["bare_client"]
    params = init_params(name, tmp_path, {"debounceMs": 20})
    params.capabilities.experimental = {"tritonlens": {"showsCommandResults": True}}
    bare_client.profile_name = name
    bare_client.root = tmp_path
    await bare_client.initialize_session(params)
    path = tmp_path / "vector_add.py"
    shutil.copy(REPO / "examples" / "vector_add.py", path)
    doc = Doc(bare_client, path).open()
    await doc.diagnostics()
    res = await asyncio.wait_for(bare_client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tritonlens.server.profile", arguments=[doc.uri, "add_kernel"])), 120)
    assert res["ok"], res
    assert res["message"] == "tritonlens profile add_kernel: ran in the interpreter (1 launch) · no GPU timing"
    assert not [m for m in bare_client.messages if m.message.startswith("tritonlens profile")], bare_client.messages
