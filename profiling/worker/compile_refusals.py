"""Triton refusals whose raised text does not tell a kernel author what to do, said in their terms.

`in_user_terms(message, version)` gives the message a compile error carries (map_error in
job_compile.py); any other message passes unchanged. Standalone (stdlib only): shipped as a plain
file beside job_compile.py.
"""

from __future__ import annotations

import re

# Triton 3.9 keeps tl.make_block_ptr / tl.advance (block pointers) as stubs that raise this; no value or pin cures
# it, only a Triton that still has block pointers.
_BLOCK_POINTERS = "Block pointers have been removed in favor of the tensor descriptor API"


# Triton's dtypes are not constructors; code that calls one (acc = tl.float32(0.0)) is refused whatever its values.
_DTYPE_CALL = "'dtype' object is not callable"
# Said in the words in_user_terms gives them: refusals of the code itself, which no other value or pin would cure.
_BEYOND_VALUES = ("has no tl.make_block_ptr", "a dtype is not callable", "unsupported AST node type: Raise",
                  "AMD's device library")
# ptxas cannot link a ROCm device-library function (__ocml_*, __ockl_*): the kernel calls tl.extra.hip.libdevice,
# which only an AMD target provides.
_ROCM_EXTERN = re.compile(r"Unresolved extern function '(__oc[km]l_\w+)'")


def in_user_terms(message: str, version: str) -> str:
    """`message` (a compile error's) as its author should read it, knowing the compiling Triton's `version`."""
    if _BLOCK_POINTERS in message:
        return f"Triton {version} has no tl.make_block_ptr: facts need an older Triton"
    if _DTYPE_CALL in message:
        return "a dtype is not callable in Triton (tl.float32(x)): write tl.full((), x, tl.float32) or x.to(tl.float32)"
    rocm = _ROCM_EXTERN.search(message)
    if rocm:
        return (f"it calls AMD's device library ({rocm.group(1)}: tl.extra.hip.libdevice), which an NVIDIA target"
                " cannot link: use tl.extra.cuda.libdevice or tl.math")
    return message


def beyond_values(message: str) -> bool:
    """Whether a refusal (as in_user_terms words it) is of the code itself, not of the values it was compiled with."""
    return any(mark in message for mark in _BEYOND_VALUES)
