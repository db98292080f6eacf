"""Triton refusals whose raised text does not tell a kernel author what to do, said in their terms.

`in_user_terms(message, version)` gives the message a compile error carries (map_error in
job_compile.py); any other message passes unchanged. Standalone (stdlib only): shipped as a plain
file beside job_compile.py.
"""

from __future__ import annotations

# Triton 3.9 keeps tl.make_block_ptr / tl.advance (block pointers) as stubs that raise this; no value or pin cures
# it, only a Triton that still has block pointers.
_BLOCK_POINTERS = "Block pointers have been removed in favor of the tensor descriptor API"


def in_user_terms(message: str, version: str) -> str:
    """`message` (a compile error's) as its author should read it, knowing the compiling Triton's `version`."""
    if _BLOCK_POINTERS in message:
        return f"Triton {version} has no tl.make_block_ptr: facts need an older Triton"
    return message
