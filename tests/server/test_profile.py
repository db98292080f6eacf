"""Profile and Optimize through the server: lenses, commands, $/progress, cancellation, profile on
save. Kernels run in Triton's interpreter (TRITON_INTERPRET=1, no GPU): results say so."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
from pathlib import Path

import pytest
from lsprotocol import types

from conftest import REPO
from lsp_helpers import Doc
from tritonlens.profiling.worker.reports import KernelProfile
from tritonlens.rewrite.candidate import NOT_TIMED
from tritonlens.server import kernel_results

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def client(module_client):
    """This module's tests share one server per client profile."""
    return module_client

DATA = Path(__file__).parent / "data"


def example(tmp_path: Path, name: str = "vector_add.py") -> Path:
    p = tmp_path / name
    shutil.copy(REPO / "examples" / name, p)
    return p


async def lenses(doc: Doc):
    return await doc.client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=doc.uri)))


def execute(client, command: str, *args):
    return client.workspace_execute_command_async(types.ExecuteCommandParams(command=command, arguments=list(args)))


def progress_kinds(client) -> dict:
    return {token: [type(v).__name__ for v in values] for token, values in client.progress_reports.items()}


def profiling_tokens(client, before=()) -> list:
    """Tokens of profiling progress (other features, e.g. compile on save, report progress too)."""
    return [t for t, v in client.progress_reports.items()
            if t not in before and v and isinstance(v[0], types.WorkDoneProgressBegin) and "profiling" in v[0].title]


async def test_lenses_profile_with_progress(client, tmp_path):
    doc = Doc(client, example(tmp_path)).open()
    await doc.diagnostics()
    got = await lenses(doc)
    assert [(l.command.title, l.command.command, list(l.command.arguments)) for l in got] == [
        ("Profile", "tritonlens.server.profile", [doc.uri, "add_kernel"]),
        ("Optimize", "tritonlens.server.optimize", [doc.uri, "add_kernel"]),
        ("Show IR", "tritonlens.server.showIr",
         [doc.uri, "add_kernel", "ptx", doc.text.split("\n").index("@triton.jit") + 2]),
    ]
    assert got[0].range.start.line == doc.text.split("\n").index("@triton.jit")
    refreshes = client.lens_refreshes
    before = set(client.progress_reports)
    res = await asyncio.wait_for(execute(client, "tritonlens.server.profile", doc.uri, "add_kernel"), 120)
    assert res["ok"], res
    report = res["report"]
    assert report["mode"] == "interpreter"
    launch = report["kernels"][0]["launches"][0]
    assert launch["time_ms"] is None  # no GPU: never a made-up time
    # the lens line is the summary, and these clients hear it from the server
    assert res["summary"] == "ran in the interpreter (1 launch) · no GPU timing"
    assert res["message"] in [m.message for m in client.messages]
    # $/progress: begin ... end on a token the server created
    kinds = progress_kinds(client)
    tokens = profiling_tokens(client, before)
    assert len(tokens) == 1, kinds
    assert kinds[tokens[0]][0] == "WorkDoneProgressBegin" and kinds[tokens[0]][-1] == "WorkDoneProgressEnd", kinds
    # the result lens, and a refresh request for clients that support it
    titles = [l.command.title for l in await lenses(doc)]
    assert "ran in the interpreter (1 launch) · no GPU timing" in titles
    if client.capabilities.workspace.code_lens and client.capabilities.workspace.code_lens.refresh_support:
        assert client.lens_refreshes > refreshes
    # the hover card shows the latest measurement
    from lsp_helpers import position_of

    pos = position_of(doc.text, "add_kernel(x_ptr", doc.encoding)
    md = (await doc.hover(pos.line, pos.character + 2)).contents.value
    assert "Latest run: ran in the interpreter (1 launch) · no GPU timing" in md and len(md.splitlines()) <= 6
    # ... and its full report the measurement and the estimates, before the run's own report
    rep = await execute(client, "tritonlens.server.report", doc.uri, "add_kernel")
    assert rep["json"]["mode"] == "interpreter" and "add_kernel" in rep["markdown"]
    assert "**Latest measurement**" in rep["markdown"] and "interpreter run" in rep["markdown"]
    assert "Static estimates" in rep["markdown"] and "ridge point 240 FLOP/byte" in rep["markdown"]


async def test_profile_is_cancellable(client, tmp_path):
    if client.profile_name != "visual-studio-code":
        pytest.skip("one client is enough to show the worker is killed")
    path = tmp_path / "slow.py"
    shutil.copy(DATA / "slow_harness.py", path)
    pidfile = tmp_path / "worker.pid"
    doc = Doc(client, path).open()
    before = set(client.progress_reports)
    task = asyncio.ensure_future(execute(client, "tritonlens.server.profile", doc.uri, "copy_kernel"))
    for _ in range(400):  # the harness has started when the worker wrote its pid
        if pidfile.exists() and pidfile.read_text():
            break
        await asyncio.sleep(0.05)
    assert pidfile.exists(), "the harness never started"
    pid = int(pidfile.read_text())
    for _ in range(100):
        new = profiling_tokens(client, before)
        if new:
            break
        await asyncio.sleep(0.05)
    token = new[0]
    assert isinstance(client.progress_reports[token][0], types.WorkDoneProgressBegin)
    assert client.progress_reports[token][0].cancellable
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    res = await asyncio.wait_for(task, 30)
    assert res.get("cancelled"), res
    assert loop.time() - t0 < 20
    for _ in range(100):  # cancelling stops the work: the worker process is gone
        if not Path(f"/proc/{pid}").exists():
            break
        await asyncio.sleep(0.1)
    assert not Path(f"/proc/{pid}").exists(), f"worker {pid} still running after cancel"
    assert isinstance(client.progress_reports[token][-1], types.WorkDoneProgressEnd)
    assert client.progress_reports[token][-1].message == "cancelled"


