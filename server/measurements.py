"""Measurements as a feature: the latest profile and verified rewrites of each kernel (a
kernel_results.KernelResultStore), which lenses, hovers and quick fixes read.

They are keyed by document and kernel and checked against the kernel's source hash when shown,
so they outlive a close and reopen of the file; the session's end drops them.
"""

from __future__ import annotations

from .feature import LanguageFeature
from .kernel_results import KernelResultStore


class Measurements(LanguageFeature):
    name = "measurements"

    def __init__(self, ls):
        super().__init__(ls)
        self.store = KernelResultStore()

    def shutdown(self) -> None:
        self.store = KernelResultStore()
