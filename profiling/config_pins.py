"""Values the user pins for a kernel's compile, where the static model cannot read them.

Two places, both read as text (nothing of the project is imported):

- a comment on the line(s) directly above the kernel's decorators or `def` (several lines allowed,
  and between the decorators), or directly above one launch site (`kernel[grid](...)`), which then
  holds for that launch's configurations only:

      # tritonlens: BLOCK_SIZE=4096 num_warps=8 DTYPE=tl.bfloat16 ACTIVATION="gelu"

- a table in the project's pyproject.toml (the project root is `launch_records.project_root`):

      [tool.tritonlens.pins.rms_norm_kernel]             # every kernel of that name in the project
      BLOCK_SIZE = 4096
      [tool.tritonlens.pins."ops/rms_norm.py::rms_norm_kernel"]   # one file's kernel (path from the root)
      DTYPE = "tl.bfloat16"

A value is an int, a float, True / False, a dtype (`tl.float16`, `torch.bfloat16`, `bf16`) or a
quoted string. A pin names a constexpr parameter, `num_warps`, `num_stages`, or a runtime
parameter (a dtype pins a pointer's element type, a number an integer or float argument). Pins
fill what the static model left unknown and replace defaults nobody passed (a parameter's default,
Triton's num_warps=4): a value a launch site writes wins, and a pin it overrides is reported as
unused. The comment pin beats the pyproject table, a launch site's pin beats the
kernel's. A pin that cannot be read is reported in one short line and ignored; nothing else is lost.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10: comment pins only
    tomllib = None

PIN_COMMENT = re.compile(r"^\s*#\s*tritonlens:\s*(?P<body>.*)$")
_ASSIGN = re.compile(r"\s*(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<value>\"[^\"]*\"|'[^']*'|[^\s\"']+)")
OPTIONS = ("num_warps", "num_stages")
# dtype spellings the compile worker accepts (worker/compile_configs.py's aliases), canonical torch names.
DTYPES = {"float16": "float16", "half": "float16", "fp16": "float16", "bfloat16": "bfloat16",
          "bf16": "bfloat16", "float32": "float32", "float": "float32", "fp32": "float32", "float64": "float64",
          "fp64": "float64", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
          "uint8": "uint8", "int1": "int1", "bool": "int1", "float8_e4m3fn": "float8_e4m3fn",
          "float8_e5m2": "float8_e5m2"}
_DTYPE_PREFIXES = ("triton.language.", "tl.", "torch.")


@dataclass(frozen=True)
class DType:
    """A dtype value (`tl.float16`): compiled as `{"kind": "dtype"}`, shown as `tl.float16`."""

    name: str

    def __str__(self) -> str:
        return f"tl.{self.name}"


def dtype_of(text: str) -> DType | None:
    """`tl.float16`, `torch.float16`, `float16`, `fp16` → DType("float16"); None for anything else."""
    t = text.strip()
    prefixed = t.startswith(_DTYPE_PREFIXES)
    for p in _DTYPE_PREFIXES:
        t = t.removeprefix(p)
    canon = DTYPES.get(t)
    # A bare `float` or `bool` is a Python type, not a dtype, unless written as tl.float.
    if canon is None or (t in ("float", "bool") and not prefixed):
        return None
    return DType(canon)


class PinError(ValueError):
    pass


def parse_value(text: str):
    """A pinned value from its written form; PinError when it is none of the accepted kinds."""
    dt = dtype_of(text)
    if dt is not None:
        return dt
    try:
        v = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        v = None
    if isinstance(v, (bool, int, float, str)):
        return v
    raise PinError("not a number, True/False, a dtype (tl.float16) or a quoted string")


def show(v) -> str:
    """A value as a pin would write it."""
    return repr(v) if isinstance(v, str) else str(v)


@dataclass(frozen=True)
class Pin:
    name: str
    value: object
    where: str  # "at line 12", "in pyproject.toml"

    def text(self) -> str:
        return f"`{self.name}={show(self.value)}` {self.where}"


@dataclass
class KernelPins:
    """One kernel's pins: for every configuration, and per launch line (1-based) for that launch's."""

    kernel: dict[str, Pin] = field(default_factory=dict)
    by_launch: dict[int, dict[str, Pin]] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)

    def for_launch(self, line: int | None) -> dict[str, Pin]:
        return {**self.kernel, **(self.by_launch.get(line, {}) if line is not None else {})}


def _comment_lines_above(lines: list[str], first: int) -> list[int]:
    """0-based indices of the comment lines directly above line `first` (0-based), nearest last."""
    out = []
    i = first - 1
    while i >= 0 and lines[i].lstrip().startswith("#"):
        out.append(i)
        i -= 1
    return out[::-1]


def _read_comment(line: str, where: str, messages: list[str]) -> dict[str, object]:
    m = PIN_COMMENT.match(line)
    if m is None:
        return {}
    body = m.group("body").strip()
    if not body or body.startswith("ignore"):
        return {}  # a suppression comment, not a pin
    out, pos = {}, 0
    while pos < len(body):
        a = _ASSIGN.match(body, pos)
        if a is None:
            rest = body[pos:].strip()
            if rest and not rest.startswith("#"):
                messages.append(f"pin `{rest[:40]}` {where} ignored: write NAME=VALUE")
            break
        pos = a.end()
        try:
            out[a.group("name")] = parse_value(a.group("value"))
        except PinError as exc:
            messages.append(f"pin `{a.group(0).strip()[:60]}` {where} ignored: {exc}")
    return out


def _comment_pins(lines: list[str], rows: list[int], messages: list[str]) -> dict[str, Pin]:
    out: dict[str, Pin] = {}
    for i in rows:
        where = f"at line {i + 1}"
        for name, value in _read_comment(lines[i], where, messages).items():
            out[name] = Pin(name, value, where)
    return out


_PYPROJECT: dict[str, tuple[float, dict, str | None]] = {}


def _pins_table(root: Path) -> tuple[dict, str | None]:
    """The project's [tool.tritonlens.pins] table and why it could not be read (or None)."""
    p = root / "pyproject.toml"
    try:
        mtime = p.stat().st_mtime
    except OSError:
        return {}, None
    hit = _PYPROJECT.get(str(p))
    if hit is not None and hit[0] == mtime:
        return hit[1], hit[2]
    table, error = {}, None
    if tomllib is None:
        return {}, "reading pyproject.toml needs Python 3.11"
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
        table = data.get("tool", {}).get("tritonlens", {}).get("pins", {})
        if not isinstance(table, dict):
            table, error = {}, "[tool.tritonlens.pins] is not a table"
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        error = f"cannot read it: {exc}"
    _PYPROJECT[str(p)] = (mtime, table, error)
    return table, error


