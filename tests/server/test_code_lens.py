"""Code lenses and kernel cards through the server: Profile, Optimize and Show IR sit above the
kernels one launches, never above a device helper, and a name defined in both branches of a
module-level `if`/`else` gets them once, above the definition its name resolves to."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from lsp_helpers import Doc, position_of
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="module")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kernel_roles"


@pytest.fixture(scope="module")
def client(module_client):
    """This module's tests share one server per client profile."""
    return module_client


def _open(client, tmp_path: Path, name: str) -> Doc:
    shutil.copy(FIXTURES / name, tmp_path / name)
    return Doc(client, tmp_path / name).open()


async def _lenses(doc: Doc) -> list[tuple[str, str, int]]:
    got = await doc.client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=doc.uri)))
    return [(lens.command.title, lens.command.arguments[1], lens.range.start.line) for lens in got or []]


def _line(doc: Doc, needle: str, nth: int = 0) -> int:
    return position_of(doc.text, needle, doc.encoding, nth).line


async def test_device_helpers_get_no_profile_optimize_or_ir_lens(client, tmp_path):
    doc = _open(client, tmp_path, "helpers_and_kernels.py")
    await doc.diagnostics()
    got = await _lenses(doc)
    kernels = ["row_max_kernel", "scan_kernel", "square_kernel", "sum_kernel", "sum_twice_kernel"]
    # Lenses sit on the decorator line, the one above the `def`.
    assert got == [(title, k, _line(doc, f"def {k}(") - 1) for k in kernels for title in ("Profile", "Optimize", "Show IR")]


async def test_a_name_defined_per_branch_gets_lenses_above_its_last_definition(client, tmp_path):
    doc = _open(client, tmp_path, "versioned_definitions.py")
    await doc.diagnostics()
    last = _line(doc, "def scale_kernel(", 1) - 1
    assert await _lenses(doc) == [("Profile", "scale_kernel", last), ("Optimize", "scale_kernel", last),
                                  ("Show IR", "scale_kernel", last)]


async def test_cards_tell_a_helper_from_a_kernel_at_each_definition(client, tmp_path):
    doc = _open(client, tmp_path, "helpers_and_kernels.py")
    await doc.diagnostics()
    pos = position_of(doc.text, "def _square(", doc.encoding)
    card = (await doc.hover(pos.line, pos.character + 5)).contents.value
    assert r"**\_square** · Triton device helper (returns a value)" in card
    assert "Configurations" not in card and "estimates" not in card and "registers" not in card
    pos = position_of(doc.text, "def _store_block(", doc.encoding)
    card = (await doc.hover(pos.line, pos.character + 5)).contents.value
    assert r"**\_store\_block** · Triton device helper (called from the JIT function square\_kernel)" in card
    pos = position_of(doc.text, "def sum_kernel(", doc.encoding)
    card = (await doc.hover(pos.line, pos.character + 5)).contents.value
    assert r"**sum\_kernel** · Triton kernel" in card
    assert re.search(r"1 configuration from its launch sites|Configurations from", card), card

    doc = _open(client, tmp_path, "versioned_definitions.py")
    await doc.diagnostics()
    for nth in (0, 1):  # both branches' definitions have a card, each of its own text
        pos = position_of(doc.text, "def scale_kernel(", doc.encoding, nth)
        h = await doc.hover(pos.line, pos.character + 5)
        assert r"**scale\_kernel** · Triton kernel" in h.contents.value
        assert h.range.start.line == pos.line
        pos = position_of(doc.text, "def fast_exp(", doc.encoding, nth)
        h = await doc.hover(pos.line, pos.character + 5)
        assert r"**fast\_exp** · Triton device helper (returns a value)" in h.contents.value
