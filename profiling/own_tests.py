"""Which of the tests that reach a kernel file capture runs: the op's own tests.

A test is the op's own when its name names the kernel file (`test_rms_norm.py` for `rms_norm.py`;
or `test_rms_norm_fastpath.py` where no module is named `rms_norm_fastpath`; failing any, a name
that holds it or is held by it word for word: `test_ssd.py` for `ssd_combined.py`) and it reaches the file by imports, wrappers or dispatch, not only by loading an
umbrella module. When the op has own tests they are the pick, the most direct first; otherwise the
few tests that reach it most directly and in the fewest steps are (a model's test, many wrappers
away, after a module's). A test that only loads the file, through an umbrella import, runs none of
its kernels and is never picked.

A test in a folder for another backend is passed over unless the kernel file sits in a folder for
that same backend: the vendor folders `check` skips (analysis/file_walk.other_backend), and the
project's folders of kernels in another language: a folder whose files define kernels with a
decorator not from Triton (`@cute.kernel`, `@ct.kernel`) and import no Triton, or a folder beside
Triton kernel files (a child of the folder holding them) that imports no Triton at all. Its tests
run that backend's kernels; the Triton file is at most their reference.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from pathlib import PurePosixPath

from tritonlens.analysis.file_walk import other_backend
from tritonlens.profiling.kernel_reach import (
    ROUTE_DISPATCH, ROUTE_REEXPORT, ROUTE_SELF, ROUTE_UMBRELLA, ROUTE_WORDS, TestRoute,
)

NAME_EXACT, NAME_PART, NAME_NONE = range(3)
MAX_OWN = 6
MAX_OTHERS = 3
_GENERIC_STEMS = {"__init__", "kernel", "kernels", "triton", "impl", "ops", "core", "main"}


@dataclass(frozen=True)
class TestPick:
    """One test file that reaches the kernel file: picked or passed over, and why."""

    path: str  # relative to the project root, forward slashes
    route: int  # a kernel_reach ROUTE_*
    steps: int
    naming: int  # NAME_EXACT, NAME_PART or NAME_NONE
    picked: bool
    reason: str


def holds_triton_kernel(text: str) -> bool:
    """Whether a file's text defines a Triton kernel (`@triton.jit`, `@jit` from triton)."""
    return "triton.jit" in text or "@jit" in text


def _words(stem: str) -> list[str]:
    return [w for w in stem.lower().split("_") if w]


def _naming(test: str, kernel: str, modules: frozenset[str]) -> int:
    stem = PurePosixPath(test).stem
    stem = stem[len("test_"):] if stem.startswith("test_") else stem[: -len("_test")] if stem.endswith("_test") else stem
    k = PurePosixPath(kernel)
    names = [k.stem] + ([k.parent.name] if k.stem in _GENERIC_STEMS and k.parent.name else [])
    for n in (n.lower().lstrip("_") for n in names):
        # `test_rms_norm_fastpath` is rms_norm's, unless the project has a module of that name
        if stem.lower() == n or (stem.lower().startswith(n + "_") and stem.lower() not in modules):
            return NAME_EXACT
    t = _words(stem)
    for n in names:
        w = _words(n)
        if t and w and (_contains(t, w) or _contains(w, t)):
            return NAME_PART
    return NAME_NONE


def _contains(longer: list[str], shorter: list[str]) -> bool:
    n = len(shorter)
    return any(longer[i:i + n] == shorter for i in range(len(longer) - n + 1))


def _backend(part: str, foreign: frozenset[str]) -> str | None:
    name = part.lstrip("_").lower()
    return other_backend(part) or (name if name in foreign else None)


def foreign_folders(sources: list[str], tests: list[str], root: str, imports_triton, text_of) -> frozenset[str]:
    """Names (lower case, leading underscores dropped) of the project's folders of kernels for
    another language or library; `imports_triton(file)` and `text_of(file)` read one source file.
    Folders of tests are none: their names are what is matched against."""
    test_dirs = {d for t in tests for d in _parents(t, root)}
    under: dict[str, list[str]] = {}
    for f in sources:
        if os.path.dirname(f) in test_dirs:
            continue
        for d in _parents(f, root):
            if d not in test_dirs:
                under.setdefault(d, []).append(f)
    kernel_dirs = {os.path.dirname(f) for f in sources if holds_triton_kernel(text_of(f))}
    foreign, native = set(), set()
    for d, files in under.items():
        name = os.path.basename(d).lstrip("_").lower()
        if not any(imports_triton(f) for f in files) and (
                os.path.dirname(d) in kernel_dirs or any(_foreign_decorator(text_of(f)) for f in files)):
            foreign.add(name)
        else:
            native.add(name)
    return frozenset(foreign - native)  # a name some Triton folder also bears stands for no backend


