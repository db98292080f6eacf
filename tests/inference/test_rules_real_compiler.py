"""TL017-TL019 against the installed Triton compiler: every finding on a positive fixture names a
configuration that really fails to compile, the configurations it does not name compile, and the
negative fixtures compile in every configuration whose constexprs are known."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.values import UNKNOWN

from .realcompiler import compile_kernel, load_module

pytest.importorskip("triton")
FIXTURES = Path(__file__).parents[1] / "fixtures" / "rules"
ACCEPTED_ERRORS = {"CompilationError", "UnsupportedLanguageConstruct"}


def _compiler_refusal(exc: BaseException) -> bool:
    if type(exc).__name__ in ACCEPTED_ERRORS:
        return True
    # JIT → plain Python call: the code generator's RuntimeError
    return isinstance(exc, RuntimeError) and "Unsupported function referenced" in str(exc)


CODES = ["TL016", "TL017", "TL018", "TL019"]


@pytest.fixture(autouse=True, scope="module")
def _private_triton_cache(tmp_path_factory):
    old = os.environ.get("TRITON_CACHE_DIR")
    os.environ["TRITON_CACHE_DIR"] = str(tmp_path_factory.mktemp("triton-cache"))
    yield
    if old is None:
        os.environ.pop("TRITON_CACHE_DIR", None)
    else:
        os.environ["TRITON_CACHE_DIR"] = old


def _fixtures(prefix: str):
    for code in CODES:
        for f in sorted((FIXTURES / code).glob(f"{prefix}_*.py")):
            yield pytest.param(code, f, id=f"{code}/{f.name}")


def _known_configs(kernel):
    """Constexpr values of each configuration of a launched kernel (helpers are not compiled alone)."""
    out = []
    if not kernel.launches:
        return out
    for c in kernel.configs:
        vals = {p.name: c.get(p.name) for p in kernel.params if p.is_constexpr}
        if all(v is not UNKNOWN for v in vals.values()) and vals not in out:
            out.append(vals)
    return out


@pytest.mark.parametrize("code,path", list(_fixtures("positive")))
def test_positive_fixture_is_refused_by_the_compiler(code, path):
    result = Analyzer().analyze(path.read_text(), path=str(path), select=[code])
    findings = [f for f in result.findings if f.code == code]
    assert findings
    try:
        mod = load_module(path)
    except TypeError as exc:  # refused by @triton.jit itself, at import (`**kwargs` parameters)
        assert "do not support" in str(exc) and all(f.data.get("construct") == "**kwargs" for f in findings)
        return
    flagged = set()
    kernels = {k.name: k for k in result.module.kernels}
    for f in findings:
        known = _known_configs(kernels[f.kernel])
        constexprs = f.data.get("constexprs", known[0] if known else {})
        flagged.add((f.kernel, tuple(sorted(constexprs.items()))))
        with pytest.raises(Exception) as info:
            compile_kernel(mod, f.kernel, constexprs)
        # The compiler's own refusal, not a harness mistake: code generation errors, or for a
        # plain-function call / variadic kernel the runtime's "unsupported" errors.
        assert _compiler_refusal(info.value), repr(info.value)
    # The configurations the rule did not name compile: the rule is as precise as the compiler.
    for k in result.module.kernels:
        for vals in _known_configs(k):
            if (k.name, tuple(sorted(vals.items()))) not in flagged:
                compile_kernel(mod, k.name, vals)


@pytest.mark.parametrize("code,path", list(_fixtures("negative")))
def test_negative_fixture_compiles(code, path):
    result = Analyzer().analyze(path.read_text(), path=str(path), select=[code])
    assert not [f for f in result.findings if f.code == code]
    mod = load_module(path)
    compiled = 0
    for k in result.module.kernels:
        for vals in _known_configs(k):
            compile_kernel(mod, k.name, vals)
            compiled += 1
    assert compiled, "a negative fixture should have at least one configuration the compiler can check"
