"""The event loop stays free while the analysis thread works: a request that needs no analysis
is answered while a long analysis (a cold open of a file of many autotuned kernels) runs."""

from __future__ import annotations

import asyncio

from lsp_helpers import Doc, position_of
from lsprotocol import types

KERNEL = '''

@triton.autotune(configs=[{configs}], key=["M", "N", "K"])
@triton.jit
def matmul_{i}(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    offs_m = (pid // num_pid_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = (pid % num_pid_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
'''
CONFIG = 'triton.Config({{"BLOCK_M": {m}, "BLOCK_N": {n}, "BLOCK_K": {k}}}, num_warps=4, num_stages=3)'


def many_kernels(n: int, start: int = 0) -> str:
    configs = ", ".join(CONFIG.format(m=m, n=nn, k=k) for m in (64, 128) for nn in (64, 128) for k in (32, 64))
    return "import triton\nimport triton.language as tl\n" + "".join(KERNEL.format(i=i, configs=configs)
                                                                      for i in range(start, start + n))


async def test_requests_answered_while_a_long_analysis_runs(client):
    path = client.root / "many.py"
    path.write_text(many_kernels(40))
    doc = Doc(client, path).open()
    pos = position_of(doc.text, "acc = tl.dot", doc.encoding, nth=39)
    # The hover waits for the cold analysis of 40 autotuned kernels on the analysis thread...
    hover = asyncio.ensure_future(doc.hover(pos.line, pos.character + 1))
    await asyncio.sleep(0)
    # ...while a request that needs no analysis (the file's last run, no kernel's report) is
    # answered by the event loop meanwhile.
    report = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tritonlens.server.report", arguments=[doc.uri])), 20)
    assert "No profile" in report["markdown"]
    assert not hover.done(), "the analysis finished before the other request was answered: make it longer"
    got = await asyncio.wait_for(hover, 60)
    assert "acc" in got.contents.value and "fp32" in got.contents.value


async def test_hovers_render_off_the_event_loop(client):
    """tl.dot cards are rendered on the analysis thread, never on the event loop. With that thread
    busy on a long cold analysis (40 autotuned kernels of another file), the cards of a file already
    analysed wait behind it, while a command sent after them is answered at once. Rendered on the
    event loop, those cards would come back first. (Ordering by rendering time alone says nothing
    once a card takes less time to render than a request takes to dispatch, as it does now.)"""
    path = client.root / "cards.py"
    path.write_text(many_kernels(40))
    doc = Doc(client, path).open()
    await doc.diagnostics()  # the analysis is done and cached: what remains is rendering
    busy_path = client.root / "busy.py"
    busy_path.write_text(many_kernels(40, start=40))
    busy_doc = Doc(client, busy_path).open()
    pos = position_of(busy_doc.text, "acc = tl.dot", busy_doc.encoding, nth=39)
    busy = asyncio.ensure_future(busy_doc.hover(pos.line, pos.character + 1))  # its cold analysis holds the thread
    arrived: list[str] = []
    hovers = []
    for i in range(40):
        pos = position_of(doc.text, "acc = tl.dot", doc.encoding, nth=i)
        fut = asyncio.ensure_future(doc.hover(pos.line, pos.character + len("acc = tl.d")))
        fut.add_done_callback(lambda _f: arrived.append("hover"))
        hovers.append(fut)
    report = asyncio.ensure_future(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tritonlens.server.report", arguments=[doc.uri])))
    report.add_done_callback(lambda _f: arrived.append("report"))
    await asyncio.wait_for(report, 20)
    assert not busy.done(), "the other file's analysis finished before the command was answered: make it longer"
    cards = await asyncio.wait_for(asyncio.gather(*hovers), 120)
    await asyncio.wait_for(busy, 120)
    assert all("FLOPs per program" in c.contents.value for c in cards), cards[0].contents.value
    assert arrived[0] == "report", "a card was rendered before the busy analysis thread got to it"
