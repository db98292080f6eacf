"""A profile's report and the editor's device: what the server adds to a run that measured no
resources (Triton's interpreter, no GPU), and the device it tells the client about."""

from __future__ import annotations

import asyncio
import re
import shutil

import pytest
from conftest import REPO
from lsp_helpers import Doc
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def client(module_client):
    return module_client


def execute(client, command: str, *args):
    return client.workspace_execute_command_async(types.ExecuteCommandParams(command=command, arguments=list(args)))


async def compiled(client, name: str, timeout: float = 180) -> None:
    """Until the server logs the compile of `name` (on open, compile on save is on by default)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not any(f"compiled {name} for sm_90" in m.message for m in client.log_messages):
        assert loop.time() < deadline, [m.message for m in client.log_messages][-10:]
        await asyncio.sleep(0.1)


async def test_interpreter_profile_reports_the_compile_resources_and_the_device(client, tmp_path):
    if client.profile_name != "visual-studio-code":
        pytest.skip("the report and the notification do not depend on the client's capabilities")
    devices: list = []
    heard = asyncio.Event()

    @client.feature("tritonlens/device")
    def _device(params):
        devices.append(params)
        heard.set()

    path = tmp_path / "vector_add.py"
    shutil.copy(REPO / "examples" / "vector_add.py", path)
    doc = Doc(client, path).open()
    await compiled(client, "vector_add.py")
    res = await asyncio.wait_for(execute(client, "tritonlens.server.profile", doc.uri, "add_kernel"), 180)
    assert res["ok"] and res["report"]["mode"] == "interpreter", res
    assert res["report"]["kernels"][0]["launches"][0]["registers"] is None  # the interpreter measures none

    await asyncio.wait_for(heard.wait(), 10)
    (note,) = devices
    assert (note.backend, note.device) == ("local", "cpu (triton interpreter)")

    for markdown in ((await execute(client, "tritonlens.server.report", doc.uri))["markdown"],
                     (await execute(client, "tritonlens.server.report", doc.uri, "add_kernel"))["markdown"]):
        head = next(ln for ln in markdown.splitlines() if ln.startswith("| grid |"))
        assert head.endswith("| registers | spills | shared memory | occupancy |"), head
        row = markdown.splitlines()[markdown.splitlines().index(head) + 2]
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1:6] == ["—"] * 5, cells  # no timing in the interpreter: never made up
        assert re.fullmatch(r"\d+†", cells[6]) and 0 < int(cells[6][:-1]) <= 255, cells
        assert cells[7] == "none†" and re.fullmatch(r"[\d,]+ B†|—", cells[8]), cells
        assert re.fullmatch(r"[\d.]+%†", cells[9]), cells
        assert "† from the sm_90 compile of the same configuration: the run measured none." in markdown
