"""Hover cards on a file written as libraries write kernels (autotune configs from a helper
function, device helpers, constexpr locals, underscored names): the kernel card is three to six
lines with the full report one link away, no hover on the file is longer than twelve lines, names
are escaped in markdown, and a client that reads plain text only gets the same lines in plain text."""

from __future__ import annotations

import asyncio
import json
import re
from urllib.parse import unquote

import pytest
import pytest_lsp
from conftest import CONFIG
from lsp_helpers import Doc, position_of
from lsprotocol import types
from pytest_lsp import LanguageClient
from test_client_support import plaintext_capabilities
from test_diagnostics import copy

pytestmark = pytest.mark.asyncio(loop_scope="module")

FILE = "norm_and_matmul.py"
KERNEL = "_rms_norm_forward_kernel"
# Every spot worth a hover: kernel names at the def and the launch, helpers, variables, constexpr
# locals and parameters, tl calls, memory accesses and a dot inside a helper's loop.
SPOTS = [("def _rms_norm_forward_kernel", 6), ("_rms_norm_forward_kernel[", 3), ("def _mean_square", 6),
         ("def small_mm_kernel", 6), ("def _tile_product", 6), ("HALF: tl", 1), ("BLOCK_SIZE: tl.constexpr)", 2),
         ("rstd = ", 1), ("tl.load(x_ptr", 4), ("tl.store(out_ptr", 4), ("tl.dot(a, b)", 4), ("tl.sqrt", 4),
         ("tl.sum(x * x", 4), ("acc = tl.zeros", 1), ("tl.arange(0, BLOCK_M)", 4), ("offs < HALF", 9)]
WAIT = 150  # seconds: a cold cross-compile on a busy 2-core machine
# Emphasis is a pair of markers: a message's own `2**31` is text, and plain text shows it as it is.
MARKDOWN_SYNTAX = ("|", "`", "\\_", "](")
EMPHASIS = re.compile(r"\*\*[^*\s][^*]*\*\*")


@pytest.fixture(scope="module")
def client(module_client):
    return module_client


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def plain_client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("plain")
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=plaintext_capabilities(), root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        initialization_options={"debounceMs": 20}))
    lsp_client.root = root
    yield
    await lsp_client.shutdown_session()


async def _open(client, tmp_path) -> Doc:
    doc = Doc(client, copy(tmp_path, FILE)).open()
    await doc.diagnostics()
    return doc


async def _hover_on(doc: Doc, needle: str, offset: int):
    pos = position_of(doc.text, needle, doc.encoding)
    return await doc.hover(pos.line, pos.character + offset)


async def test_kernel_card_is_short_escaped_and_links_the_full_report(client, tmp_path):
    doc = await _open(client, tmp_path)
    h = await _hover_on(doc, f"def {KERNEL}", 6)
    md = h.contents.value
    lines = md.splitlines()
    assert h.contents.kind == types.MarkupKind.Markdown
    assert 3 <= len(lines) <= 6, md
    assert lines[0].startswith(r"**\_rms\_norm\_forward\_kernel** · Triton kernel (autotuned)"), md
    card = "\n".join(lines[:-1])  # the link's target is a URI, not text
    assert "_rms_norm" not in card.replace(r"\_", ""), md  # no bare underscore of the name left for emphasis
    assert "Traceback" not in md and "?" not in md.replace("command:tritonlens.showReport?", ""), md
    assert not any(ln.lstrip().startswith("|") for ln in lines), "no table in the card"
    # Before the compile answers the card says it is pending, and where the configurations come
    # from; once it has, what the compiler made of them.
    assert re.match(r"Compile facts pending: compiled for sm\\_90 on save|sm\\_90: \d+ registers", lines[1]), md
    if lines[1].startswith("Compile facts pending"):
        # _norm_configs() builds them: read from the text, none of their values missing
        assert lines[2].rstrip() == "4 configurations from its autotune configs in this file", md
    # The last line links the full report of this kernel.
    link = re.search(r"\[Full report\]\(command:tritonlens\.showReport\?([^)]+)\)", lines[-1])
    assert link and json.loads(unquote(link.group(1))) == [doc.uri, KERNEL], lines[-1]


