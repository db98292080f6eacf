"""A configuration built from ASSUMED values that does not compile for a value-dependent reason
(modulo by zero, a tile over Triton's element limit, a reshape that changes the element count, a
static assertion, num_warps not a power of 2, ...) is compiled again with the next representative
values the static model offers for its assumed names (CONFIG "retry": {name: [next values]}).

The names on the line the error points at move first (`tl.reshape(q, (TN, R * TK))` moves TN, R
and TK together), one step of their alternatives per attempt; then every assumed name takes its
first alternative. Bounded: MAX_RETRIES attempts per configuration, RETRY_BUDGET_S seconds per
kernel, and none once one of the kernel's configurations compiled (it has its facts). A
configuration without "retry" (a user's pin, a captured launch) is never retried: its error is real.

Standalone (stdlib only): shipped as a plain file beside job_compile.py.
"""

from __future__ import annotations

import ast
import operator
import re
import time

try:
    from compile_diagnostics import diagnosed
except ImportError:  # imported as part of the tritonlens package
    from .compile_diagnostics import diagnosed

MAX_RETRIES = 3
RETRY_BUDGET_S = 20.0  # per kernel
# Errors that another value of the same names can cure; a type error or a missing name cannot.
_VALUE_DEPENDENT = re.compile(
    r"modulo by zero|division by zero|divide by zero|exceeds triton maximum tensor numel|"
    r"cannot change total number of elements|must be a power of 2|must be a power of two|"
    r"arange's (?:range|end)|static[ _]assert|assertion|Input shapes should have|out of resource|incompatible dimensions|"
    r"shape mismatch|must be >= 16|must be at least 16|nonrepresentable integer", re.IGNORECASE)
# ... but Triton's own type checks are AssertionErrors too, and no value cures them.
_TYPE_ERRORS = re.compile(r"Mismatched type|Loop-carried variable|type mismatch", re.IGNORECASE)
_IDENT = re.compile(r"[A-Za-z_]\w*")
# A constexpr the kernel derives from others (BLOCK: tl.constexpr = ROWS * K_POW2): a failure on it is theirs.
_DERIVED = re.compile(r"^\s*([A-Za-z_]\w*)\s*:\s*(?:tl\.)?constexpr\s*=\s*(.+)$", re.MULTILINE)


def value_dependent(error: dict | None) -> bool:
    """Whether a compile error (map_error's dict) may go away with other values of the same names."""
    if not error:
        return False
    said = f"{error.get('type', '')}: {error.get('message', '')}"
    return bool(_VALUE_DEPENDENT.search(said)) and not _TYPE_ERRORS.search(said)


def implicated(error: dict, text: str, names) -> list[str]:
    """The assumed `names` the error's line (1-based, in `text`) mentions; num_warps for its own errors."""
    message = str(error.get("message", ""))
    if "num_warps" in message and "num_warps" in names:
        return ["num_warps"]
    line = error.get("line")
    said = set(_IDENT.findall(_statement_text(text, line)))
    said |= set(_IDENT.findall(_failed_assertion(message) or ""))
    return [n for n in names if n in _through_derived(said, _kernel_text(text, line))]


def _kernel_text(text: str, line) -> str:
    """The top-level definition around 1-based `line` (the whole text when unknown): another kernel of
    the file may derive a constexpr of the same name differently."""
    lines = text.splitlines()
    if not isinstance(line, int) or not 0 < line <= len(lines):
        return text
    top = re.compile(r"^(?:@|def |async def |class )")
    start = next((i for i in range(line - 1, -1, -1) if lines[i].startswith(("def ", "async def "))), 0)
    end = next((i for i in range(line, len(lines)) if top.match(lines[i])), len(lines))
    return "\n".join(lines[start:end])


def _failed_assertion(message: str) -> str | None:
    """The line of a static assertion Triton raised without a message: it says the kernel's source
    up to that line, a caret under it."""
    quoted = [ln.strip() for ln in message.splitlines() if ln.strip() and ln.strip() != "^"]
    return quoted[-1] if quoted and quoted[-1].startswith(("tl.static_assert(", "static_assert(")) else None


def refuted(error: dict, text: str, cfg: dict, change: dict) -> bool:
    """Whether `change` is known to fail the static assertion `error` names, its condition worked out
    in Python from the configuration's constexprs and the kernel's derived ones. A condition that
    cannot be worked out (it calls a function, names a runtime value) refutes nothing."""
    line = _failed_assertion(str(error.get("message", "")))
    try:
        condition = ast.parse(line).body[0].value.args[0] if line else None
    except (SyntaxError, AttributeError, IndexError):
        return False
    if condition is None:
        return False
    values = {n: a.get("value") for n, a in cfg["args"].items() if isinstance(a, dict) and a.get("kind") == "constexpr"}
    values.update(change)
    for m in _DERIVED.finditer(_kernel_text(text, error.get("line"))):  # in order: one may use an earlier one
        try:
            values[m.group(1)] = _arithmetic(ast.parse(m.group(2).split("#")[0].strip(), mode="eval").body, values)
        except (SyntaxError, ValueError, ArithmeticError, TypeError):
            values.pop(m.group(1), None)
    try:
        return _arithmetic(condition, values) is False
    except (ValueError, ArithmeticError, TypeError):
        return False


