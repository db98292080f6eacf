"""The figures of the best rewrite so far, for the next round's prompt.

Time and speedup come from the verifier's verdict. Registers and spills come from a cross-compile
(no GPU needed), bound class and % of roofline from a profile on the GPU. Both run the rewrite's
file in worker processes, never here; the rewrite is written to a file of its own (beside the
optimize's transcript) so that its harness, not the original's, gives the launch configurations.
"""

from __future__ import annotations

import threading
from pathlib import Path

from .candidate import Verdict
from .llm_prompts import figures_of


class BestFigures:
    """figures(verdict) -> lines about the rewrite `verdict` accepted."""

    def __init__(self, copy_path: Path, kernel: str | None = None, gpu: bool = False, backend: str = "local",
                 python: str | None = None, target: str = "sm_90", cancel: threading.Event | None = None,
                 timeout: float = 300):
        self.copy_path = Path(copy_path)
        self.kernel = kernel
        self.gpu = gpu
        self.backend = backend
        self.python = python
        self.target = target
        self.cancel = cancel
        self.timeout = timeout

    def __call__(self, verdict: Verdict) -> list[str]:
        lines = figures_of(verdict)
        self.copy_path.parent.mkdir(parents=True, exist_ok=True)
        self.copy_path.write_text(verdict.candidate.source, encoding="utf-8")
        if self.gpu:
            lines += self._profiled()
        lines += self._compiled()
        return lines

    def _profiled(self) -> list[str]:
        from tritonlens.profiling import api as profiling_api

        try:
            report = profiling_api.profile_file(str(self.copy_path), kernel=self.kernel, backend=self.backend,
                                                python=self.python, timeout=self.timeout, cancel=self.cancel)
        except Exception as exc:  # noqa: BLE001 - the figures only enrich the prompt
            return [f"profile unavailable: {type(exc).__name__}: {str(exc)[:200]}"]
        out = []
        for k in report.kernels:
            launch = next((x for x in k.launches if x.time_ms is not None), None)
            if launch is None:
                continue
            parts = [f"{launch.time_ms:.4g} ms"]
            if launch.pct_of_peak is not None:
                parts.append(f"{launch.pct_of_peak:.0f}% of roofline")
            if launch.bound:
                parts.append(f"{launch.bound}-bound")
            if launch.gbps is not None:
                parts.append(f"{launch.gbps:.0f} GB/s")
            if launch.tflops is not None:
                parts.append(f"{launch.tflops:.3g} TFLOP/s")
            out.append(f"profile of {k.name}, largest launch: " + ", ".join(parts))
        return out or ["profile: no timed launch"]

    def _compiled(self) -> list[str]:
        from tritonlens.profiling.compile_job import compile_file

        try:
            report = compile_file(str(self.copy_path), kernel=self.kernel, target=self.target, python=self.python,
                                  cancel=self.cancel, max_cases=1, timeout=self.timeout)
        except Exception as exc:  # noqa: BLE001 - the figures only enrich the prompt
            return [f"compile facts unavailable: {type(exc).__name__}: {str(exc)[:200]}"]
        out = []
        for k in report.kernels:
            facts = next((c for c in k.configs if c.compiled), None)
            if facts is None:
                continue
            config = ", ".join(f"{n}={v}" for n, v in (facts.constexprs or {}).items())
            line = (f"compiled {k.name} ({config}{', ' if config else ''}num_warps={facts.num_warps}) for "
                    f"{report.target}: {facts.registers} registers per thread, {facts.spill_bytes or 0} bytes spilled")
            if facts.shared_bytes:
                line += f", {facts.shared_bytes} bytes of shared memory"
            if facts.occupancy is not None:
                line += f", occupancy {facts.occupancy:.0f}%" + (f" (limited by {facts.limiter})" if facts.limiter else "")
            out.append(line)
        return out or ["compile facts: nothing compiled"]
