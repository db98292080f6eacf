"""Profile on save through the server (profileOnSave: true): debounced, only changed kernels,
with progress; results as lenses. Kernels run in Triton's interpreter (no GPU)."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from lsp_helpers import Doc
from test_profile import example, lenses, profiling_tokens, progress_kinds


async def test_profile_on_save(bare_client, tmp_path):
    await bare_client.initialize_for_test({"profileOnSave": True, "debounceMs": 20})
    if bare_client.profile_name != "visual-studio-code":
        pytest.skip("one client is enough for the on-save flow")
    doc = Doc(bare_client, example(tmp_path)).open()
    await doc.diagnostics()

    async def profiles_done(n):
        for _ in range(600):
            ends = [bare_client.progress_reports[t] for t in profiling_tokens(bare_client)
                    if isinstance(bare_client.progress_reports[t][-1], types.WorkDoneProgressEnd)]
            if len(ends) >= n:
                return ends
            await asyncio.sleep(0.1)
        raise AssertionError(f"expected {n} finished profiles, got {progress_kinds(bare_client)}")

    doc.save()
    ends = await profiles_done(1)
    assert "add_kernel" in ends[0][0].title
    titles = [l.command.title for l in await lenses(doc)]
    assert any(t.startswith("ran in the interpreter") for t in titles), titles
    # saving again without touching the kernel profiles nothing
    doc.save()
    await asyncio.sleep(1.0)
    assert len(profiling_tokens(bare_client)) == 1
    # editing the kernel makes the lens stale, and the next save profiles it again
    doc.replace(doc.text.replace("    x = tl.load(x_ptr + offsets, mask=mask)",
                                 "    x = tl.load(x_ptr + offsets, mask=mask) * 1"))
    titles = [l.command.title for l in await lenses(doc)]
    assert any(t.endswith("(before last edit)") for t in titles), titles
    doc.save()
    await profiles_done(2)


def test_a_gpu_measurement_without_line_samples_is_sampled_on_the_next_save():
    """Switching lineSamples on later: a kernel measured on a GPU without them counts as changed."""
    from tritonlens.profiling.worker.line_profile import LineProfile
    from tritonlens.profiling.worker.messages import LaunchProfile
    from tritonlens.profiling.worker.reports import KernelProfile
    from tritonlens.server.kernel_results import Measurement
    from tritonlens.server.profile_on_save import _lacks_lines

    def measured(mode, launch):
        return Measurement("k", "h", 0, KernelProfile(name="k", line=1, launches=[launch] if launch else []), mode)

    assert _lacks_lines(measured("gpu", LaunchProfile(kernel="k", time_ms=0.1)))
    assert not _lacks_lines(measured("gpu", LaunchProfile(kernel="k", time_ms=0.1, lines=LineProfile(kernel="k"))))
    assert not _lacks_lines(measured("interpreter", LaunchProfile(kernel="k")))  # nothing to sample on a CPU
    assert not _lacks_lines(measured("gpu", LaunchProfile(kernel="k", error="launch failed")))
    assert not _lacks_lines(measured("gpu", None))
