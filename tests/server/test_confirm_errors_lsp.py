"""Static errors confirmed by Triton's front end through the language server (real worker, real
Triton, lowering to TTIR on the CPU): published at once as unconfirmed warnings, then again as
errors when confirmed, dropped when refuted, warnings when the front end cannot decide; nothing
is lowered in an untrusted workspace."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_helpers import Doc, pulls
from lsprotocol import types

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="function")]

KERNELS = '''\
import triton
import triton.language as tl


def halve(x):
    return x / 2


@triton.jit
def removed_keyword_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, boundary_check=(0,))
    tl.store(x_ptr + offs, x + 1.0)


@triton.jit
def single_row_kernel(out_ptr, n):
    z = tl.zeros((n,), dtype=tl.float32)
    tl.store(out_ptr + tl.arange(0, 1), z)


@triton.jit
def calls_plain_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, halve(tl.load(x_ptr + offs)))


def launch(x, out):
    removed_keyword_kernel[(1,)](x, x.numel(), BLOCK=64)
    single_row_kernel[(1,)](out, 1)
    calls_plain_kernel[(1,)](x, BLOCK=32)
'''

WARNING, ERROR = types.DiagnosticSeverity.Warning, types.DiagnosticSeverity.Error


def line_of(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.split("\n")) if needle in ln)


def at(diags, code: str, line: int):
    return [d for d in diags if d.code == code and d.range.start.line == line]


def unconfirmed(d) -> str:
    return (d.data or {}).get("unconfirmed") or ""


async def test_errors_wait_for_the_front_end_then_stay_go_or_stay_warnings(client):
    path = Path(client.root) / "kernels.py"
    path.write_text(KERNELS)
    doc = Doc(client, path).open()
    keyword, shape = line_of(KERNELS, "boundary_check"), line_of(KERNELS, "tl.zeros((n,)")
    plain = line_of(KERNELS, "halve(tl.load")
    first = await doc.diagnostics()
    (tl021,) = at(first, "TL021", keyword)
    if tl021.severity == WARNING:  # published before the front end answered
        assert "being confirmed" in unconfirmed(tl021)
    settled = await doc.settled()
    (tl021,) = at(settled, "TL021", keyword)
    assert tl021.severity == ERROR and not unconfirmed(tl021)
    assert tl021.message == at(first, "TL021", keyword)[0].message
    # n=1 at the only launch: the JIT makes it a constant and the front end accepts the kernel.
    assert not [d for d in at(settled, "TL016", shape) if d.severity == ERROR]
    assert not at(settled, "TL016", shape)
    # The standalone module leaves the plain function out: the front end cannot decide.
    (tl019,) = at(settled, "TL019", plain)
    assert tl019.severity == WARNING and "halve" in unconfirmed(tl019)
    if not pulls(client):
        versions = [p for p in client.publications if p.uri == doc.uri and p.version == doc.version]
        assert len(versions) >= 2  # static at once, confirmed later


async def test_a_newer_text_is_confirmed_not_the_older_one(client):
    path = Path(client.root) / "edited.py"
    path.write_text(KERNELS)
    doc = Doc(client, path).open()
    # Before the first answer: the keyword goes away, and with it the error.
    doc.replace(KERNELS.replace(", boundary_check=(0,)", ""))
    settled = await doc.settled()
    assert not [d for d in settled if d.code == "TL021"]
    (tl019,) = [d for d in settled if d.code == "TL019"]
    assert tl019.severity == WARNING and "halve" in unconfirmed(tl019)


async def test_an_untrusted_workspace_lowers_nothing(bare_client):
    await bare_client.initialize_for_test({"debounceMs": 20, "trusted": False})
    path = Path(bare_client.root) / "untrusted.py"
    path.write_text(KERNELS)
    doc = Doc(bare_client, path).open()
    diags = await doc.diagnostics()
    (tl021,) = at(diags, "TL021", line_of(KERNELS, "boundary_check"))
    assert tl021.severity == WARNING and "not trusted" in unconfirmed(tl021)
    await asyncio.sleep(1.0)  # nothing else arrives: no confirmation runs
    again = await doc.diagnostics()
    assert at(again, "TL021", tl021.range.start.line)[0].severity == WARNING
