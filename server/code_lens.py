"""Code lenses above each launchable kernel: Profile, Optimize, Show IR, and the latest measured result.

A device helper (`analysis.kernel_roles`: a combine function, a function returning a value, one only
other JIT functions call) gets none: it is never launched, measured or compiled on its own, so
these commands would act on nothing. The commands name a kernel, and a name defined more than once
(`if …: @triton.jit def k…  else: @triton.jit def k…`) resolves to its last definition, so the
lenses sit above that one only.
"""

from __future__ import annotations

import logging

from lsprotocol import types
from tritonlens.analysis.findings import Range
from tritonlens.analysis.kernel_roles import is_device_helper

from . import kernel_results
from .analyzed import analyzed, module_of
from .command_ids import OPTIMIZE, PROFILE, REPORT, SHOW_IR
from .diagnostics import kernel_hash
from .kernel_results import KernelResultStore

log = logging.getLogger(__name__)


def lenses_for(uri: str, snap, module, measurements: KernelResultStore) -> list[types.CodeLens]:
    """Hashes each kernel's source: on the analysis thread only."""
    out = []
    for k in module.kernels:
        if module.kernel(k.name) is not k or is_device_helper(module, k):
            continue
        line = k.range.start.line
        rng = snap.range(Range.of(line, 0, line, 0))
        args = [uri, k.name]
        out.append(types.CodeLens(range=rng, command=types.Command(title="Profile", command=PROFILE, arguments=args)))
        out.append(types.CodeLens(range=rng, command=types.Command(title="Optimize", command=OPTIMIZE, arguments=args)))
        # The PTX, lines of the `def` marked; the client may offer the other stages.
        ir_args = [uri, k.name, "ptx", k.name_range.start.line + 1]
        out.append(types.CodeLens(range=rng, command=types.Command(title="Show IR", command=SHOW_IR, arguments=ir_args)))
        m = measurements.latest(uri, k.name)
        if m is not None:
            title = kernel_results.summary(m)
            if m.kernel_hash != kernel_hash(k.text):
                title += " (before last edit)"
            out.append(types.CodeLens(range=rng, command=types.Command(title=title, command=REPORT, arguments=args)))
    return out


def refresh(ls) -> None:
    """Ask the client to re-request lenses (results changed), when it supports that."""
    if ls.client_support.code_lens_refresh:
        ls.workspace_code_lens_refresh(None, callback=lambda _r: None)


def register(ls) -> None:
    @ls.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    async def code_lens(params: types.CodeLensParams):
        uri = params.text_document.uri
        snap, result = await analyzed(ls, uri)
        module = module_of(result)
        if module is None:
            return None
        return await ls.analysis.run(lenses_for, uri, snap, module, ls.measurements)
