"""A file's compile arrives kernel by kernel: `$/progress` names each kernel as its compile starts,
the first kernel's findings and hover facts are delivered while the next still compiles, a save of
new text still cancels the compile running for the old one, and the kernel just edited is compiled
before those whose facts still hold.

The data is a fast kernel first (one configuration; a tl.arange over 48 elements that Triton's
compiler refuses: TL105) and a slow one after it (an autotuned matmul with eight configurations
to cross-compile). The server gets a Triton cache of its own, empty at the start of the run, so
the slow kernel is slow on every run, not only the first on this machine.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import SERVER, init_params, make_client
from lsp_helpers import Doc, position_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

WAIT = 240  # seconds: the matmul's eight cold cross-compiles, on a busy 2-core machine

TEXT = '''import triton
import triton.language as tl


@triton.jit
def tail_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if n > 4096:
        offs = tl.arange(0, 48)
    tl.store(x_ptr + offs, x + 1, mask=offs < n)


@triton.autotune(
    configs=[triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k}, num_warps=w, num_stages=s)
             for m, n, k, w, s in [(128, 128, 64, 8, 3), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4),
                                   (64, 64, 64, 4, 3), (128, 256, 32, 8, 3), (256, 128, 32, 8, 3),
                                   (32, 64, 32, 2, 5), (64, 32, 64, 2, 5)]],
    key=["M", "N", "K"],
)
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * stride_bk + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.float16))


def bump(x):
    tail_kernel[(1,)](x, x.numel(), BLOCK=64)


def matmul(a, b, c):
    M, K = a.shape
    N = b.shape[1]
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0))
'''


class _Noting(list):
    """The client's publications, each noted with the compile progress that had ended by then
    (read as it arrives: a test polling afterwards could see a later state)."""

    def __init__(self, client):
        super().__init__()
        self.client = client
        self.stream = []  # (time, codes, tokens whose progress had ended)

    def append(self, params) -> None:
        super().append(params)
        ended = {t for t, v in self.client.progress_reports.items()
                 if v and isinstance(v[-1], types.WorkDoneProgressEnd)}
        self.stream.append((time.monotonic(), {str(d.code) for d in params.diagnostics}, ended))


def _client():
    client = make_client()
    client.publications = _Noting(client)
    return client


# Triton's own cache, private to this run (the suite's cache folder is removed at its end).
_TRITON_CACHE = str(Path(os.environ["XDG_CACHE_HOME"]) / "triton-streaming")
CONFIG = ClientServerConfig(server_command=SERVER, client_factory=_client,
                            server_env={**os.environ, "TRITON_CACHE_DIR": _TRITON_CACHE})


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def client(lsp_client: LanguageClient, tmp_path_factory):
    # Neovim's profile: diagnostics are pushed, so each delivery is a message the client sees.
    root = tmp_path_factory.mktemp("workspace")
    lsp_client.init_result = await lsp_client.initialize_session(
        init_params("neovim", root, {"debounceMs": 20, "compileOnSave": True, "select": ["ALL"]}))
    lsp_client.root = root
    yield
    await lsp_client.shutdown_session()


def compile_token(client, kernels: str, after: set) -> str | None:
    return next((t for t, v in client.progress_reports.items() if t not in after and v
                 and isinstance(v[0], types.WorkDoneProgressBegin) and f"compiling {kernels} for sm_90" in v[0].title),
                None)


async def until(what, why: str, timeout: float = WAIT):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        got = what()
        if got:
            return got
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {why}")


def reports(client, token) -> list[tuple[str, int | None]]:
    return [(v.message, v.percentage) for v in client.progress_reports[token]
            if isinstance(v, types.WorkDoneProgressReport)]


def ended(client, token) -> str | None:
    last = client.progress_reports[token][-1]
    return last.message if isinstance(last, types.WorkDoneProgressEnd) else None


async def card(doc: Doc, kernel: str) -> str:
    pos = position_of(doc.text, f"def {kernel}", doc.encoding)
    hover = await doc.hover(pos.line, pos.character + 5)
    return hover.contents.value if hover is not None else ""


async def test_kernels_arrive_one_by_one_and_a_new_save_cancels_the_rest(client):
    path = client.root / "two_kernels.py"
    path.write_text(TEXT)
    names = "tail_kernel, matmul_kernel"
    doc = Doc(client, path).open()
    first = await until(lambda: compile_token(client, names, set()), "the compile's progress")

    # The fast kernel's finding is delivered while the slow kernel still compiles.
    await until(lambda: any("TL105" in codes for _, codes, _ in client.publications.stream), "the first kernel's TL105")
    at, _, done_then = next(s for s in client.publications.stream if "TL105" in s[1])
    assert first not in done_then, "TL105 arrived only once the whole file was compiled"
    assert reports(client, first) == [("compiling 1 of 2 kernels: tail_kernel", 0),
                                      ("compiling 2 of 2 kernels: matmul_kernel", 50)]
    assert "Compile facts pending" not in await card(doc, "tail_kernel")
    assert "Compile facts pending" in await card(doc, "matmul_kernel")

    # A save of new text while the matmul compiles: that compile is worthless and stops.
    doc.replace(TEXT.replace("x + 1", "x + 2"))
    doc.save()
    assert await until(lambda: ended(client, first), "the first compile to stop") == "cancelled"
    second = await until(lambda: compile_token(client, names, {first}), "the compile of the saved text")
    assert await until(lambda: ended(client, second), "the second compile") == "done"
    assert [m for m, _ in reports(client, second)] == ["compiling 1 of 2 kernels: tail_kernel",
                                                       "compiling 2 of 2 kernels: matmul_kernel"]
    final = await doc.diagnostics()
    (err,) = [d for d in final if d.code == "TL105"]
    start = position_of(doc.text, "tl.arange(0, 48)", doc.encoding)
    assert err.range.start == start and err.data["kernel"] == "tail_kernel"
    matmul = await card(doc, "matmul_kernel")
    assert "Compile facts pending" not in matmul and "registers" in matmul, matmul
    assert "before the last edit" not in await card(doc, "tail_kernel")
    print(f"TL105 of the first kernel {at - client.publications.stream[0][0]:.1f} s after the first publication")


async def test_the_kernel_just_edited_compiles_first(client):
    path = client.root / "edited_second.py"
    path.write_text(TEXT)
    names = "tail_kernel, matmul_kernel"
    before = set(client.progress_reports)
    doc = Doc(client, path).open()
    first = await until(lambda: compile_token(client, names, before), "the first compile")
    assert await until(lambda: ended(client, first), "the first compile") == "done"
    seen = set(client.progress_reports)
    assert "registers" in await card(doc, "matmul_kernel")

    # An edit inside the second kernel: it is compiled first; the first kernel keeps its facts.
    doc.replace(TEXT.replace("acc += tl.dot(a, b)", "acc += tl.dot(a, b)  # the K loop"))
    doc.save()
    second = await until(lambda: compile_token(client, names, seen), "the compile of the edit")
    await until(lambda: reports(client, second), "the first kernel's progress")
    assert reports(client, second)[0][0] == "compiling 1 of 2 kernels: matmul_kernel"
    assert "Compile facts pending" not in await card(doc, "tail_kernel")
    assert await until(lambda: ended(client, second), "the compile of the edit") == "done"
    assert [m for m, _ in reports(client, second)] == ["compiling 1 of 2 kernels: matmul_kernel",
                                                       "compiling 2 of 2 kernels: tail_kernel"]
