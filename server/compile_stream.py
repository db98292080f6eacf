"""One document's compile, kernel by kernel: which compiles to run, and the answer so far.

A file's kernels are compiled one at a time (the same worker, one `compile_file(kernel=...)`
each), so that the first kernel's facts are shown while the others still compile. The answer
shown meanwhile is this run's kernels plus, for the kernels still waiting, what the previous
compile said of them (marked as before the last edit by their own text hash, as any compile
answer is once its kernel changes).
"""

from __future__ import annotations

from dataclasses import replace

STATIC_SOURCE = "static model"  # compile_file's `source` when only the text gave configurations


def plan(launchable: list[str], has_harness: bool, current: set[str] = frozenset()) -> list[str | None]:
    """The compiles to run, in order: one per kernel, or one for the whole file (None) when the
    file has its own harness, which every compile would otherwise run again.

    Kernels `current` (the shown answer has facts for their text as it is) come last: the
    edited ones, and those with no facts yet, are what the user waits for; the others'
    configurations are in the worker's cache."""
    if has_harness or not launchable:
        return [None]
    return [k for k in launchable if k not in current] + [k for k in launchable if k in current]


def up_to_date(shown, hashes: dict[str, str]) -> set[str]:
    """The kernels whose facts in `shown` (a server Compiled, or None) describe their text now."""
    if shown is None:
        return set()
    return {k.name for k in shown.result.kernels if shown.kernel_hashes.get(k.name) == hashes.get(k.name)}


def merged(reports: list, carried=None, done: set[str] = frozenset()):
    """One CompileReport of this run's `reports` (one per kernel compiled so far), with the
    kernels of `carried` (the previous answer) that this run has not compiled yet."""
    base = reports[0]
    kernels = [k for r in reports for k in r.kernels]
    if carried is not None:
        kernels += [k for k in carried.kernels if k.name not in done]
    # Where the configurations came from, in words: a kernel from the static model says so
    # itself, so the report names the other source whenever any kernel had one.
    source = next((r.source for r in reports if r.source and r.source != STATIC_SOURCE), base.source)
    return replace(base, kernels=kernels, source=source, cached=all(r.cached for r in reports),
                   error=next((r.error for r in reports if r.error is not None), None),
                   capture_errors=_union(r.capture_errors for r in reports),
                   module_failures=_union(r.module_failures for r in reports))


def hashes_shown(current: dict[str, str], carried_hashes: dict[str, str], done: set[str]) -> dict[str, str]:
    """Each kernel's text hash as the shown answer describes it: this run's for the kernels it
    compiled, the previous compile's for those it carries (their facts describe that text)."""
    out = dict(current)
    out.update({name: h for name, h in carried_hashes.items() if name not in done})
    return out


def _union(lists) -> list:
    return list(dict.fromkeys(x for xs in lists for x in xs))
