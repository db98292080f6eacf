"""Measurements as a feature: the latest profile and verified rewrites of each kernel (a
kernel_results.KernelResultStore), which lenses, hovers and quick fixes read.

They are keyed by document and kernel and checked against the kernel's source hash when shown,
so they outlive a close and reopen of the file; the session's end drops them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .feature import LanguageFeature
from .kernel_results import KernelResultStore, Measurement

if TYPE_CHECKING:
    from tritonlens.profiling.worker.compile_report import ConfigFacts
    from tritonlens.profiling.worker.messages import LaunchProfile

    from .compile_facts import CompileFacts


class Measurements(LanguageFeature):
    name = "measurements"

    def __init__(self, ls):
        super().__init__(ls)
        self.store = KernelResultStore()

    def shutdown(self) -> None:
        self.store = KernelResultStore()


@dataclass(frozen=True)
class CompiledColumns:
    """The compiled configuration of each launch of a measurement (None where the run gave its own
    figures or no compiled configuration is the launch's): what fills a run's empty resource columns."""

    target: str
    configs: list  # ConfigFacts | None, one per launch of the measurement


def compiled_columns(facts: CompileFacts, m: Measurement) -> CompiledColumns | None:
    """From the document's latest compile, when it compiled the same source of the kernel."""
    latest = facts.compiled
    if latest is None or latest.kernel_hashes.get(m.kernel) != m.kernel_hash:
        return None
    entry = latest.kernel_entry(m.kernel)
    if entry is None:
        return None
    compiled = [c for c in entry.configs if c.compiled]
    found = [None if launch.registers is not None else same_configuration(compiled, launch)
             for launch in m.entry.launches]
    return CompiledColumns(latest.target, found) if any(c is not None for c in found) else None


def same_configuration(configs: list[ConfigFacts], launch: LaunchProfile) -> ConfigFacts | None:
    """The compiled configuration with the launch's constexpr values, num_warps and num_stages; None
    when none is, or when several are and their resources differ (which one ran is unknown)."""
    def agrees(a, b) -> bool:
        return a is None or b is None or a == b or str(a) == str(b)

    given = launch.constexprs or {}
    matches = [c for c in configs
               if agrees(c.num_warps, launch.num_warps) and agrees(c.num_stages, launch.num_stages)
               and all(agrees(c.constexprs.get(k), v) for k, v in given.items())]
    resources = {(c.registers, c.spill_bytes, c.shared_bytes, c.occupancy) for c in matches}
    return matches[0] if len(resources) == 1 else None
