"""Requests sent while the analysis thread works on a long cold analysis (a file of many autotuned
kernels) are all answered, correctly, in any order. Whether the event loop stays free meanwhile is a
matter of timing, measured by bench/lsp_loop_free.py (the latency of a command answered on the event
loop during a burst of hovers), not asserted here: on two busy cores any ordering can happen."""

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
    got = await asyncio.wait_for(hover, 60)
    assert "acc" in got.contents.value and "fp32" in got.contents.value


async def test_hovers_and_commands_answered_behind_a_cold_analysis(client):
    """With the analysis thread busy on a long cold analysis (40 autotuned kernels of another file),
    40 tl.dot cards of a file already analysed and a command sent after them are all answered, and
    every card is whole."""
    path = client.root / "cards.py"
    path.write_text(many_kernels(40))
    doc = Doc(client, path).open()
    await doc.diagnostics()  # the analysis is done and cached: what remains is rendering
    busy_path = client.root / "busy.py"
    busy_path.write_text(many_kernels(40, start=40))
    busy_doc = Doc(client, busy_path).open()
    pos = position_of(busy_doc.text, "acc = tl.dot", busy_doc.encoding, nth=39)
    busy = asyncio.ensure_future(busy_doc.hover(pos.line, pos.character + 1))  # its cold analysis holds the thread
    hovers = []
    for i in range(40):
        pos = position_of(doc.text, "acc = tl.dot", doc.encoding, nth=i)
        hovers.append(asyncio.ensure_future(doc.hover(pos.line, pos.character + len("acc = tl.d"))))
    report = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tritonlens.server.report", arguments=[doc.uri])), 60)
    assert "No profile" in report["markdown"]
    cards = await asyncio.wait_for(asyncio.gather(*hovers), 120)
    busy_card = await asyncio.wait_for(busy, 120)
    assert all("FLOPs per program" in c.contents.value for c in cards), cards[0].contents.value
    assert "acc" in busy_card.contents.value