def pyproject_fingerprint(path) -> str:
    """What the compile cache must key on besides the file: the pins pyproject.toml holds."""
    if path is None:
        return ""
    from tritonlens.profiling.launch_records import project_root

    table, error = _pins_table(project_root(path))
    return repr((sorted((k, sorted(v.items()) if isinstance(v, dict) else v) for k, v in table.items()), error))


def _pyproject_pins(path, kernel: str, messages: list[str]) -> dict[str, Pin]:
    if path is None:
        return {}
    from tritonlens.profiling.launch_records import project_root, relative_file

    root = project_root(path)
    table, error = _pins_table(root)
    if error:
        messages.append(f"pyproject.toml pins ignored: {error}"[:160])
    out: dict[str, Pin] = {}
    rel = relative_file(root, os.path.abspath(str(path)))
    for key in (kernel, f"{rel}::{kernel}"):  # the file's own table wins
        entry = table.get(key)
        if entry is None:
            continue
        where = f'pyproject.toml [tool.tritonlens.pins."{key}"]'
        if not isinstance(entry, dict):
            messages.append(f"{where} ignored: not a table of NAME = VALUE")
            continue
        for name, raw in entry.items():
            try:
                value = parse_value(raw) if isinstance(raw, str) else raw
                if not isinstance(value, (bool, int, float, str, DType)):
                    raise PinError("not a number, true/false, a dtype or a string")
            except PinError as exc:
                messages.append(f"pin `{name}` in pyproject.toml ignored: {exc}")
                continue
            out[name] = Pin(name, value, "in pyproject.toml")
    return out


def _check(pins: dict[str, Pin], kernel, messages: list[str]) -> dict[str, Pin]:
    names = {p.name for p in kernel.params}
    out = {}
    for name, pin in pins.items():
        v = pin.value
        if name not in names and name not in OPTIONS:
            messages.append(f"pin {pin.text()} ignored: {kernel.name} has no parameter {name}")
        elif name in OPTIONS and not (isinstance(v, int) and not isinstance(v, bool) and v > 0 and v & (v - 1) == 0
                                      or name == "num_stages" and isinstance(v, int) and v > 0):
            messages.append(f"pin {pin.text()} ignored: {name} must be a positive int"
                            + (" and a power of two" if name == "num_warps" else ""))
        else:
            out[name] = pin
    return out


def kernel_pins(module, kernel, path=None) -> KernelPins:
    """The pins of `kernel` (the analysis' Kernel) in `module`'s text and the project's pyproject.toml."""
    # A kernel of this file is read in the module's current text: the analysis keeps the model of
    # a kernel whose own text did not change, with the older text it was built from as its `src`,
    # and an edited pin above it would otherwise read as it was.
    src = module.src if kernel.src is None or any(k is kernel for k in module.kernels) else kernel.src
    lines = src.text.splitlines()
    messages: list[str] = []
    pins = _pyproject_pins(path, kernel.name, messages)
    def_line = kernel.node.start_point[0]
    top = kernel.outer.start_point[0] if kernel.outer is not None else def_line
    rows = _comment_lines_above(lines, top) + [i for i in range(top, def_line)
                                                if lines[i].lstrip().startswith("#")]
    pins.update(_comment_pins(lines, rows, messages))
    out = KernelPins(kernel=_check(pins, kernel, messages), messages=messages)
    msrc = module.src
    mlines = msrc.text.splitlines() if msrc is not src else lines
    for launch in kernel.launches:
        first = launch.node.start_point[0]
        rows = _comment_lines_above(mlines, first)
        # A launch written as the right-hand side of a statement: the comment sits above the statement.
        stmt = launch.node
        while stmt.parent is not None and stmt.parent.type not in ("block", "module"):
            stmt = stmt.parent
        if stmt.start_point[0] != first:
            rows = _comment_lines_above(mlines, stmt.start_point[0]) + rows
        at = _comment_pins(mlines, rows, messages)
        if at:
            out.by_launch[launch.line] = _check(at, kernel, messages)
    return out
