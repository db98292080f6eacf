"""Error findings put to Triton's own front end: a real worker process lowers real kernels to TTIR
from their standalone modules (the fixture files are never imported)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.findings import Finding, Range, Severity
from tritonlens.analysis.source import Source
from tritonlens.analysis.standalone import build_standalones
from tritonlens.profiling import confirm_errors as ce

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "fixtures"
REFUSED = FIXTURES / "confirm_refused.py"
ACCEPTED = FIXTURES / "confirm_accepted.py"
UNDECIDED = FIXTURES / "confirm_undecided.py"


def analyzed(path: Path):
    text = path.read_text()
    return Analyzer().analyze(text, path=str(path))


def errors(findings) -> list[Finding]:
    return [f for f in findings if f.severity is Severity.ERROR]


def test_standalone_keeps_lines_and_leaves_out_the_rest():
    text = UNDECIDED.read_text()
    s = build_standalones(Source(text))["calls_plain_kernel"]
    lines, original = s.text.split("\n"), text.split("\n")
    assert len(lines) == len(original) + 1  # one line per line of the file (and a final newline)
    row = original.index("def calls_plain_kernel(x_ptr, BLOCK: tl.constexpr):")
    assert lines[row] == original[row]
    assert lines[row - 1] == ""  # the decorator: the worker wraps the function itself
    assert "def halve" not in s.text and "launch" not in s.text
    assert "import triton.language as tl" in s.text
    assert s.functions == ("calls_plain_kernel",) and "halve" in s.absent


def test_real_refusals_are_confirmed():
    result = analyzed(REFUSED)
    found = errors(result.findings)
    assert "TL016" in {f.code for f in found}, result.findings
    shown, judged = ce.confirm(result.findings, result.module, str(REFUSED))
    for f in found:  # the removed keyword (a TL021 today) and the runtime shape (TL016)
        j = judged[ce.key_of(f)]
        assert j.verdict is ce.Verdict.CONFIRMED, (f.code, j)
        assert j.reason.startswith("Triton ")
    assert [(f.code, f.range) for f in errors(shown)] == [(f.code, f.range) for f in found]
    assert all("confirmed" in f.data for f in errors(shown))
    keyword = next(i for i, ln in enumerate(REFUSED.read_text().splitlines()) if "boundary_check" in ln)
    assert any("boundary_check" in judged[ce.key_of(f)].reason for f in found if f.range.start.line == keyword)


def test_a_static_error_the_compiler_accepts_is_dropped():
    result = analyzed(ACCEPTED)
    shape = [f for f in errors(result.findings) if f.code == "TL016"]
    # A made-up error on a line that lowers fine: refuted like any false claim.
    store = next(i for i, ln in enumerate(ACCEPTED.read_text().splitlines()) if "tl.store" in ln)
    fake = Finding("TL018", Severity.ERROR, "made up", Range.of(store, 4, store, 20), kernel="single_row_kernel")
    shown, judged = ce.confirm([*result.findings, fake], result.module, str(ACCEPTED))
    assert judged[ce.key_of(fake)].verdict is ce.Verdict.REFUTED
    assert fake not in shown
    # The launch passes n=1, which the JIT makes a constant: the front end accepts tl.zeros((n,)).
    for f in shape:
        assert judged[ce.key_of(f)].verdict is ce.Verdict.REFUTED, judged[ce.key_of(f)]
    assert not errors(shown)


def test_a_kernel_the_standalone_module_cannot_hold_stays_unconfirmed():
    result = analyzed(UNDECIDED)
    plain = [f for f in errors(result.findings) if f.code == "TL019"]
    assert plain, result.findings
    shown, judged = ce.confirm(result.findings, result.module, str(UNDECIDED))
    j = judged[ce.key_of(plain[0])]
    assert j.verdict is ce.Verdict.INCONCLUSIVE and "halve" in j.reason
    again = next(f for f in shown if f.code == "TL019")
    assert again.severity is Severity.WARNING and again.message == plain[0].message
    assert again.data["unconfirmed"] == j.reason


def test_answers_are_cached_per_kernel(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITONLENS_COMPILE_CACHE", str(tmp_path))
    result = analyzed(REFUSED)
    request = ce.prepare(result.findings, result.module, str(REFUSED))
    jobs, hits = ce.STATS["jobs"], ce.STATS["cache_hits"]
    ce.lower(request)
    assert ce.STATS["jobs"] == jobs + 1
    _, again = ce.lower(request)
    assert ce.STATS["jobs"] == jobs + 1 and ce.STATS["cache_hits"] == hits + len(request.kernels)
    moved = dataclasses.replace(request, kernels={k: dataclasses.replace(v, text="\n" + v.text)
                                                  for k, v in request.kernels.items()})
    ce.lower(moved)  # another text: asked again
    assert ce.STATS["jobs"] == jobs + 2
    assert {k: [o.status for o in r.configs] for k, r in again.items()} == \
        {k: ["refused"] for k in request.kernels}


def test_no_triton_means_unconfirmed(monkeypatch):
    result = analyzed(REFUSED)
    monkeypatch.setattr("tritonlens.profiling.compile_worker.triton_version", lambda python=None: "none")
    shown, judged = ce.confirm(result.findings, result.module, str(REFUSED))
    assert judged and all(j.verdict is ce.Verdict.INCONCLUSIVE for j in judged.values())
    assert not errors(shown)
    assert all("Triton is not installed" in f.data["unconfirmed"] for f in shown if "unconfirmed" in f.data)


def test_an_accepted_lowering_does_not_refute_a_dtype_claim():
    from tritonlens.profiling.worker.frontend_report import (
        FrontendKernel,
        FrontendKernelResult,
        FrontendOutcome,
    )

    ask = ce.Ask(("TL004",), "TL004", "k", range(5, 6), None, frozenset(), frozenset())
    request = ce.Request("k.py", kernels={"k": FrontendKernel(name="k", functions=["k"])}, asks=[ask])
    lowered = {"k": FrontendKernelResult(name="k", configs=[FrontendOutcome(label="c", status="accepted", visited=[5])])}
    assert ce.judge(request, lowered, "3.9.0")[("TL004",)].verdict is ce.Verdict.INCONCLUSIVE
    request.asks = [dataclasses.replace(ask, key=("TL018",), code="TL018")]
    assert ce.judge(request, lowered, "3.9.0")[("TL018",)].verdict is ce.Verdict.REFUTED


def _check(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tritonlens", "check", *args], capture_output=True, text=True,
                          timeout=300, check=False)


def test_check_confirms_by_default_and_says_what_it_demoted():
    r = _check("--format", "json", str(REFUSED), str(ACCEPTED), str(UNDECIDED))
    assert r.returncode == 1, r.stderr
    items = json.loads(r.stdout)
    by = {(Path(i["path"]).name, i["code"]): i for i in items}
    assert by[("confirm_refused.py", "TL021")]["severity"] == "error"
    assert by[("confirm_refused.py", "TL016")]["severity"] == "error"
    assert ("confirm_accepted.py", "TL016") not in by  # refuted: not shown
    assert by[("confirm_undecided.py", "TL019")]["severity"] == "warning"
    assert "halve" in by[("confirm_undecided.py", "TL019")]["unconfirmed"]
    assert "refuted 1" in r.stderr and "could not decide 1" in r.stderr


def test_check_without_demotions_prints_nothing_extra():
    r = _check(str(REFUSED))
    assert r.returncode == 1 and "front end" not in r.stderr
    assert " TL021 error " in r.stdout


def test_no_confirm_prints_errors_as_unconfirmed_warnings():
    r = _check("--no-confirm", str(REFUSED))
    assert r.returncode == 1
    assert " TL021 warning (unconfirmed) " in r.stdout and " error " not in r.stdout