async def test_optimize_without_gpu_offers_no_rewrite_and_says_why(client, tmp_path):
    """No GPU: rewrites can be proven correct, never faster, so none is offered as a quick fix and
    the one summary says what would prove them."""
    doc = Doc(client, example(tmp_path)).open()
    await doc.diagnostics()
    shown = len(client.messages)
    res = await asyncio.wait_for(execute(client, "tritonlens.server.optimize", doc.uri, "add_kernel"), 300)
    assert res["ok"], res
    report = res["report"]
    assert report["mode"] == "interpreter"
    # without a GPU nothing is called faster
    assert all(c.get("speedup") is None for c in report["candidates"]), report["candidates"]
    accepted = [c for c in report["candidates"] if c["accepted"]]
    assert accepted, [c["reason"] for c in report["candidates"]]
    assert all(c["reason"].startswith(NOT_TIMED + "; checked on 3 seeds × ") for c in accepted), accepted
    summary = f"{NOT_TIMED} ({len(accepted)} of {len(report['candidates'])} rewrites correct)"
    assert res["summary"] == summary and res["message"] == f"tritonlens optimize add_kernel: {summary}"
    # these clients do not show results themselves: the server says it, once, in the same words
    said = [m.message for m in client.messages[shown:] if m.message.startswith("tritonlens optimize")]
    assert said == [res["message"]]
    # no quick fix for a rewrite whose speed nobody measured
    kernel_line = doc.text.split("\n").index("@triton.jit")
    rng = types.Range(start=types.Position(line=kernel_line, character=0),
                      end=types.Position(line=kernel_line + 3, character=0))
    actions = await doc.code_actions([], only=["quickfix"], rng=rng) or []
    assert not [a for a in actions if "rewrite" in a.title or "tritonlens:" in a.title], [a.title for a in actions]
    # the hover card and the full report give the same summary
    from lsp_helpers import position_of

    pos = position_of(doc.text, "add_kernel(x_ptr", doc.encoding)
    md = (await doc.hover(pos.line, pos.character + 2)).contents.value
    assert "Optimization: correct, not timed: run on a GPU to prove it faster" in md
    rep = await execute(client, "tritonlens.server.report", doc.uri, "add_kernel")
    assert f"**Optimization** (interpreter mode): {summary}" in rep["markdown"]
    assert "offered as a quick fix" not in rep["markdown"]


async def test_lens_and_diagnostic_text_for_gpu_measurements():
    m = kernel_results.Measurement(
        kernel="matmul_kernel", kernel_hash="x", kernel_line=0, mode="gpu", device={"name": "NVIDIA H100"},
        entry=KernelProfile.from_json({"name": "matmul_kernel", "line": 1, "launches": [
            {"time_ms": 0.41, "tflops": 612.3, "gbps": 150.0, "pct_of_peak": 85.7, "bound": "compute"}]}),
    )
    assert kernel_results.summary(m) == "0.41 ms · 612 TFLOP/s · 86% of peak · compute-bound"
    assert kernel_results.diagnostic_message(m) == "86% of matmul peak: compute-bound; see hover"
    m.entry.launches[0] = dataclasses.replace(m.entry.launches[0], time_ms=0.062, tflops=0.0, gbps=1040.0,
                                              pct_of_peak=35.0, bound="memory")
    assert kernel_results.summary(m) == "0.062 ms · 1.04 TB/s · 35% of peak · memory-bound"
    assert kernel_results.diagnostic_message(m) == "35% of copy bandwidth: memory-bound; see hover"


async def test_a_launch_whose_sizes_are_not_its_traffic_shows_no_bandwidth():
    note = "its tensors (660.0 MB) would move at 110000 GB/s, 36.7x this GPU's measured copy ceiling"
    m = kernel_results.Measurement(
        kernel="scatter_kernel", kernel_hash="x", kernel_line=0, mode="gpu", device={"name": "NVIDIA H200"},
        entry=KernelProfile.from_json({"name": "scatter_kernel", "line": 1, "launches": [
            {"time_ms": 0.006, "gbps": None, "pct_of_peak": None, "bound": "latency", "traffic": note}]}),
    )
    assert kernel_results.summary(m) == "6.0 µs · latency-bound"
    assert kernel_results.diagnostic_message(m) is None
    hover = kernel_results.hover_markdown(m, stale=False)
    assert f"GB/s not known: {note}." in hover and "%" not in hover.split("| occupancy |")[1].split("\n\n")[0]
