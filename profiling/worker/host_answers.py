"""What a user's module asks of the machine at its top level, answered as the GPU host its kernels
are compiled for would answer (tolerant_module.py loads the module).

Standalone (stdlib; torch when the module uses it): shipped as a plain file to the worker's interpreter.
"""

from __future__ import annotations

import ast
import sys


def triton_is_here(text: str) -> None:
    """torch's has_triton() answers True: it asks for a GPU, and without one a project binds CPU
    stand-ins for its jit helpers (`if has_triton(): @triton.jit def _pid(...) else: def _pid(*a):
    ...`), which its kernels then call and Triton refuses ("Unsupported function referenced"). Torch
    is imported for it only when the file names it or the worker already has."""
    if "torch" not in sys.modules and "has_triton" not in text:
        return
    try:
        import torch.utils._triton as torch_triton
    except Exception:  # noqa: BLE001 - no torch: nothing asks it
        return
    torch_triton.has_triton = _has_triton


def _has_triton() -> bool:
    return True


def undecidable(test: ast.expr, path: str, scope: dict) -> bool:
    """Whether evaluating the condition `test` raises here."""
    try:
        eval(compile(ast.Expression(test), path, "eval"), scope)  # the user's module, in the worker only
    except Exception:  # noqa: BLE001
        return True
    return False
