"""A compile finding that rests on values nobody wrote is a hint, not a verdict.

Where every configuration a TL101–TL106 finding speaks of holds assumed values (a tile size the
static model could not read, Triton's default num_warps, a dtype taken as fp32), the compiler
judged our guess, not the user's code: the finding never reaches error severity, its message
starts with what was assumed ("assuming BLOCK_SIZE=4096, BLOCK_ROW=64: …"), and it carries the
pin comment that makes the guess the user's own choice, as a fix offered in the editor (never
applied by `check --fix`)."""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from functools import lru_cache

from tritonlens.analysis import message_text as mt
from tritonlens.analysis.findings import (
    MESSAGE_LIMIT,
    Applicability,
    Finding,
    Fix,
    Range,
    Severity,
    TextEdit,
)

_PIN = re.compile(r"`# tritonlens: ([^`]+)`")  # how assumed_values.Filled.note writes a pin


def assumed_pins(config) -> list[str]:
    """'BLOCK_SIZE=64' for each value `config` (a ConfigFacts) assumed, as its pin comment writes it."""
    found = [m.group(1).strip() for note in config.assumed if (m := _PIN.search(str(note)))]
    return list(dict.fromkeys(found))


def hint_if_assumed(f: Finding, configs: list, lines: list[str], def_line: int | None) -> Finding:
    """`f` as a hint when every configuration it names is assumed; else `f` unchanged."""
    labels = set(f.data.get("configs") or ([f.data["config"]] if f.data.get("config") else []))
    named = [c for c in configs if c.label in labels or labels.intersection(c.labels)]
    if not named or any(c.source != "assumed" for c in named):
        return f
    pins = assumed_pins(named[0])
    if not pins:
        return f
    for width in (36, 20, 0):  # fewer assumptions named before the finding's own fact is cut
        head = f"assuming {mt.names(pins, width)}: " if width else f"assuming {len(pins)} values: "
        message = mt.without_tail(head + f.message, MESSAGE_LIMIT)
        if not message.endswith("…"):
            break
    severity = Severity.WARNING if f.severity is Severity.ERROR else f.severity
    return replace(f, message=message, severity=severity, fix=_pin_fix(pins, lines, def_line) or f.fix,
                   data={**f.data, "assumed": pins})


def _pin_fix(pins: list[str], lines: list[str], def_line: int | None) -> Fix | None:
    """A comment pinning the assumed values, on a line of its own above the kernel's decorators."""
    top = _decorated_top(lines, def_line)
    if top is None:
        return None
    indent = lines[top - 1][:len(lines[top - 1]) - len(lines[top - 1].lstrip())]
    at = Range.of(top - 1, 0, top - 1, 0)
    return Fix(f"pin {mt.names(pins, 40)} above the kernel",
               (TextEdit(at, f"{indent}# tritonlens: {' '.join(pins)}\n"),), Applicability.UNSAFE)


def _decorated_top(lines: list[str], def_line: int | None) -> int | None:
    """The 1-based line where the kernel's decorators (or its `def`) begin; None: the file does not parse."""
    return _tops("\n".join(lines)).get(def_line) if def_line else None


@lru_cache(maxsize=8)
def _tops(text: str) -> dict[int, int]:
    """{def line: first decorator line} for every function of `text` (every finding of a file asks)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    return {node.lineno: min([d.lineno for d in node.decorator_list] + [node.lineno])
            for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