_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
              ast.Mod: operator.mod, ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
              ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
              ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.BitAnd: operator.and_, ast.BitOr: operator.or_}


def _arithmetic(node: ast.AST, values: dict):
    """`node` (names, numbers, arithmetic, comparisons, and/or/not) worked out; ValueError for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool)):
        return node.value
    if isinstance(node, ast.Name) and isinstance(values.get(node.id), (int, float, bool)):
        return values[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_arithmetic(node.left, values), _arithmetic(node.right, values))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
        value = _arithmetic(node.operand, values)
        return (not value) if isinstance(node.op, ast.Not) else -value
    if isinstance(node, ast.BoolOp):
        parts = [_arithmetic(v, values) for v in node.values]
        return all(parts) if isinstance(node.op, ast.And) else any(parts)
    if isinstance(node, ast.Compare) and all(type(op) in _OPERATORS for op in node.ops):
        left, holds = _arithmetic(node.left, values), True
        for op, right_node in zip(node.ops, node.comparators):
            right = _arithmetic(right_node, values)
            holds, left = holds and _OPERATORS[type(op)](left, right), right
        return holds
    raise ValueError(f"not worked out here: {ast.dump(node)[:40]}")


def _statement_text(text: str, line) -> str:
    """The statement that starts at 1-based `line`, all its lines: Triton points at a call's first
    line, and a wrapped call names its values on the lines after (`tl.reshape(\n q, (TN, R * TK))`)."""
    lines = text.splitlines()
    if not isinstance(line, int) or not 0 < line <= len(lines):
        return ""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return lines[line - 1]
    ends = [n.end_lineno for n in ast.walk(tree) if isinstance(n, ast.stmt) and n.lineno == line
            and not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.While,
                                   ast.With, ast.Try))]
    return "\n".join(lines[line - 1:min(ends, default=line)])


def _through_derived(said: set[str], text: str) -> set[str]:
    """`said` with the names each derived constexpr among them is computed from, transitively."""
    derived = {m.group(1): set(_IDENT.findall(m.group(2))) for m in _DERIVED.finditer(text)}
    out, todo = set(said), list(said)
    while todo:
        for name in derived.get(todo.pop(), ()):
            if name not in out:
                out.add(name)
                todo.append(name)
    return out


def attempts(retry: dict[str, list], first: list[str], doomed=lambda change: False) -> list[dict]:
    """The value changes to try in order: the `first` names one step at a time, then every name's
    first alternative; each {name: value}, none repeated and none `doomed`, at most MAX_RETRIES."""
    out: list[dict] = []
    for step in range(max((len(retry[n]) for n in first), default=0)):
        change = {n: retry[n][step] for n in first if step < len(retry[n])}
        if change and change not in out:
            out.append(change)
    every = {n: alts[0] for n, alts in retry.items() if alts}
    if every and every not in out:
        out.append(every)
    return [change for change in out if not doomed(change)][:MAX_RETRIES]


def changed(cfg: dict, change: dict) -> dict:
    """`cfg` with the values of `change` (constexpr arguments or options)."""
    args, options = dict(cfg["args"]), dict(cfg["options"])
    for name, value in change.items():
        if name in ("num_warps", "num_stages"):
            options[name] = value
        else:
            args[name] = {"kind": "constexpr", "value": value}
    return {**cfg, "args": args, "options": options}


class KernelRetries:
    """One kernel's retry budget: seconds left, and whether a configuration of it compiled."""

    def __init__(self, seconds: float = RETRY_BUDGET_S):
        self.deadline = time.monotonic() + seconds
        self.compiled = False

    def allows(self) -> bool:
        return not self.compiled and time.monotonic() < self.deadline


def compile_with_retries(compile_one, cfg: dict, text: str, budget: KernelRetries) -> dict:
    """`compile_one(cfg)`'s result; when it is a value-dependent error and `cfg` has assumed values
    to retry, the first retry that compiles, its label naming what changed and why."""
    compile_one = diagnosed(compile_one)
    result = compile_one(cfg)
    error = result.get("error")
    budget.compiled |= not error
    retry = {n: list(v) for n, v in (cfg.get("retry") or {}).items() if v}
    if not retry or not value_dependent(error) or not budget.allows():
        return result
    first = implicated(error, text, list(retry)) or list(retry)
    # A change that still fails the assertion would only cost a compile (a 16384-element sort: minutes).
    for change in attempts(retry, first, lambda change: refuted(error, text, cfg, change)):
        if not budget.allows():
            break
        values = ", ".join(f"{n}={_show(v)}" for n, v in change.items())
        was = ", ".join(f"{n}={_show(_value(cfg, n))}" for n in change)
        label = f"{cfg['label']}, retried with {values} ({was} did not compile: {str(error.get('message'))[:80]})"
        again = compile_one({**changed(cfg, change), "label": label})
        if not again.get("error"):
            budget.compiled = True
            return again
    return result


def _value(cfg: dict, name: str):
    if name in ("num_warps", "num_stages"):
        return cfg["options"].get(name)
    arg = cfg["args"].get(name)
    return arg.get("value") if isinstance(arg, dict) else arg


def _show(v) -> str:
    return repr(v) if isinstance(v, str) else str(v)
