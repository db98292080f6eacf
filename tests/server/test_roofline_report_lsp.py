"""The report command's roofline picture, over stdio: a profile recorded on an H100 (opened with
tritonlens.server.openProfile) gives the report an SVG image of its launches on the measured
roofline; an optimize run afterwards keeps that picture; a profile run here, in Triton's
interpreter, gives one line saying why there is no picture."""

from __future__ import annotations

import base64
import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from lsp_helpers import Doc
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="module")

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "roofline"
IMAGE = re.compile(r"!\[roofline of (?P<name>[^\]]+)\]\(data:image/svg\+xml;base64,(?P<data>[A-Za-z0-9+/=]+)\)")
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def client(module_client):
    return module_client


async def command(client, name: str, *args):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=f"tritonlens.server.{name}", arguments=list(args)))


def opened(client, tmp_path, example: str) -> Doc:
    path = tmp_path / example
    shutil.copy(REPO / "examples" / example, path)
    return Doc(client, path).open()


def picture(markdown: str) -> tuple[str, str]:
    (found,) = list(IMAGE.finditer(markdown))
    return found["name"], base64.b64decode(found["data"]).decode("utf-8")


def ids(svg: str) -> set[str]:
    return {g.get("id") for g in ET.fromstring(svg).iter(f"{SVG}g") if g.get("id")}


def recorded_svg(name: str) -> str:
    from tritonlens.profiling.roofline_plot import roofline_svg
    from tritonlens.profiling.worker.reports import ProfileReport

    return roofline_svg(ProfileReport.from_json(json.loads((FIXTURES / name).read_text())))


async def test_recorded_gpu_profile_puts_its_roofline_in_the_report(client, tmp_path):
    doc = opened(client, tmp_path, "matmul.py")
    await doc.diagnostics()
    result = await command(client, "openProfile", doc.uri, str(FIXTURES / "matmul.profile.json"))
    assert result["ok"] is True and result["shown"] == ["matmul_kernel"], result
    report = await command(client, "report", doc.uri)
    markdown = report["markdown"]
    assert markdown.startswith("# Profile of matmul.py") and "\n## Roofline\n" in markdown
    name, svg = picture(markdown)
    assert name == "matmul.py"
    assert {"roof:copy", "roof:matmul", "point:matmul_kernel"} <= ids(svg)
    assert svg == recorded_svg("matmul.profile.json")  # the recorded launches, drawn as the CLI draws them
    # The kernel's own report (its hover card's link) carries the file's picture too.
    kernel_report = await command(client, "report", doc.uri, "matmul_kernel")
    assert kernel_report["markdown"].startswith("# `matmul_kernel`") and picture(kernel_report["markdown"])[1] == svg


async def test_an_optimize_keeps_the_profiles_picture(client, tmp_path):
    doc = opened(client, tmp_path, "vector_add.py")
    await doc.diagnostics()
    result = await command(client, "openProfile", doc.uri, str(FIXTURES / "vector_add.profile.json"))
    assert result["ok"] is True, result
    before = picture((await command(client, "report", doc.uri))["markdown"])[1]
    assert "point-bandwidth:add_kernel" in ids(before)  # no tl.dot: placed by its bandwidth
    optimize = await command(client, "optimize", doc.uri, "add_kernel")  # here: the interpreter, nothing timed
    assert optimize["ok"] is True, optimize
    markdown = (await command(client, "report", doc.uri))["markdown"]
    assert markdown.startswith("# Optimization of add_kernel")
    after = picture(markdown)[1]
    assert after == before and not any(i.startswith("rewrite") for i in ids(after))


async def test_an_interpreter_profile_says_why_there_is_no_picture(client, tmp_path):
    doc = opened(client, tmp_path, "vector_add.py")
    await doc.diagnostics()
    result = await command(client, "profile", doc.uri, "add_kernel")
    assert result["ok"] is True, result
    markdown = (await command(client, "report", doc.uri))["markdown"]
    assert markdown.endswith("## Roofline\n\n_no roofline: the kernels ran in Triton's interpreter "
                             "(no GPU, no timings)._")
    assert "data:image" not in markdown


async def test_no_profile_no_picture(client, tmp_path):
    doc = opened(client, tmp_path, "softmax.py")
    await doc.diagnostics()
    markdown = (await command(client, "report", doc.uri))["markdown"]
    assert markdown == "No profile or optimization has run for this file yet."
