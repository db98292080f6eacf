"""A kernel without compile facts says why on its hover, in the line the CLI's JSON gives as its
`reason`: a real server, real clients, a real sm_90 cross-compile on the CPU."""

from __future__ import annotations

import asyncio

import pytest
from lsp_helpers import Doc, position_of

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_OPTIONS = {"select": ["ALL"]}  # the compile rules are off by default; it waits for TL105

# tl.arange over 48 elements: Triton refuses the kernel, so nothing of it compiles.
TEXT = '''import triton
import triton.language as tl


@triton.jit
def refused_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, 48)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, x + 1, mask=offs < n)


def bump(x):
    refused_kernel[(1,)](x, x.numel(), BLOCK=64)
'''
WAIT = 150  # seconds: a cold cross-compile on a busy 2-core machine


@pytest.fixture(scope="module")
def client(module_client):
    return module_client


async def test_the_hover_of_a_kernel_without_facts_names_the_reason(client, tmp_path):
    path = tmp_path / "refused.py"
    path.write_text(TEXT)
    doc = Doc(client, path).open()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while not any(d.code == "TL105" for d in await doc.diagnostics()):
        assert loop.time() < deadline, "no compile finding arrived"
        await asyncio.sleep(1)
    pos = position_of(doc.text, "def refused_kernel", doc.encoding)
    card = (await doc.hover(pos.line, pos.character + 6)).contents.value
    first = next(ln for ln in card.splitlines() if "compile facts" in ln)
    plain = first.replace("\\", "")  # markdown clients get markup escaped
    assert plain.startswith("No compile facts: Triton refused it at line 7: "), card
    assert "arange's range must be a power of 2" in plain, card
