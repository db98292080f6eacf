"""Analyze a document: parse once, model and check only the kernels whose text changed.

A kernel's findings depend on its own text, on the statements that launch it, on the jit helpers it
calls, on the module constants those read and on how the file imports Triton, not on where any of
that sits, and on the asserts and conditions outside the file's jit functions, where the rules read
a size's guards. The kernel's cache key holds that text (no line numbers, no comments, no unrelated
imports), so an edit inside one kernel re-checks that kernel only, and lines inserted above it, a
comment or an import of something else re-check nothing: the cached findings are moved to where
their text now is (`relocate`), and the kernel's model, whose tree-sitter nodes hold absolute
positions, is rebuilt on the current tree, which costs a small part of checking it.

Each definition of a kernel is checked on its own, also a name defined in both branches of a
module-level `if`/`else` (`layout.entries`); they are cached and reported separately.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from . import tlapi
from .findings import Finding
from .layout import LayoutMemo, aliases_key, guards_key, read_layout, regions
from .merge import SEVERITY_ORDER, once_per_file, per_line
from .model import Kernel, Module, build_kernels
from .relocate import lines_named, moved, spans_map
from .rules import RULE_MODULES, KernelContext, is_selected
from .source import Source, new_parser, reparse
from .suppress import is_suppressed, suppressions


@dataclass
class AnalysisResult:
    findings: list[Finding]
    module: Module
    # Entry keys (`layout.entries`: a kernel's name, `name#1` for an earlier definition of it) of
    # the kernels whose rules ran (not served from cache).
    reanalyzed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # internal errors of rules, reported not raised
    remodeled: list[str] = field(default_factory=list)  # kernels served from cache, their model rebuilt where it moved

    @property
    def kernels(self) -> list[Kernel]:
        return self.module.kernels


@dataclass
class _Entry:
    """One kernel's checked result, valid wherever the text of its regions appears again."""

    kernel: Kernel
    findings: list[Finding]
    errors: list[str]
    spans: list[tuple[int, int, int]]  # (start byte, first line, last line) of each region it was built on
    movable: bool  # every line a finding names lies in a region, so the findings can follow them
    # Where it was before its last move: a line typed and deleted again (or an undo) puts it back
    # there, and that placement's model and findings serve again without a rebuild.
    previous: _Entry | None = None

    def lines(self) -> list[int]:
        return [first for _, first, _ in self.spans]

    def alone(self) -> _Entry:
        return dataclasses.replace(self, previous=None)


def _select(select, ignore) -> list[str]:
    """The rules to run: the default set without `select`; `ALL`, ids and prefixes (`TL0`) with it."""
    return [c for c in RULE_MODULES if is_selected(c, select, ignore)]


KERNEL_VERSIONS_KEPT = 3  # cached versions of one kernel of one document