def _parents(f: str, root: str):
    d = os.path.dirname(f)
    while d.startswith(root) and d != root:
        yield d
        d = os.path.dirname(d)


def _foreign_decorator(text: str) -> bool:
    if ".kernel" not in text and ".jit" not in text:
        return False
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                dec = dec.func if isinstance(dec, ast.Call) else dec
                if isinstance(dec, ast.Attribute) and dec.attr in ("kernel", "jit"):
                    return True
    return False


def select(routes: list[TestRoute], kernel: str, has_kernel: bool, foreign: frozenset[str],
           modules: frozenset[str] = frozenset()) -> list[TestPick]:
    """Rank the routes of the tests that reach `kernel` (relative path) and pick the op's own tests;
    the picked come first, most direct first. A file without a Triton kernel of its own launches
    nothing: only tests that import it or its re-exports count for it. `modules`: the stems (lower
    case) of the project's source modules."""
    kernel_backends = {b for p in PurePosixPath(kernel).parts[:-1] if (b := _backend(p, foreign))}
    out: list[TestPick] = []
    live: list[tuple[TestRoute, int]] = []
    for r in routes:
        naming = _naming(r.test, kernel, modules)
        how = _how(r)
        backend = next((b for p in PurePosixPath(r.test).parts[:-1] if (b := _backend(p, foreign))), None)
        if r.route == ROUTE_SELF:
            out.append(TestPick(r.test, r.route, r.steps, naming, True, how))
        elif backend is not None and backend not in kernel_backends:
            out.append(TestPick(r.test, r.route, r.steps, naming, False,
                                f"in a folder for another backend ({backend}); {how}"))
        elif not has_kernel and r.route > ROUTE_REEXPORT:
            out.append(TestPick(r.test, r.route, r.steps, naming, False,
                                f"the file defines no Triton kernel, and this test does not import it; {how}"))
        else:
            live.append((r, naming))
    live.sort(key=lambda x: (x[1], x[0].route, x[0].steps, x[0].test))
    for level in (NAME_EXACT, NAME_PART):
        own = [(r, n) for r, n in live if n == level and r.route <= ROUTE_DISPATCH]
        if own:
            words = "its name is the op's" if level == NAME_EXACT else "its name shares the op's words"
            picked = own[:MAX_OWN]
            out += [TestPick(r.test, r.route, r.steps, n, True, f"own test: {words}; {_how(r)}") for r, n in picked]
            rest = [(r, n) for r, n in live if (r, n) not in picked]
            out += [TestPick(r.test, r.route, r.steps, n, False, f"{_passed(r, 'the op has own tests')}; {_how(r)}")
                    for r, n in rest]
            return _ordered(out)
    live.sort(key=lambda x: (x[0].route, x[0].steps, x[1], x[0].test))
    best = (live[0][0].route, live[0][0].steps) if live else None
    for i, (r, n) in enumerate(live):
        if r.route != ROUTE_UMBRELLA and (r.route, r.steps) == best and i < MAX_OTHERS:
            out.append(TestPick(r.test, r.route, r.steps, n, True, f"no own test; the most direct: {_how(r)}"))
        else:
            out.append(TestPick(r.test, r.route, r.steps, n, False,
                                f"{_passed(r, 'a more direct test was picked')}; {_how(r)}"))
    return _ordered(out)


def _passed(r: TestRoute, why: str) -> str:
    return "loading a module runs none of its kernels" if r.route == ROUTE_UMBRELLA else why


def _ordered(picks: list[TestPick]) -> list[TestPick]:
    return [p for p in picks if p.picked] + [p for p in picks if not p.picked]


def _how(r: TestRoute) -> str:
    via = " -> ".join(r.via)
    return ROUTE_WORDS[r.route] + (f" ({via})" if via and r.route != ROUTE_SELF else "")
