"""Names the rewrite tests import (a module of its own: `conftest` is not importable by name
when several test folders each have one)."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def fenced(code: str, prose: str = "I changed the block size.") -> str:
    return f"Here is the rewrite.\n\n```python\n{code}```\n\n{prose}\n"
