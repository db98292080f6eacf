"""Compiling a batch of candidates' kernels ahead, in parallel threads: the worker's "precompile"
action over the real protocol. Only a GPU compiles (the bench on the device measures what it
saves); here the interpreter must answer with a typed result that says it compiled nothing, and
leave the session the checks that follow reuse as it was."""

from __future__ import annotations

from rewrite_support import FIXTURES
from tritonlens.profiling.worker.messages import VerifyCandidate
from tritonlens.rewrite.candidate import Candidate
from tritonlens.rewrite.verify import Verifier

VADD = (FIXTURES / "vadd.py").read_text()


def test_precompile_in_the_interpreter_compiles_nothing_and_says_so(tmp_path):
    path = tmp_path / "vadd.py"
    path.write_text(VADD)
    variants = [VADD.replace("BLOCK_SIZE = 64", f"BLOCK_SIZE = {b}") for b in (32, 128)]
    with Verifier(str(path), VADD, timeout=300) as verifier:
        job = verifier.job("precompile", [VerifyCandidate(str(i), s) for i, s in enumerate(variants)], timing=None)
        result = verifier._run(job, fresh=False)
        assert result.mode == "interpreter"
        assert result.candidates == []
        assert (result.precompiled.compiled, result.precompiled.note) == (0, "the interpreter compiles nothing")
        # the host asks only a GPU worker, and only for two sources or more
        assert verifier.precompile(variants, quick=True) is None
        # the same warm worker then checks candidates as before
        [verdict] = verifier.verify([Candidate("config", "BLOCK_SIZE=32", variants[0])], isolate=False)
    assert verdict.evidence["correct"], verdict.reason
