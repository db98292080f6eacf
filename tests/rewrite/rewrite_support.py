"""Names the rewrite tests import (a module of its own: `conftest` is not importable by name
when several test folders each have one)."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def fenced(code: str, prose: str = "I changed the block size.") -> str:
    return f"Here is the rewrite.\n\n```python\n{code}```\n\n{prose}\n"


# the vadd fixture's wrapper with a 256-element block: a correct rewrite every LLM test can offer
WRAPPER_256 = '''def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = out.numel()
    BLOCK_SIZE = 256
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    add_kernel[grid](x, y, out, n, BLOCK_SIZE=BLOCK_SIZE, num_warps=4)
    return out
'''