class Analyzer:
    """Thread-safe analyzer with a per-kernel cache (LRU, bounded)."""

    def __init__(self, cache_size: int = 512):
        self._cache: OrderedDict[str, _Entry] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._local = threading.local()
        self._trees: OrderedDict[str, tuple] = OrderedDict()  # doc_id → last (bytes, tree, (settings, result))
        self._layout = LayoutMemo()
        # Cache keys of each (document, kernel), newest last: while a kernel is typed in, every
        # keystroke makes a new entry, each holding the whole file's tree; older versions of a
        # kernel are seldom asked for again (an undo is), so only a few are kept.
        self._versions: dict[tuple, list[str]] = {}

    def forget(self, doc_id: str) -> None:
        with self._lock:
            self._trees.pop(doc_id, None)

    def _parser(self):
        p = getattr(self._local, "parser", None)
        if p is None:
            p = self._local.parser = new_parser()
        return p

    def analyze(self, text: str, path: str | None = None, select=None, ignore=None, doc_id: str | None = None,
                target: str | None = None) -> AnalysisResult:
        """Analyze `text`. With `doc_id` (e.g. a document URI) the previous tree of that document
        is reused for an incremental parse, and the same text under the same settings returns the
        previous findings without any work besides comparing the bytes."""
        codes = _select(select, ignore)
        api = tlapi.active()
        # Everything a finding depends on besides the text: rules, target GPU, Triton API in use.
        settings = f"{','.join(codes)}|{target}|{api.version}|{api.source}"
        tree = None
        data = None
        if doc_id is not None:
            with self._lock:
                prev = self._trees.get(doc_id)
            if prev is not None:
                data = text.encode("utf-8", errors="surrogatepass")
                if prev[0] == data:
                    last = prev[2]
                    if last is not None and last[0] == settings:
                        res = last[1]
                        return AnalysisResult(list(res.findings), res.module, [], list(res.errors))
                    tree = prev[1]  # same bytes: the tree is the same, no parse at all
                else:
                    tree = reparse(self._parser(), prev[0], prev[1], data)[0]
        src = Source(text, tree=tree, parser=self._parser()) if data is None else Source(text, tree=tree, data=data)
        result = self._analyze_source(src, text, codes, target, settings, doc=path or doc_id)
        if doc_id is not None:
            with self._lock:
                self._trees[doc_id] = (src.data, src.tree, (settings, result))
                self._trees.move_to_end(doc_id)
                while len(self._trees) > 64:
                    self._trees.popitem(last=False)
        return result

    def _analyze_source(self, src: Source, text: str, codes: list[str], target: str | None, settings: str,
                        doc: str | None = None) -> AnalysisResult:
        lay = read_layout(src, self._layout)
        data = src.data
        prefix = f"{aliases_key(lay.aliases)}|{settings}|".encode() + hashlib.blake2b(guards_key(src, lay)).digest()
        plan: dict[str, tuple[str, list]] = {}  # entry key → (cache key, its regions' spans)
        for name in lay.entries:
            h = hashlib.blake2b(prefix, digest_size=16)
            kernel_regions, plain_deps = regions(lay, name)
            for tag, node in kernel_regions:
                # The start column stays in the key: a statement sharing its first line with
                # another (`A = 1; B = 2`) may not keep its columns when the other one changes.
                h.update(b"|%s%d:" % (tag, node.start_point[1]))
                h.update(data[node.start_byte:node.end_byte])
            h.update("|def ".join(["", *plain_deps]).encode())
            plan[name] = (h.hexdigest(), [(n.start_byte, n.start_point[0], n.end_point[0]) for _, n in kernel_regions])

        with self._lock:
            hits: dict[str, _Entry] = {}
            for name, (key, _) in plan.items():
                hit = self._cache.get(key)
                if hit is not None:
                    hits[name] = hit
                    self._cache.move_to_end(key)
        check, remodel = [], []
        for name in lay.entries:
            hit = hits.get(name)
            lines = [first for _, first, _ in plan[name][1]]
            if hit is None:
                check.append(name)
            elif hit.lines() != lines:
                # On other lines now: its model's positions are stale. A kernel whose lines did not
                # move keeps its model, whose lines and columns are current; byte offsets in it are
                # those of `kernel.src`, the text it was built from, as for any cached model.
                if hit.previous is not None and hit.previous.lines() == lines:
                    hits[name] = dataclasses.replace(hit.previous, previous=hit.alone())
                    with self._lock:
                        self._cache[plan[name][0]] = hits[name]
                else:
                    (remodel if hit.movable else check).append(name)

        module = Module(src=src, aliases=lay.aliases, kernels=[], functions=lay.functions, constants=lay.constants)
        module._tritonlens_jit_functions = lay.jit
        module.memo["tl019.plain_functions"] = set(lay.plain)
        built = {}
        if check or remodel:
            keys = check + remodel
            built = dict(zip(keys, build_kernels(module, [lay.entries[n] for n in keys], lay.roots)))

        findings: list[Finding] = []
        errors: list[str] = []
        for name in lay.entries:
            key, spans = plan[name]
            entry = hits.get(name)
            if name in built and name not in check:
                entry = self._moved(entry, built[name], spans)
                with self._lock:
                    self._cache[key] = entry
            elif name in built:
                kfind, kerr = self._check(module, built[name], codes, target)
                covered = spans_map([(first, last, 0) for _, first, last in spans])
                movable = all(covered(line) is not None for f in kfind for line in lines_named(f))
                entry = _Entry(built[name], kfind, kerr, spans, movable)
                self._store(doc, name, key, entry)
            if entry is None:
                continue
            module.kernels.append(entry.kernel)
            findings.extend(entry.findings)
            errors.extend(entry.errors)

        table = suppressions(text)
        if table:
            findings = [f for f in findings if not is_suppressed(f, table)]
        # Kernels are checked and cached one by one; a problem reported once per file spans them.
        findings = once_per_file(findings)
        findings.sort(key=lambda f: (f.range.start.line, f.range.start.column, SEVERITY_ORDER[f.severity.value], f.code))
        return AnalysisResult(findings, module, sorted(check), errors, sorted(remodel))

    @staticmethod
    def _moved(entry: _Entry, kernel: Kernel, spans: list) -> _Entry:
        """`entry` for its regions now at `spans`, with `kernel` modeled on the current tree."""
        deltas = [(first, last, now[1] - first) for (_, first, last), now in zip(entry.spans, spans)]
        findings = entry.findings
        if any(d for _, _, d in deltas):
            line = spans_map(deltas)
            findings = [moved(f, line) for f in findings]
        return _Entry(kernel, findings, entry.errors, spans, entry.movable, entry.alone())

    def _store(self, doc: str | None, name: str, key: str, entry: _Entry) -> None:
        with self._lock:
            self._cache[key] = entry
            versions = self._versions.setdefault((doc, name), [])
            versions.append(key)
            while len(versions) > KERNEL_VERSIONS_KEPT:
                self._cache.pop(versions.pop(0), None)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)

    @staticmethod
    def _check(module: Module, kernel: Kernel, codes: list[str], target: str | None = None) -> tuple[list[Finding], list[str]]:
        out: list[Finding] = []
        errors: list[str] = []
        for code in codes:
            rule_module = RULE_MODULES[code]
            ctx = KernelContext(module, kernel, rule_module.RULE, target)
            try:
                seen = set()
                for f in rule_module.check(ctx):
                    key = (f.code, f.range, f.message)
                    if key not in seen:
                        seen.add(key)
                        out.append(f)
            except Exception as exc:  # noqa: BLE001 - a rule bug must not take the analysis down
                errors.append(f"{code} failed on {kernel.name}: {type(exc).__name__}: {exc}")
        return per_line(out), errors


_default = Analyzer()


def analyze(text: str, path: str | None = None, select=None, ignore=None, target: str | None = None) -> AnalysisResult:
    """Analyze with a process-wide analyzer (and its cache)."""
    return _default.analyze(text, path=path, select=select, ignore=ignore, target=target)
