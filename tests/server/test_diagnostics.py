"""Diagnostics end to end: on open, on change (stale versions never published), positions in the
client's encoding, the fields a diagnostic carries."""

from __future__ import annotations

import pytest

import asyncio
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

from lsprotocol import types

from lsp_helpers import Doc, position_of, pulls

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def client(module_client):
    """This module's tests share one server per client profile."""
    return module_client

DATA = Path(__file__).parent / "data"


def tl001(diags):
    """Rules are added all the time: these tests look at TL001 only."""
    return [d for d in diags if d.code == "TL001"]


def copy(tmp_path: Path, name: str, text: str | None = None) -> Path:
    p = tmp_path / name
    p.write_text(text if text is not None else (DATA / name).read_text())
    return p


async def test_diagnostics_on_open(client, tmp_path):
    doc = Doc(client, copy(tmp_path, "scale.py")).open()
    diags = tl001(await doc.settled())  # an error shows as one once Triton's front end confirms it
    assert len(diags) == 1
    d = diags[0]
    assert d.source == "tritonlens"
    assert d.severity == types.DiagnosticSeverity.Error
    assert "tl.arange extent 100" in d.message and "128" in d.message
    # the range is the tl.arange call, in the client's position encoding
    assert d.range.start == position_of(doc.text, "tl.arange(0, BLOCK)", doc.encoding)
    # codeDescription links to the rule's page shipped with the package
    href = d.code_description.href
    assert href.startswith("file://") and href.endswith("/rules/TL001.md")
    assert Path(url2pathname(urlparse(href).path)).is_file()
    # related information: the launch-site value that produced the extent
    assert d.related_information, "expected the launch that gave BLOCK=100"
    rel = d.related_information[0]
    assert rel.location.uri == doc.uri
    assert rel.location.range.start.line == doc.text.split("\n").index("    BLOCK = 100")
    assert "'BLOCK = 100'" in rel.message and "`" not in rel.message  # shown as is: no markdown
    # data carries the quick fix, already in client units for this version
    assert d.data["fix"]["edits"][0]["newText"] == "128"


async def test_clean_file_and_non_kernel_file(client, tmp_path):
    fixed = Doc(client, copy(tmp_path, "scale_fixed.py")).open()
    assert tl001(await fixed.diagnostics()) == []
    plain = Doc(client, copy(tmp_path, "plain.py", "import os\nprint(os.getcwd())\n")).open()
    assert await plain.diagnostics() == []


async def test_change_updates_and_stale_versions_are_dropped(client, tmp_path):
    doc = Doc(client, copy(tmp_path, "scale.py")).open()
    assert len(tl001(await doc.settled())) == 1
    # Three quick edits: only the last version may be published.
    good = (DATA / "scale_fixed.py").read_text()
    doc.replace(good)
    doc.replace(good.replace("BLOCK = 128", "BLOCK = 96"))
    doc.replace(good.replace("BLOCK = 128", "BLOCK = 48"))
    diags = tl001(await doc.settled())
    assert len(diags) == 1
    assert "extent 48" in diags[0].message
    if not pulls(client):
        await asyncio.sleep(0.3)  # let any late publication arrive
        # A version is published again once Triton's front end has judged its error.
        versions = sorted({p.version for p in client.publications if p.uri == doc.uri})
        assert versions == [1, 4], f"published versions {versions}: intermediate versions must be dropped"
    else:
        # pull: an unchanged document answers "unchanged" for the same result id
        rid = doc.last_report.result_id
        assert rid
        await doc.diagnostics(previous=rid)
        assert isinstance(doc.last_report, types.RelatedUnchangedDocumentDiagnosticReport)
        doc.replace(good)
        assert tl001(await doc.diagnostics(previous=rid)) == []


async def test_positions_use_the_client_encoding(client, tmp_path):
    # Characters outside ASCII (and outside the BMP) before the finding on the same line:
    # UTF-16 counts 😀 as 2 units, UTF-8 as 4, the engine as 1 code point.
    text = (DATA / "scale.py").read_text().replace(
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
        '    é = "😀"; offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)',
    )
    doc = Doc(client, copy(tmp_path, "uni.py", text)).open()
    diags = tl001(await doc.diagnostics())
    assert len(diags) == 1
    start = position_of(text, "tl.arange(0, BLOCK)", doc.encoding)
    end = types.Position(line=start.line, character=start.character + len("tl.arange(0, BLOCK)"))
    assert diags[0].range == types.Range(start=start, end=end)


async def test_close_clears_pushed_diagnostics(client, tmp_path):
    doc = Doc(client, copy(tmp_path, "scale.py")).open()
    assert await doc.diagnostics()
    client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=doc.uri)))
    if not pulls(client):
        for _ in range(100):
            if client.published[doc.uri].diagnostics == [] or len(client.published[doc.uri].diagnostics) == 0:
                break
            await asyncio.sleep(0.05)
        assert len(client.published[doc.uri].diagnostics) == 0
