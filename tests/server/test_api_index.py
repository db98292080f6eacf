"""The Triton API index through the real server: with a configured `python`, the API rules
(TL020/TL021) and completion both use that interpreter's Triton, and the diagnostics already shown
are refreshed when its index arrives, without an edit.

The project interpreter is a real one: a throwaway venv that sees this environment's packages and
whose Triton has one function more than the server's, `tl.tritonlens_probe(x, scale)` (added at
start-up by a .pth line, the way site-wide patches are installed)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from lsp_helpers import Doc, pulls
from lsprotocol import types

PATCH = ("import triton.language as _tl; exec(\"def tritonlens_probe(x, scale):\\n    return x * scale\\n"
         "__all__ = [*__all__, 'tritonlens_probe']\", vars(_tl))\n")

KERNEL = """import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.tritonlens_probe(x)
    tl.store(out_ptr + offs, y, mask=mask)
"""


def project_python(root: Path) -> str:
    """A venv whose Triton is this environment's plus `tl.tritonlens_probe`."""
    venv = root / "project-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True, timeout=60).stdout.strip()
    # The path line makes this environment's packages (triton among them) importable, the import
    # line patches triton.language in every process of the venv.
    (Path(site) / "zz_project_triton.pth").write_text(sysconfig.get_paths()["purelib"] + "\n" + PATCH)
    check = subprocess.run([str(python), "-c", "import triton.language as tl; print(tl.tritonlens_probe(2, 3))"],
                           capture_output=True, text=True, timeout=120, check=False)
    assert check.stdout.strip() == "6", check.stderr
    return str(python)


def api_codes(diagnostics) -> set:
    return {d.code for d in diagnostics if d.code in ("TL020", "TL021")}


async def current_codes(client, doc: Doc) -> set:
    if pulls(client):
        return api_codes(await doc.diagnostics())
    got = client.published.get(doc.uri)
    return api_codes(got.diagnostics) if got is not None else set()


async def wait_codes(client, doc: Doc, want: set, timeout: float = 90.0) -> set:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    got = await current_codes(client, doc)
    while got != want and loop.time() < deadline:
        await asyncio.sleep(0.25)
        got = await current_codes(client, doc)
    return got


def test_api_identity_is_known_without_loading_and_follows_the_active_index():
    from tritonlens.analysis import tlapi

    before = tlapi.active_identity()
    assert before == (tlapi.active().version, tlapi.active().source)
    other = tlapi.load_snapshot(tlapi.snapshot_versions()[0])
    tlapi.set_active(other)
    try:
        assert tlapi.active_identity() == (other.version, "snapshot")
    finally:
        tlapi.set_active(None)
    assert tlapi.active_identity() == before


def test_same_api_compares_what_rules_and_completion_read():
    from tritonlens.analysis import tlapi

    versions = tlapi.snapshot_versions()
    newest = tlapi.load_snapshot(versions[-1])
    assert newest.same_api(tlapi.ApiIndex({"triton_version": newest.version, "modules": {
        m: {n: dict(newest._modules[m][n]) for n in newest.names(m)} for m in newest.modules()}}, "copy"))
    assert not newest.same_api(tlapi.load_snapshot(versions[0]))


@pytest.mark.slow
async def test_configured_python_drives_the_api_rules_and_completion(bare_client, tmp_path):
    client = bare_client
    python = project_python(tmp_path)
    await client.initialize_for_test({"select": ["TL020", "TL021"], "debounceMs": 20})
    target = tmp_path / "probe.py"
    target.write_text(KERNEL)
    doc = Doc(client, target).open()
    # The server's own Triton has no tl.tritonlens_probe: an unknown name.
    assert await wait_codes(client, doc, {"TL020"}) == {"TL020"}

    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"tritonlens": {"select": ["TL020", "TL021"], "debounceMs": 20, "python": python}}))
    # No edit follows: the project's index arrives and the open document is analysed again. There
    # the name exists, and the call lacks its required `scale`.
    assert await wait_codes(client, doc, {"TL021"}) == {"TL021"}
    diags = await doc.diagnostics() if pulls(client) else client.published[doc.uri].diagnostics
    (tl021,) = [d for d in diags if d.code == "TL021"]
    assert "missing required argument scale" in tl021.message
    assert doc.version == 1

    # Completion reads the same index as the rules.
    line = KERNEL.splitlines().index("    y = tl.tritonlens_probe(x)")
    got = await client.text_document_completion_async(types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri=doc.uri),
        position=types.Position(line=line, character=len("    y = tl.tritonl"))))
    items = {i.label: i for i in got.items}
    assert "tritonlens_probe" in items and "scale" in (items["tritonlens_probe"].detail or "")
    assert not client.messages