async def test_full_report_keeps_what_the_card_left_out(client, tmp_path):
    doc = await _open(client, tmp_path)
    rep = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tritonlens.server.report", arguments=[doc.uri, "small_mm_kernel"]))
    md = rep["markdown"]
    assert "small_mm_kernel(a_ptr, b_ptr, c_ptr, K, stride_k," in md  # the signature
    assert "| the launch at line 65 | 64 | 64 | 32 |" in md  # the configurations
    assert "**Static estimates**" in md
    # Its loads and its tl.dot are in a helper: the estimate says unknown, never "0 FLOPs".
    assert "tl.dot FLOPs per program" in md and "tl.dot FLOPs in the helper \\_tile\\_product not counted" in md
    row = next(ln for ln in md.splitlines() if ln.startswith("| the launch at line 65 |") and "unknown" in ln)
    assert "| 0 |" not in row, row


async def test_elementwise_kernel_shows_no_zero_flops(client, tmp_path):
    doc = await _open(client, tmp_path)
    rep = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tritonlens.server.report", arguments=[doc.uri, KERNEL]))
    md = rep["markdown"]
    assert "**Static estimates**" in md and "FLOPs per program" not in md
    assert "FLOPs: only tl.dot is counted, and this kernel has none." in md


async def test_no_hover_on_the_file_is_longer_than_twelve_lines(client, tmp_path):
    doc = await _open(client, tmp_path)
    seen = 0
    for needle, offset in SPOTS:
        h = await _hover_on(doc, needle, offset)
        if h is None:
            continue
        seen += 1
        text = h.contents.value
        assert len(text.splitlines()) <= 12, (needle, text)
        assert "Traceback" not in text, (needle, text)
        if needle.startswith("def ") or needle.endswith("["):
            assert len(text.splitlines()) <= 6, (needle, text)
    assert seen >= len(SPOTS) - 2  # nearly every spot has a card: the test reads real ones


async def test_plaintext_client_gets_the_same_lines_without_markdown(plain_client, tmp_path):
    doc = await _open(plain_client, tmp_path)
    h = await _hover_on(doc, f"def {KERNEL}", 6)
    text = h.contents.value
    assert h.contents.kind == types.MarkupKind.PlainText
    lines = text.splitlines()
    assert 3 <= len(lines) <= 6, text
    assert lines[0] == f"{KERNEL} · Triton kernel (autotuned)", text
    assert not [s for s in MARKDOWN_SYNTAX if s in text] and not EMPHASIS.search(text), text
    assert lines[-1].startswith("Full report: command tritonlens.server.report"), text
    for needle, offset in SPOTS:
        h = await _hover_on(doc, needle, offset)
        if h is not None:
            assert h.contents.kind == types.MarkupKind.PlainText
            value = h.contents.value
            assert not [s for s in ("```", "\\_", "](") if s in value] and not EMPHASIS.search(value), (needle, value)


async def test_compiled_card_carries_registers_spills_occupancy_and_reads_built_configs(client, tmp_path):
    """Opening the file compiles its kernels from the text (no test launches them): the card then
    says what the compiler made of the kernel, and that its configurations were read, not assumed."""
    doc = await _open(client, tmp_path)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    md = ""
    while loop.time() < deadline:
        md = (await _hover_on(doc, f"def {KERNEL}", 6)).contents.value
        if "registers" in md:
            break
        await asyncio.sleep(1)
    lines = md.splitlines()
    assert 3 <= len(lines) <= 6, md
    m = re.match(r"sm\\_90: (\d+) registers, (no spills|[\d.]+ (?:B|KiB) spilled), .* shared memory, "
                 r"occupancy (100%|[\d.]+% \(limited by \w[\w ]*\)), no tl.dot", lines[1])
    assert m and 0 < int(m.group(1)) <= 255, md
    assert "100% (limited by" not in md  # nothing limits a full SM
    # The autotune configs _norm_configs() builds are folded from the text: nothing to pin.
    assert lines[2].rstrip() == "Configurations from the text (launch sites, autotune configs)", md
